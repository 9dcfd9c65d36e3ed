"""The registry's spec of datasets (GryviaDataset, `:datasets`): polled while the view is
shown; rows and details are those of `gryvia dataset list -o wide` and the detail lines of
gryvia_cli/core/datasets.py, so PROGRESS shows the staging copy's progress text."""

from __future__ import annotations

from gryvia_cli.core.datasets import DATASET_WIDE_COLUMNS, dataset_details, dataset_wide_row
from gryvia_cli.tui.columns import header_columns
from gryvia_cli.tui.polledview import age_value, polled_view
from gryvia_cli.tui.registry import Ctx, row_cells
from gryvia_cli.tui.widgets.rowtable import Cell
from gryvia_operator.api.dataset import GryviaDataset

PHASE_MARKERS = {
    "Ready": "ok",
    "Staging": "info",
    "Pending": "warn",
    "Failed": "error",
    "Invalid": "error",
}
"""Marker of the PHASE cell."""
_PHASE, _PROGRESS = DATASET_WIDE_COLUMNS.index("PHASE"), DATASET_WIDE_COLUMNS.index("PROGRESS")


def dataset_cells(dataset: GryviaDataset, ctx: Ctx) -> list[Cell]:
    """The cells of `gryvia dataset list -o wide`; PHASE marked by `PHASE_MARKERS`, PROGRESS
    marked while a check or copy runs and dim otherwise."""
    row = dataset_wide_row(dataset, ctx.now)
    running = row[_PROGRESS] != "-"
    return row_cells(
        row,
        {_PHASE: PHASE_MARKERS.get(str(row[_PHASE]), ""), _PROGRESS: "info" if running else "dim"},
    )


def _size(dataset: GryviaDataset) -> int | None:
    """Sort value of SIZE: the staged bytes (None before the first version)."""
    return dataset.status.size_bytes if dataset.status is not None else None


def _search(dataset: GryviaDataset) -> str:
    status = dataset.status
    phase = (status.phase if status is not None else None) or ""
    spec = dataset.spec
    return f"{dataset.name} {spec.source.url} {spec.cache.storage} {phase}".lower()


DATASETS = polled_view(
    "datasets",
    GryviaDataset,
    title="Datasets",
    columns=header_columns(
        DATASET_WIDE_COLUMNS,
        "16:0 24:2 10:3 8:0 12:3 9:1> 6:2> 30:0*70 5:2 14:4 20:5 17:4 24:5",
        labels={"NAME": "DATASET"},
    ),
    cells=dataset_cells,
    search=_search,
    placeholder="filter: dataset, source, storage or phase",
    details=lambda d, ctx: dataset_details(d, ctx.now),
    sort_values={"created": age_value, "size": _size},
)
