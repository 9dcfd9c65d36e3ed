"""A heterogeneous job (`#SBATCH hetjob`, `packjob`) as one GryviaWorkflow of two steps that
start together (pure, no cluster access).

sbatch(1), HETEROGENEOUS JOB SUPPORT: "Each component of a heterogeneous job is separated
by a line `#SBATCH hetjob`"; the batch script runs on the first node of component 0; a step
runs on component 0 unless `srun --het-group=N` names another. Options such as `--job-name`,
`--time`, `--account`, `--qos`, `--partition`, `--output`, `--export` and `--mem` apply to
later components too (heterogeneous_jobs.html, "propagated options").

The common case Gryvia imports, a CPU launcher plus GPU workers:

* component 0 (no GPUs) is step `launcher`: the batch script with its own resources; the
  `srun --het-group=1 ...` line is replaced by a `:` comment (the workers start with the
  launcher, not when the line is reached), and `--het-group=0` is dropped from other sruns;
* component 1 is step `workers`: its own nodes, tasks and GPUs plus the propagated options
  of component 0, running `srun <options> <command>` of that line over its pods;
* neither step depends on the other, so a run creates both jobs at once; the run ends when
  both end. Both steps get `SLURM_HET_SIZE=2`, `SLURM_JOB_NODELIST_HET_GROUP_<n>` and
  `SLURM_JOB_NUM_NODES_HET_GROUP_<n>`/`SLURM_NNODES_HET_GROUP_<n>` (the pods' host names),
  as Slurm sets them for each component. `SLURM_JOB_ID` is each step job's own; Slurm's
  `SLURM_HET_JOB_ID` / `SLURM_JOB_ID_HET_GROUP_<n>` are not set (the ids are made in the pods).

Refused, with the reason and the fix: more than two components, GPUs in component 0, no
`srun --het-group=1` line (component 1 would run nothing) or more than one, an srun whose
`--het-group` spans components (`0,1`, `0-1`) or names a missing one, an srun line that is
not a plain command (`srun --het-group=1 CMD [&]` on a line of its own), and `--array`
(Slurm has no arrays of heterogeneous jobs).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any, Final

from gryvia_cli.sbatch.model import Directive, ImportSettings, Issue, error
from gryvia_cli.sbatch.parser import _HET, LEGACY_MAGIC, MAGIC, getopt, scan_lines
from gryvia_cli.sbatch.workflow import STEP_HOST_NAME, WorkflowImport, convert_workflow
from gryvia_operator.api.names import service_name

STEPS: Final = ("launcher", "workers")
PROPAGATED: Final = frozenset(
    {"job-name", "time", "account", "qos", "partition", "output", "error", "export",
     "container-image", "chdir", "open-mode"}
)  # fmt: skip
"""Component 0's options that later components inherit (heterogeneous_jobs.html)."""
_MEMORY: Final = ("mem", "mem-per-cpu", "mem-per-gpu")
_GPU_KEYS: Final = ("gpus", "gpus-per-node", "gpus-per-task", "gpus-per-socket")
_HET_OPTION: Final = re.compile(r"(?<!\S)--(?:het|pack)-group(?:=(\S+)|\s+(\S+))")
_SRUN: Final = re.compile(r"^(?P<indent>\s*)srun\s(?P<rest>.*?)(?P<bg>\s*&)?\s*$")
_OPERATOR_CHARS: Final = frozenset("();<>|&`")
_WHY = "sbatch(1) HETEROGENEOUS JOB SUPPORT"


