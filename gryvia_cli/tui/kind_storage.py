"""The registry's spec of storage backends (GryviaStorage, `:storage`): polled while the view is
shown; rows and details are those of `gryvia storage list -o wide` and `get -o table`
(gryvia_cli/core/storage.py): STATUS marked by phase, PROVISIONER by whether it answers."""

from __future__ import annotations

from decimal import Decimal

from gryvia_cli.core.storage import (
    PHASE_MARKERS,
    STORAGE_WIDE_COLUMNS,
    storage_details,
    storage_wide_row,
)
from gryvia_cli.tui.columns import header_columns
from gryvia_cli.tui.polledview import age_value, polled_view
from gryvia_cli.tui.registry import Ctx, row_cells
from gryvia_cli.tui.widgets.rowtable import Cell
from gryvia_operator.api.storage import GryviaStorage

PROVISIONER_MARKERS = {"answering": "ok", "not answering": "error", "unknown": "dim"}
"""Marker of the PROVISIONER cell."""
_PROVISIONER, _STATUS = (
    STORAGE_WIDE_COLUMNS.index("PROVISIONER"),
    STORAGE_WIDE_COLUMNS.index("STATUS"),
)


def storage_cells(storage: GryviaStorage, ctx: Ctx) -> list[Cell]:
    """The cells of `gryvia storage list -o wide`; PROVISIONER and STATUS marked."""
    row = storage_wide_row(storage, ctx.now)
    return row_cells(
        row,
        {
            _PROVISIONER: PROVISIONER_MARKERS.get(str(row[_PROVISIONER]), ""),
            _STATUS: PHASE_MARKERS.get(str(row[_STATUS]), "warn"),
        },
    )


def _quantity(value: object) -> Decimal | None:
    """A quantity cell's value for sorting (`512Ti` after `2Ti`); None when unset or unparsable."""
    from gryvia_operator.api.quantity import parse_quantity

    try:
        return parse_quantity(value) if isinstance(value, str | int) else None
    except ValueError:
        return None


def _status_of(storage: GryviaStorage, name: str) -> object:
    return getattr(storage.status, name, None) if storage.status is not None else None


SORT_VALUES = {
    "created": age_value,
    "capacity": lambda s: _quantity(s.spec.capacity),
    "used": lambda s: _quantity(_status_of(s, "used")),
    "free": lambda s: _quantity(_status_of(s, "free")),
    "claims": lambda s: _status_of(s, "claims"),
}
"""CAPACITY, USED and FREE sort by size, CLAIMS as a number, AGE by age."""


def _search(storage: GryviaStorage) -> str:
    status = storage.status
    phase = (status.phase if status is not None else None) or ""
    return f"{storage.name} {storage.spec.backend} {storage.class_name()} {phase}".lower()


STORAGES = polled_view(
    "storages",
    GryviaStorage,
    title="Storage backends",
    columns=header_columns(
        STORAGE_WIDE_COLUMNS,
        "16:0*32 10:1 14:2 9:3> 9:2> 9:2> 6:4> 13:1 9:0 4:5 16:4 5:3> 24:5",
        labels={"NAME": "STORAGE"},
    ),
    cells=storage_cells,
    search=_search,
    placeholder="filter: storage, backend, class or phase",
    details=lambda s, ctx: storage_details(s, ctx.now),
    sort_values=SORT_VALUES,
)
