"""TooSmall: the notice a view shows over itself while the terminal is smaller than the
console can draw (`MIN_WIDTH` x `MIN_HEIGHT`), with the size it has and the size it needs.

The view keeps its widgets, focus and keys underneath (`q` still quits, `?` still helps);
the notice lies over them on its own layer and goes as soon as the terminal is large enough.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.widgets import Static

MIN_WIDTH = 60
"""Narrowest terminal the views are drawn for: the top bar's view names and the Jobs table's
NAME, PHASE and AGE columns."""
MIN_HEIGHT = 12
"""Shortest terminal the views are drawn for: top bar, a table header, a few rows, status
line and footer."""


def too_small(size: Size) -> bool:
    """True when a terminal of `size` is narrower or shorter than the console's minimum."""
    return size.width < MIN_WIDTH or size.height < MIN_HEIGHT


def notice(size: Size) -> str:
    """The words shown for a terminal of `size`."""
    return (
        f"Terminal too small: {size.width}x{size.height}. "
        f"The console needs at least {MIN_WIDTH}x{MIN_HEIGHT}: "
        "enlarge the window (or zoom out). q quits."
    )


class TooSmall(Static):
    """The notice; the view shows it (class `-too-small` on the screen) while `too_small`."""

    def __init__(self) -> None:
        super().__init__("", markup=False, id="too-small")

    def show_for(self, size: Size) -> None:
        """Say what a terminal of `size` lacks (shown only while it is too small)."""
        self.update(notice(size) if too_small(size) else "")
