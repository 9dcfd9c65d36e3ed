"""The registry's Workspaces spec (`:workspaces`): every GryviaWorkspace with its phase,
GPUs, timeouts and why it stopped, polled while the view is shown; rows and details are the
ones `gryvia workspace list -o wide` and `gryvia workspace get` print
(gryvia_cli/core/workspaces.py)."""

from __future__ import annotations

from gryvia_cli.core.workspaces import (
    WORKSPACE_WIDE_COLUMNS,
    phase_of,
    workspace_details,
    workspace_wide_row,
)
from gryvia_cli.tui.columns import header_columns
from gryvia_cli.tui.polledview import polled_view
from gryvia_cli.tui.registry import (
    Ctx,
    row_cells,
)
from gryvia_cli.tui.widgets.rowtable import Cell
from gryvia_operator.api.workspace import GryviaWorkspace

POLL_SECONDS = 5.0
"""How often a shown Workspaces view re-reads the kind (phases change within seconds)."""
PHASE_MARKERS = {"Running": "ok", "Stopped": "dim", "Pending": "info"}
"""Marker of PHASE; Starting and Stopping are warnings (the operator has not caught up)."""
_LABELS = {"NAME": "WORKSPACE", "IDLE-TIMEOUT": "IDLE", "MAX-LIFETIME": "LIFETIME"}
_KEYS = {
    "IDLE-TIMEOUT": "idle",
    "MAX-LIFETIME": "lifetime",
    "AGE": "age",
    "LAST-ACTIVITY": "activity",
}
"""The console's shorter words for the CLI's headers, and the column keys it has always had."""


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
    columns=header_columns(
        ("NAMESPACE", *WORKSPACE_WIDE_COLUMNS),
        "14:3 16:0 9:0 8:1 6:2> 8:2> 11:1 5:2> 20:4*48 14:5 4:5> 13:3",
        labels=_LABELS,
        keys=_KEYS,
    ),
    cells=workspace_cells,
    search=_search,
    placeholder="filter: namespace, workspace, phase, reason or image",
    details=lambda w, ctx: workspace_details(w, ctx.now),
    sort_values={},
)
