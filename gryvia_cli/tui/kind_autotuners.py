"""The registry's spec of auto-tuners (GryviaAutoTuner): polled while the view is shown; rows
and details are those of `gryvia tune list -o wide` and `tune status` (gryvia_cli/core/
tuners.py); the detail view lists every trial with its state, value and parameters."""

from __future__ import annotations

from typing import Any

from gryvia_cli.core.autotuners import (
    TUNER_WIDE_COLUMNS,
    format_params,
    format_value,
    trials_of,
    tuner_details,
    tuner_wide_row,
)
from gryvia_cli.core.describe import Section
from gryvia_cli.tui.columns import header_columns
from gryvia_cli.tui.polledview import polled_view
from gryvia_cli.tui.registry import (
    Ctx,
    row_cells,
)
from gryvia_cli.tui.widgets.rowtable import Cell
from gryvia_operator.api.autotuner import GryviaAutoTuner

PHASE_MARKERS = {"Succeeded": "ok", "Running": "info", "Failed": "error", "Invalid": "error"}
"""Marker of a tuner's phase cell."""


def tuner_cells(tuner: GryviaAutoTuner, ctx: Ctx) -> list[Cell]:
    """NAMESPACE, then the cells of `gryvia tune list -o wide`; PHASE marked."""
    row = [tuner.namespace, *tuner_wide_row(tuner, ctx.now)]
    return row_cells(row, {2: PHASE_MARKERS.get(str(row[2]), "")})


def tuner_sections(raw: dict[str, Any], ctx: Ctx) -> list[Section]:
    """`Tuner` (what `gryvia tune status` shows) and `Trials` (one line per trial: state,
    last value, last step, parameters), or why the object does not validate."""
    try:
        tuner = GryviaAutoTuner.model_validate(raw)
    except ValueError as exc:
        return [Section("Tuner", [("Invalid", str(exc).splitlines()[0])])]
    trials = [
        (
            t.name,
            f"{t.state}  value {format_value(t.value)}  step "
            f"{'-' if t.step is None else t.step}  {format_params(t.parameters)}",
        )
        for t in trials_of(tuner)
    ]
    return [
        Section("Tuner", tuner_details(tuner)),
        Section("Trials", trials or [("-", "No trials yet.")]),
    ]


def _search(tuner: GryviaAutoTuner) -> str:
    phase = (tuner.status.phase if tuner.status else None) or ""
    best = tuner.status.best.name if tuner.status and tuner.status.best else ""
    return f"{tuner.namespace} {tuner.name} {phase} {tuner.spec.objective.name} {best}".lower()


TUNERS = polled_view(
    "autotuners",
    GryviaAutoTuner,
    title="Tuners",
    columns=header_columns(
        ("NAMESPACE", *TUNER_WIDE_COLUMNS),
        "14:3 16:0*32 9:0 6:0> 7:1> 14:1 8:0> 5:2 16:3 24:5",
        labels={"NAME": "TUNER"},
    ),
    cells=tuner_cells,
    search=_search,
    placeholder="filter: namespace, tuner, phase, objective or best trial",
    sections=tuner_sections,
)
