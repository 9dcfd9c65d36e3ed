"""The registry's spec of inference services (GryviaInferenceService): polled while the view
is shown; rows and details are those of `gryvia serve list -o wide` and `serve get`
(gryvia_cli/core/inference.py)."""

from __future__ import annotations

from typing import Any

from gryvia_cli.core.inference import serve_details, serve_wide_row
from gryvia_cli.tui.kind_policies import POLL_SECONDS, age_value
from gryvia_cli.tui.registry import (
    Ctx,
    ObjectRef,
    ViewSpec,
    model_sections,
    poll_objects,
    register,
    row_cells,
    rows_by_name,
)
from gryvia_cli.tui.widgets.rowtable import Cell, Column
from gryvia_operator.api.inference import GryviaInferenceService

PHASE_MARKERS = {"Ready": "ok", "NotReady": "warn", "Pending": "info", "Invalid": "error"}
"""Marker of a service's phase cell."""


def service_cells(isvc: GryviaInferenceService, ctx: Ctx) -> list[Cell]:
    """NAMESPACE, then the cells of `gryvia serve list -o wide`; PHASE marked."""
    row = [isvc.namespace, *serve_wide_row(isvc, ctx.now)]
    return row_cells(row, {2: PHASE_MARKERS.get(str(row[2]), "")})


def _rows(ctx: Ctx) -> dict[str, Any]:
    return rows_by_name(GryviaInferenceService, ctx.polled)


def _search(isvc: GryviaInferenceService) -> str:
    phase = (isvc.status.phase if isvc.status else None) or ""
    return f"{isvc.namespace} {isvc.name} {phase} {isvc.spec.image}".lower()


SERVICES = register(
    ViewSpec(
        name="inference",
        title="Inference services",
        columns=(
            Column("namespace", "NAMESPACE", 14, 3),
            Column("name", "SERVICE", 16, 0, flex=True, max_width=32),
            Column("phase", "PHASE", 9, 0),
            Column("ready", "READY", 6, 0, justify="right"),
            Column("version", "VERSION", 10, 1),
            Column("created", "AGE", 5, 2),
            Column("url", "URL", 28, 4),
            Column("canary", "CANARY", 12, 3),
            Column("message", "MESSAGE", 24, 5),
        ),
        rows=_rows,
        cells=service_cells,
        search=_search,
        ref=lambda s: ObjectRef("inferenceservices", s.namespace, s.name),
        poll=poll_objects("inferenceservices"),
        poll_every=POLL_SECONDS,
        sort_values={"created": age_value},
        sections=model_sections(
            GryviaInferenceService, "Inference service", lambda s, ctx: serve_details(s)
        ),
        empty="No GryviaInferenceServices.",
        noun="inference service",
        placeholder="filter: namespace, service, phase or image",
    ),
    "inferenceservices",
)
