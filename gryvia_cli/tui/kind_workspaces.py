"""The registry's Workspaces spec (`:workspaces`): every GryviaWorkspace with its phase,
GPUs, timeouts and why it stopped, polled while the view is shown; rows and details are the
ones `gryvia workspace list -o wide` and `gryvia workspace get` print
(gryvia_cli/core/workspaces.py)."""

from __future__ import annotations

from gryvia_cli.core.workspaces import phase_of, workspace_details, workspace_wide_row
from gryvia_cli.tui.polledview import polled_view
from gryvia_cli.tui.registry import (
    Ctx,
    row_cells,
)
from gryvia_cli.tui.widgets.rowtable import Cell, Column
from gryvia_operator.api.workspace import GryviaWorkspace

POLL_SECONDS = 5.0
"""How often a shown Workspaces view re-reads the kind (phases change within seconds)."""
PHASE_MARKERS = {"Running": "ok", "Stopped": "dim", "Pending": "info"}
"""Marker of PHASE; Starting and Stopping are warnings (the operator has not caught up)."""


def workspace_cells(ws: GryviaWorkspace, ctx: Ctx) -> list[Cell]:
    """NAMESPACE, then the cells of `gryvia workspace list -o wide`; PHASE marked by phase."""
    row = [ws.namespace, *workspace_wide_row(ws, ctx.now)]
    return row_cells(row, {2: PHASE_MARKERS.get(phase_of(ws), "warn")})


def _search(ws: GryviaWorkspace) -> str:
    reason = (ws.status.stop_reason if ws.status else None) or ""
    return f"{ws.namespace} {ws.name} {phase_of(ws)} {reason} {ws.spec.image}".lower()


WORKSPACES = polled_view(
    "workspaces",
    GryviaWorkspace,
    title="Workspaces",
    columns=(
        Column("namespace", "NAMESPACE", 14, 3),
        Column("name", "WORKSPACE", 16, 0),
        Column("phase", "PHASE", 9, 0),
        Column("gpus", "GPUS", 8, 1),
        Column("idle", "IDLE", 6, 2, justify="right"),
        Column("lifetime", "LIFETIME", 8, 2, justify="right"),
        Column("reason", "REASON", 11, 1),
        Column("age", "AGE", 5, 2, justify="right"),
        Column("image", "IMAGE", 20, 4, flex=True, max_width=48),
        Column("pod", "POD", 14, 5),
        Column("runs", "RUNS", 4, 5, justify="right"),
        Column("activity", "LAST ACTIVITY", 13, 3),
    ),
    cells=workspace_cells,
    search=_search,
    placeholder="filter: namespace, workspace, phase, reason or image",
    details=lambda w, ctx: workspace_details(w, ctx.now),
    sort_values={},
)
