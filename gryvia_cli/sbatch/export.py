"""`--export` as sbatch applies it (sbatch(1) --export): which variables of the submitting
shell reach the job. Pure: the shell's environment comes in as a mapping.

- `ALL` (also when the script gives no `--export`, Slurm's default) passes the shell's
  variables. A pod is not the submitting host, so Gryvia passes only the ones the script reads
  (`$NAME`, `${NAME...}`) and are set in the shell, minus `denied` (credentials, and variables
  of the submitting host or of Slurm and Kubernetes that would be wrong in the pod), and says
  which it passed and which it kept back;
- `NONE` passes none; a list (`NAME,NAME=value`) passes the values given and the named
  variables from the shell, with `ALL,` in front also the `ALL` set.

Without the shell's environment (`gryvia sbatch convert`) nothing is passed and a name given
without a value is warned about, as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from gryvia_cli.sbatch.model import Issue, ParsedScript, error, warning
from gryvia_cli.sbatch.values import BadValue, ExportSpec, parse_export

_READ: Final = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
DENIED_NAMES: Final = frozenset(
    {
        "HOME", "PATH", "PWD", "OLDPWD", "SHELL", "USER", "LOGNAME", "HOSTNAME", "TERM",
        "DISPLAY", "LANG", "TMPDIR", "KUBECONFIG", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX",
        "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "MASTER_ADDR", "MASTER_PORT", "RANK",
        "WORLD_SIZE", "LOCAL_RANK", "NODE_RANK",
    }
)  # fmt: skip
"""Variables of the submitting host, or set in the pod by Kubernetes, the runtime or PyTorch."""
_DENIED: Final = re.compile(
    r"^(SLURM_|SBATCH_|SRUN_|KUBERNETES_|GRYVIA_|SSH_|LD_|AWS_|AZURE_|GOOGLE_|GCP_|XDG_)"
    r"|(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|_KEY$|^KEY$|APIKEY|API_KEY)",
    re.IGNORECASE,
)
"""Prefixes of host, Slurm and cloud variables and words of credentials: never passed."""


def denied(name: str) -> bool:
    """Whether `name` is never passed from the submitting shell (`DENIED_NAMES`, `_DENIED`)."""
    return name in DENIED_NAMES or bool(_DENIED.search(name))


def export_spec(
    parsed: ParsedScript, shell: Mapping[str, str] | None
) -> tuple[ExportSpec | None, list[Issue]]:
    """The job's `--export` with the shell's variables it passes folded into `values`, and
    the findings. `shell` is the submitting shell's environment (None: not known)."""
    directive = parsed.last("export")
    line = directive.line if directive is not None else None
    spec = ExportSpec(True, {}, ())
    if directive is not None and directive.value is not None:
        try:
            spec = parse_export(directive.value)
        except BadValue as exc:
            return None, [error("invalid-export", f"{directive.show()}: {exc}", line, "--export")]
    given = directive is not None and directive.value is not None
    if shell is None:
        issues = [_unset(name, line, "which a pod does not have") for name in spec.inherited]
        return (spec if given else None), issues
    wanted = set(spec.inherited)
    reads = set(_READ.findall(parsed.text)) if spec.propagate_all else set()
    kept = sorted(n for n in reads - wanted if n in shell and denied(n))
    passing = sorted(n for n in (reads - set(kept)) | wanted if n in shell)
    passed = {n: shell[n] for n in passing if n not in spec.values}
    issues = [_unset(n, line, "where it is not set") for n in spec.inherited if n not in shell]
    if passed:
        issues.append(
            warning(
                "export-passed",
                f"--export={'ALL' if spec.propagate_all else 'NAMES'}: passes {len(passed)} "
                f"variable(s) of the submitting shell the job reads: {', '.join(passed)}",
                line,
                "--export",
            )
        )
    if kept:
        issues.append(
            warning(
                "export-kept-back",
                f"not passed from the submitting shell (credentials or variables of the host, "
                f"Slurm or Kubernetes): {', '.join(kept)}; give a value with "
                "--export=NAME=value, or mount a Secret",
                line,
                "--export",
            )
        )
    values = {**passed, **spec.values}
    if not values and not given:
        return None, issues
    return ExportSpec(spec.propagate_all, values, spec.inherited), issues


def _unset(name: str, line: int | None, why: str) -> Issue:
    return warning(
        "export-from-submit-shell",
        f"--export names {name} without a value: Slurm copies it from the submitting shell, "
        f"{why}; write {name}=value",
        line,
        "--export",
    )
