"""The registry's spec of workflows (GryviaWorkflow): polled while the view is shown; rows and
details are those of `gryvia workflow list -o wide` and `get` (gryvia_cli/core/workflows.py);
the detail view lists every run and the steps of the latest one."""

from __future__ import annotations

from gryvia_cli.core.workflows import WORKFLOW_WIDE_COLUMNS, workflow_details, workflow_wide_row
from gryvia_cli.tui.columns import header_columns
from gryvia_cli.tui.polledview import polled_view
from gryvia_cli.tui.registry import (
    Ctx,
    row_cells,
)
from gryvia_cli.tui.widgets.rowtable import Cell
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
    columns=header_columns(
        ("NAMESPACE", *WORKFLOW_WIDE_COLUMNS),
        "14:3 16:0*32 9:0 4:0> 5:1> 12:1 14:2 5:2 20:4 24:5",
        labels={"NAME": "WORKFLOW"},
    ),
    cells=workflow_cells,
    search=_search,
    placeholder="filter: namespace, workflow, phase or step",
    details=lambda w, ctx: workflow_details(w),
)
