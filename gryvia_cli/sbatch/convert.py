"""One entry point for the whole import: parse, check, size, map, report (no cluster access).

`gryvia sbatch convert`, `gryvia sbatch check` and `gryvia submit --sbatch` all call
`convert_script` (or `convert_file`) and use `Conversion.jobs` and `Conversion.report`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gryvia_cli.sbatch import policy
from gryvia_cli.sbatch.body import CommandUse, scan_body
from gryvia_cli.sbatch.mapping import ImportPlan, build_jobs, build_runtime, plan_import
from gryvia_cli.sbatch.model import ImportSettings, Issue, ParsedScript, Severity
from gryvia_cli.sbatch.parser import parse_script
from gryvia_cli.sbatch.report import build_report
from gryvia_cli.sbatch.resources import Resources, resolve


@dataclass(frozen=True)
class Conversion:
    """The result of importing one script: manifests (empty on any error) and the report.

    `runtime` is the ConfigMap the jobs read the script and the in-pod runtime from (None on
    errors): create it before the jobs, then make them its owners (`launcher.runtime_owners`).
    """

    parsed: ParsedScript
    resources: Resources | None
    plan: ImportPlan | None
    commands: tuple[CommandUse, ...]
    issues: tuple[Issue, ...]
    jobs: tuple[dict[str, Any], ...]
    report: dict[str, Any]
    runtime: dict[str, Any] | None = None

    @property
    def documents(self) -> list[dict[str, Any]]:
        """Every object to create, in order: the runtime ConfigMap, then the jobs."""
        return ([self.runtime] if self.runtime else []) + [dict(job) for job in self.jobs]

    @property
    def ok(self) -> bool:
        """True when the script imports (no error finding)."""
        return not any(issue.severity is Severity.ERROR for issue in self.issues)


def convert_script(
    data: bytes | str,
    filename: str,
    *,
    image: str | None = None,
    namespace: str | None = None,
    submission_id: str | None = None,
    require_image: bool = True,
    settings: ImportSettings | None = None,
    base_name: str | None = None,
    name_suffix: str = "",
) -> Conversion:
    """Import a batch script's bytes named `filename` (its base name is the default job name).

    `image` plays `--image` (it wins over `#SBATCH --container-image`); without either the
    import fails unless `require_image` is False (then `spec.image` is empty, for `check`).
    `submission_id` seeds SLURM_ARRAY_JOB_ID so that two submissions differ; pass something
    unique per submission (the caller owns clocks and randomness). `settings` holds the
    site's MaxArraySize and GPUs per node (`ImportSettings`). `base_name` replaces the
    Kubernetes name (not SLURM_JOB_NAME) and `name_suffix` is appended to it (see
    `mapping.plan_import`).
    """
    parsed = parse_script(data, filename)
    issues = list(parsed.issues)
    resources: Resources | None = None
    plan: ImportPlan | None = None
    commands: list[CommandUse] = []
    if parsed.text:
        issues += policy.classify(parsed.directives)
        resources, found = resolve(parsed, settings)
        issues += found
        commands, found = scan_body(parsed.text, parsed.first_command_line)
        issues += found
        if resources is not None:
            plan, found = plan_import(
                parsed,
                resources,
                image=image,
                require_image=require_image,
                base_name=base_name,
                name_suffix=name_suffix,
                settings=settings,
                namespace=namespace,
            )
            issues += found
    failed = any(issue.severity is Severity.ERROR for issue in issues)
    jobs: list[dict[str, Any]] = []
    runtime: dict[str, Any] | None = None
    if not failed and plan is not None:
        jobs = build_jobs(plan, parsed, namespace=namespace, submission_id=submission_id)
        runtime = build_runtime(plan, parsed, namespace=namespace)
    issues.sort(key=lambda issue: (issue.line is None, issue.line or 0))
    report = build_report(parsed, resources, plan, commands, issues, jobs)
    return Conversion(
        parsed, resources, plan, tuple(commands), tuple(issues), tuple(jobs), report, runtime
    )


def convert_file(
    path: Path,
    *,
    image: str | None = None,
    namespace: str | None = None,
    submission_id: str | None = None,
    require_image: bool = True,
    settings: ImportSettings | None = None,
    base_name: str | None = None,
    name_suffix: str = "",
) -> Conversion:
    """`convert_script` on a file's bytes; the file name is the default job name."""
    return convert_script(
        path.read_bytes(),
        str(path),
        image=image,
        namespace=namespace,
        submission_id=submission_id,
        require_image=require_image,
        settings=settings,
        base_name=base_name,
        name_suffix=name_suffix,
    )
