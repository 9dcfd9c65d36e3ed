"""Sorting of list views by any column (pure): the sort state, what a press does, the order.

A view keeps one `SortState` per table. Pressing a column's key sorts by it ascending;
pressing it again reverses (k9s style). Values come from the view's `value(column, key)`;
None sorts after every value (before them when reversed), ties by row key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class SortState:
    """Column key sorted by and the direction (`reverse` False: ascending ↑)."""

    column: str
    reverse: bool = False

    @property
    def arrow(self) -> str:
        """`↑` ascending, `↓` reversed, as the table header shows it."""
        return "↓" if self.reverse else "↑"

    @property
    def label(self) -> str:
        """`age↑`: the status line's words for it."""
        return f"{self.column}{self.arrow}"


def press(state: SortState, column: str) -> SortState:
    """The state after pressing the sort key of `column`: the same column reverses, another
    column sorts ascending."""
    if state.column == column:
        return replace(state, reverse=not state.reverse)
    return SortState(column)


def cycle(state: SortState, columns: Sequence[str]) -> SortState:
    """The state after `o`: the next of `columns` (the visible ones), direction kept; the
    first when the current column is not among them. Unchanged when `columns` is empty."""
    if not columns:
        return state
    index = columns.index(state.column) if state.column in columns else -1
    return replace(state, column=columns[(index + 1) % len(columns)])


def sortable(value: Any) -> tuple[int, Any]:
    """A key that puts None after every other value."""
    return (1, 0) if value is None else (0, value)


def ordered(
    keys: Sequence[str], value: Callable[[str], Hashable | None], state: SortState
) -> list[str]:
    """`keys` sorted by `value(key)` as `state` says; ties by key (same direction)."""
    values = {k: sortable(value(k)) for k in keys}
    return sorted(keys, key=lambda k: (values[k], k), reverse=state.reverse)


_NUMBER = re.compile(r"[$€£]?(-?\d[\d,]*(?:\.\d+)?)")


def text_value(text: str) -> tuple[int, float | str] | None:
    """The sort value of a cell's text: a leading number (`$1,200.50 / $5,000` -> 1200.5,
    `2/4` -> 2) by value, before any other text (by its lower case); None for "" and "-"."""
    text = text.strip()
    if text in ("", "-"):
        return None
    match = _NUMBER.match(text)
    if match:
        return (0, float(match.group(1).replace(",", "")))
    return (1, text.lower())
