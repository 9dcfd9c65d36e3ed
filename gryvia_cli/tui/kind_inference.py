"""The registry's spec of inference services (GryviaInferenceService): polled while the view
is shown; rows and details are those of `gryvia serve list -o wide` and `serve get`
(gryvia_cli/core/inference.py)."""

from __future__ import annotations

from gryvia_cli.core.inference import SERVE_WIDE_COLUMNS, serve_details, serve_wide_row
from gryvia_cli.tui.columns import header_columns
from gryvia_cli.tui.polledview import polled_view
from gryvia_cli.tui.registry import (
    Ctx,
    row_cells,
)
from gryvia_cli.tui.widgets.rowtable import Cell
from gryvia_operator.api.inference import GryviaInferenceService

PHASE_MARKERS = {"Ready": "ok", "NotReady": "warn", "Pending": "info", "Invalid": "error"}
"""Marker of a service's phase cell."""


def service_cells(isvc: GryviaInferenceService, ctx: Ctx) -> list[Cell]:
    """NAMESPACE, then the cells of `gryvia serve list -o wide`; PHASE marked."""
    row = [isvc.namespace, *serve_wide_row(isvc, ctx.now)]
    return row_cells(row, {2: PHASE_MARKERS.get(str(row[2]), "")})


def _search(isvc: GryviaInferenceService) -> str:
    phase = (isvc.status.phase if isvc.status else None) or ""
    return f"{isvc.namespace} {isvc.name} {phase} {isvc.spec.image}".lower()


SERVICES = polled_view(
    "inferenceservices",
    GryviaInferenceService,
    title="Inference services",
    columns=header_columns(
        ("NAMESPACE", *SERVE_WIDE_COLUMNS),
        "14:3 16:0*32 9:0 6:0> 10:1 5:2 28:4 12:3 24:5",
        labels={"NAME": "SERVICE"},
    ),
    cells=service_cells,
    search=_search,
    placeholder="filter: namespace, service, phase or image",
    details=lambda s, ctx: serve_details(s),
)
