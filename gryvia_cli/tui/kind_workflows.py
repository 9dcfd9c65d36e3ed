"""The registry's spec of workflows (GryviaWorkflow): polled while the view is shown; rows and
details are those of `gryvia workflow list -o wide` and `get` (gryvia_cli/core/workflows.py);
the detail view lists every run and the steps of the latest one."""

from __future__ import annotations

from gryvia_cli.core.workflows import workflow_details, workflow_wide_row
from gryvia_cli.tui.polledview import polled_view
from gryvia_cli.tui.registry import (
    Ctx,
    row_cells,
)
from gryvia_cli.tui.widgets.rowtable import Cell, Column
from gryvia_operator.api.workflow import GryviaWorkflow

PHASE_MARKERS = {
    "Succeeded": "ok",
    "Running": "info",
    "Failed": "error",
    "Invalid": "error",
    "Cancelled": "warn",
    "Waiting": "dim",
}
"""Marker of a workflow's phase cell."""


def workflow_cells(wf: GryviaWorkflow, ctx: Ctx) -> list[Cell]:
    """NAMESPACE, then the cells of `gryvia workflow list -o wide`; PHASE marked, FAILED-STEP
    an error when set."""
    row = [wf.namespace, *workflow_wide_row(wf, ctx.now)]
    return row_cells(
        row,
        {2: PHASE_MARKERS.get(str(row[2]), ""), 5: "dim" if row[5] == "-" else "error"},
    )


def _search(wf: GryviaWorkflow) -> str:
    steps = " ".join(s.name for s in wf.spec.steps)
    phase = (wf.status.phase if wf.status else None) or ""
    return f"{wf.namespace} {wf.name} {phase} {steps}".lower()


WORKFLOWS = polled_view(
    "workflows",
    GryviaWorkflow,
    title="Workflows",
    columns=(
        Column("namespace", "NAMESPACE", 14, 3),
        Column("name", "WORKFLOW", 16, 0, flex=True, max_width=32),
        Column("phase", "PHASE", 9, 0),
        Column("run", "RUN", 4, 0, justify="right"),
        Column("steps", "STEPS", 5, 1, justify="right"),
        Column("failed_step", "FAILED STEP", 12, 1),
        Column("schedule", "SCHEDULE", 14, 2),
        Column("created", "AGE", 5, 2),
        Column("next", "NEXT", 20, 4),
        Column("message", "MESSAGE", 24, 5),
    ),
    cells=workflow_cells,
    search=_search,
    placeholder="filter: namespace, workflow, phase or step",
    details=lambda w, ctx: workflow_details(w),
)
