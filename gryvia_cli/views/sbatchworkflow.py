"""Several Slurm scripts as one GryviaWorkflow: print the import (`gryvia sbatch convert a b`)
and create it (`gryvia sbatch submit a b`): the runtime ConfigMaps first, then the workflow,
which is then made the ConfigMaps' owner (deleting the workflow deletes them)."""

from __future__ import annotations

from typing import Any

from gryvia_cli.cli.options import names_of
from gryvia_cli.cli.session import Session
from gryvia_cli.errors import GryviaError, InvalidInputError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    failure,
    info,
    render_data,
    render_documents,
    render_names,
    render_table,
    success,
)
from gryvia_cli.sbatch.report import render_text
from gryvia_cli.sbatch.workflow import WorkflowImport

STEP_COLUMNS = ("STEP", "SCRIPT", "AFTER", "CONDITION", "GPUS", "IMAGE")


def step_rows(imported: WorkflowImport) -> list[list[Any]]:
    """STEP, SCRIPT, AFTER (dependsOn), CONDITION, GPUS (per pod x pods), IMAGE per step."""
    rows: list[list[Any]] = []
    steps = (imported.workflow or {}).get("spec", {}).get("steps", [])
    for step, report in zip(steps, imported.reports, strict=False):
        spec = step["template"]
        pods = ((spec.get("distributed") or {}).get("nodes")) or 1
        gpus = f"{spec.get('gpus', 0)}" + (f"x{pods}" if pods > 1 else "")
        rows.append(
            [
                step["name"],
                report["script"],
                ",".join(step.get("dependsOn") or []) or "-",
                step.get("condition", "-") if step.get("dependsOn") else "-",
                gpus,
                spec.get("image") or "-",
            ]
        )
    return rows


def report_lines(imported: WorkflowImport) -> list[str]:
    """Each script's report lines, then the workflow's own findings."""
    lines: list[str] = []
    for report in imported.reports:
        lines += render_text(report)
    lines += [f"✗ error: {issue.render()}" for issue in imported.issues]
    if imported.ok:
        count = len((imported.workflow or {})["spec"]["steps"])
        lines.append(f"✓ workflow {imported.name}: {count} steps")
    else:
        lines.append(f"✗ workflow {imported.name}: not imported")
    return lines


def print_workflow_import(imported: WorkflowImport, fmt: OutputFormat) -> None:
    """stdout: the documents (yaml), {runtimes, workflow, reports} (json), names (name) or a
    row per step (table, wide); stderr: the reports."""
    if fmt is OutputFormat.json:
        render_data(
            {
                "runtimes": list(imported.runtimes),
                "workflow": imported.workflow,
                "reports": list(imported.reports),
            },
            fmt,
        )
    elif fmt is OutputFormat.yaml:
        render_documents(imported.documents)
    elif fmt is OutputFormat.name:
        workflow = [imported.workflow] if imported.workflow else []
        render_names(
            names_of(r.CONFIG_MAP, list(imported.runtimes)) + names_of(r.WORKFLOW, workflow)
        )
    elif imported.ok:
        render_table(STEP_COLUMNS, step_rows(imported))
    for line in report_lines(imported):
        info(line)


def submit_workflow_import(
    state: Session, imported: WorkflowImport, output: Any, *, dry_run: bool = False
) -> dict[str, Any] | None:
    """Create the import's ConfigMaps and workflow in `imported.namespace`, then make the
    workflow the ConfigMaps' owner; on a failure delete what this call created. Prints the
    reports to stderr. Raises InvalidInputError (nothing created) when the import failed,
    and the access layer's errors (ConflictError when a name is taken)."""
    from gryvia_cli.sbatch.launcher import runtime_owners

    for line in report_lines(imported):
        info(line)
    if not imported.ok or imported.workflow is None:
        raise InvalidInputError("the scripts cannot be imported together; nothing was submitted")
    namespace = str(imported.namespace or "default")
    workflow = imported.workflow
    fmt = state.fmt(output, OutputFormat.name)
    if dry_run:
        if fmt in MACHINE_FORMATS:
            render_data(workflow, fmt)
        else:
            render_table(STEP_COLUMNS, step_rows(imported))
        info(f"dry run: workflow {namespace}/{imported.name} not created")
        return None
    access = state.access()
    made: list[str] = []
    try:
        for runtime in imported.runtimes:
            access.create(r.CONFIG_MAP, dict(runtime), namespace)
            made.append(str(runtime["metadata"]["name"]))
        obj = access.create(r.WORKFLOW, dict(workflow), namespace)
    except GryviaError:
        for name in made:
            try:
                access.delete(r.CONFIG_MAP, name, namespace)
            except GryviaError as exc:
                failure(f"could not delete ConfigMap {namespace}/{name}: {exc}")
        raise
    for name in made:
        access.merge_patch(r.CONFIG_MAP, name, namespace, runtime_owners([obj]))
    success(
        f"workflow {namespace}/{imported.name} submitted; follow it with "
        f"`gryvia workflow get {imported.name} -n {namespace}`"
    )
    if fmt in MACHINE_FORMATS:
        render_data(obj, fmt)
    else:
        render_names([f"{r.WORKFLOW.qualified}/{imported.name}"])
    return obj