def is_hetjob(data: bytes | str) -> bool:
    """True when the script's directive block has a `hetjob`/`packjob` separator."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    components, _, _ = scan_lines(text.split("\n"))
    return len(components) > 1


def _refuse(code: str, message: str, line: int | None, directive: str = "hetjob") -> Issue:
    return error(code, f"{message} ({_WHY})", line, directive)


def _render(directive: Directive) -> str:
    if directive.value is None:
        return f"#SBATCH {directive.directive}"
    return f"#SBATCH {directive.directive}={shlex.quote(directive.value)}"


def _uncomment(line: str) -> str:
    """`line` without a trailing shell comment (`#` after a blank, outside quotes)."""
    quote = ""
    for pos, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (pos == 0 or line[pos - 1] in " \t"):
            return line[:pos].rstrip()
    return line


def _plain(words: str) -> bool:
    """True when `words` hold no shell operator outside quotes (one simple command) and no
    command substitution the launcher's shell would expand (the workers' shell would)."""
    lexer = shlex.shlex(words, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return False
    if any(token and set(token) <= _OPERATOR_CHARS for token in tokens):
        return False
    quoted = False  # `$(...)` and backquotes outside single quotes run on the batch host
    for pos, char in enumerate(words):
        if char == "'":
            quoted = not quoted
        elif not quoted and (char == "`" or words.startswith("$(", pos)):
            return False
    return True


def _het_groups(value: str) -> list[int] | None:
    groups: list[int] = []
    for part in value.split(","):
        first, _, last = part.partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            return None
        groups += range(int(first), int(last or first) + 1)
    return sorted(set(groups))


def split_hetjob(text: str, filename: str) -> tuple[tuple[str, str] | None, list[Issue]]:
    """(launcher script, workers script) from a two-component hetjob script, or refusals."""
    lines = text.split("\n")
    components, first_command, _ = scan_lines(lines)
    name = PurePosixPath(filename).name
    separators = [
        n for n, line in enumerate(lines, start=1)
        if line.startswith((MAGIC, LEGACY_MAGIC)) and _HET.search(line)
        and (first_command is None or n < first_command)
    ]  # fmt: skip
    if len(components) > 2:
        return None, [
            _refuse(
                "hetjob-components",
                f"{name} has {len(components)} heterogeneous components; Gryvia imports two "
                "(a CPU launcher, then GPU workers after one `#SBATCH hetjob`): merge the "
                "worker components or submit them as separate jobs",
                separators[1],
            )
        ]
    parsed = [getopt(words)[0] for words in components]
    issues: list[Issue] = []
    gpu = [
        d for d in parsed[0]
        if d.key in _GPU_KEYS or (d.key == "gres" and "gpu" in (d.value or ""))
    ]  # fmt: skip
    if gpu:
        issues.append(
            _refuse(
                "hetjob-gpu-launcher",
                f"component 0 (the launcher, which runs the batch script) asks for GPUs with "
                f"{gpu[0].show()}; Gryvia imports a CPU launcher plus GPU workers: move the "
                "GPUs to the component after `#SBATCH hetjob`, or submit each component as "
                "its own job",
                gpu[0].line,
                gpu[0].directive,
            )
        )
    array = next((d for c in parsed for d in c if d.key == "array"), None)
    if array is not None:
        issues.append(
            _refuse(
                "hetjob-array",
                f"{array.show()}: Slurm has no job arrays of heterogeneous jobs and sbatch "
                "refuses one; remove --array, or drop `#SBATCH hetjob` and submit an array "
                "of one component",
                array.line,
                "--array",
            )
        )
    body_start = first_command or len(lines) + 1
    launcher = list(lines)
    worker_lines: list[tuple[int, str]] = []
    for number in range(body_start, len(lines) + 1):
        line = lines[number - 1]
        option = _HET_OPTION.search(line)
        if option is None or not re.search(r"(?<!\S)srun\s", line):
            continue
        value = option.group(1) or option.group(2)
        groups = _het_groups(value)
        if len(_HET_OPTION.findall(line)) > 1:  # `srun --het-group=0 a : --het-group=1 b`
            value = ",".join(m.group(1) or m.group(2) for m in _HET_OPTION.finditer(line))
            groups = _het_groups(value) or [0, 1]
        if groups is None or len(groups) != 1 or groups[0] > 1:
            issues.append(
                _refuse(
                    "hetjob-het-group",
                    f"srun --het-group={value} "
                    + (
                        "spans several components (one step over pods of two jobs); "
                        if groups and len(groups) > 1
                        else "names no component (0 or 1); "
                    )
                    + "write --het-group=0 (the launcher) or --het-group=1 (the workers), "
                    "one srun per component",
                    number,
                    "--het-group",
                )
            )
            continue
        stripped = line[: option.start()] + line[option.end() :]
        if groups[0] == 0:
            launcher[number - 1] = stripped
            continue
        match = _SRUN.match(_uncomment(stripped))
        if match is None or not _plain(match.group("rest")):
            issues.append(
                _refuse(
                    "hetjob-srun-line",
                    f"{line.strip()!r} is not a plain srun line; write "
                    "`srun --het-group=1 COMMAND ARGS &` on a line of its own, without pipes, "
                    "redirections or $(...) (its command is what the workers run, in their "
                    "own shell)",
                    number,
                    "--het-group",
                )
            )
            continue
        worker_lines.append((number, f"srun {match.group('rest').strip()}"))
        launcher[number - 1] = (
            f"{match.group('indent')}: # hetjob component 1 runs in workflow step workers"
        )
    if not worker_lines and not issues:
        issues.append(
            _refuse(
                "hetjob-no-workers",
                "component 1 runs nothing: in Slurm it only runs what `srun --het-group=1 "
                "COMMAND` starts; add that line to the script",
                separators[0],
            )
        )
    elif len(worker_lines) > 1:
        issues.append(
            _refuse(
                "hetjob-srun-line",
                f"lines {', '.join(str(n) for n, _ in worker_lines)}: several srun "
                "--het-group=1 lines; the workers step runs one command: keep one",
                worker_lines[1][0],
                "--het-group",
            )
        )
    if issues:
        return None, issues
    for number in separators:  # component 1's lines are the workers' only
        launcher[number - 1] = "## hetjob: the lines below are component 1 (workers step)"
    for directive in parsed[1]:
        if directive.line not in separators:
            launcher[directive.line - 1] = "## " + lines[directive.line - 1]
    mine = {d.key for d in parsed[1]}
    inherited = [
        d for d in parsed[0]
        if d.key in PROPAGATED or (d.key in _MEMORY and not mine & set(_MEMORY))
    ]  # fmt: skip
    job_name = next((d.value for d in reversed(parsed[0]) if d.key == "job-name"), None)
    workers = [lines[0], f"#SBATCH --job-name={shlex.quote(job_name or name)}"]
    workers += [_render(d) for d in [*inherited, *parsed[1]] if d.key != "job-name"]
    workers += ["", worker_lines[0][1], ""]
    return ("\n".join(launcher), "\n".join(workers)), []


def _hosts(step: str, nodes: int) -> str:
    host = STEP_HOST_NAME.replace("$(workflow.step)", step)
    return ",".join(f"{host}-{i}.{service_name(host)}" for i in range(nodes))


def _het_env(steps: list[dict[str, Any]]) -> list[dict[str, str]]:
    env: list[dict[str, str]] = [{"name": "SLURM_HET_SIZE", "value": str(len(steps))}]
    for n, step in enumerate(steps):
        nodes = ((step["template"].get("distributed") or {}).get("nodes")) or 1
        env += [
            {"name": f"SLURM_JOB_NODELIST_HET_GROUP_{n}", "value": _hosts(step["name"], nodes)},
            {"name": f"SLURM_JOB_NUM_NODES_HET_GROUP_{n}", "value": str(nodes)},
            {"name": f"SLURM_NNODES_HET_GROUP_{n}", "value": str(nodes)},
        ]
    return env


def convert_hetjob(
    data: bytes | str,
    filename: str,
    *,
    name: str | None = None,
    image: str | None = None,
    namespace: str | None = None,
    submission_id: str | None = None,
    settings: ImportSettings | None = None,
) -> WorkflowImport:
    """Import a two-component hetjob script as a GryviaWorkflow with steps `launcher` and
    `workers` that start together (module docstring); refusals are in `issues`."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    stem = PurePosixPath(filename).stem or "hetjob"
    split, issues = split_hetjob(text, filename)
    if split is None:
        return WorkflowImport(name or stem, namespace, (), (), tuple(issues))
    scripts: Sequence[tuple[str, str]] = [
        (split[0], filename),
        (split[1], f"{PurePosixPath(filename).name} (hetjob component 1)"),
    ]
    imported = convert_workflow(
        scripts, name=name, image=image, namespace=namespace, submission_id=submission_id,
        settings=settings, step_names_given=STEPS,
    )  # fmt: skip
    if imported.workflow is None:
        return imported
    steps = imported.workflow["spec"]["steps"]
    extra = _het_env(steps)
    for step in steps:
        names = {e["name"] for e in extra}
        kept = [e for e in step["template"].get("env") or [] if e.get("name") not in names]
        step["template"]["env"] = [*kept, *extra]
    return imported
