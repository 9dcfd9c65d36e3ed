"""The registry's spec of model registries (GryviaModelRegistry): polled while the view is
shown; rows and details are those of `gryvia model list -o wide` and `model get`
(gryvia_cli/core/modelregistries.py)."""

from __future__ import annotations

from gryvia_cli.core.modelregistries import MODEL_WIDE_COLUMNS, model_details, model_wide_row
from gryvia_cli.tui.columns import header_columns
from gryvia_cli.tui.polledview import polled_view
from gryvia_cli.tui.registry import (
    Ctx,
    row_cells,
)
from gryvia_cli.tui.widgets.rowtable import Cell
from gryvia_operator.api.modelregistry import GryviaModelRegistry

PHASE_MARKERS = {
    "Ready": "ok",
    "RollingOut": "info",
    "NoProduction": "",
    "Blocked": "warn",
    "Invalid": "error",
}
"""Marker of a registry's phase cell."""


def model_cells(reg: GryviaModelRegistry, ctx: Ctx) -> list[Cell]:
    """NAMESPACE, then the cells of `gryvia model list -o wide` without SERVICE (in the
    details; a list view has at most 10 sortable columns); PHASE marked."""
    wide = model_wide_row(reg, ctx.now)
    row = [reg.namespace, *wide[:7], *wide[8:]]
    return row_cells(row, {5: PHASE_MARKERS.get(str(row[5]), "")})


def _search(reg: GryviaModelRegistry) -> str:
    phase = (reg.status.phase if reg.status else None) or ""
    return f"{reg.namespace} {reg.name} {reg.spec.model_name} {phase}".lower()


MODELS = polled_view(
    "modelregistries",
    GryviaModelRegistry,
    title="Model registries",
    columns=header_columns(
        ("NAMESPACE", *(h for h in MODEL_WIDE_COLUMNS if h != "SERVICE")),
        "14:3 16:0*32 16:2 10:0 8:1 12:0 8:4> 5:2 8:4 24:5",
    ),
    cells=model_cells,
    search=_search,
    placeholder="filter: namespace, name, model or phase",
    details=lambda m, ctx: model_details(m),
)
