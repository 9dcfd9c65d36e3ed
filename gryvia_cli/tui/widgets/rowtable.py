"""RowTable: a virtual table that renders only visible rows, for thousands of live rows.

The owner (a screen) gives the row order and a function returning a row's cells; the table
caches rendered lines per row and redraws only rows it is told changed. Columns drop out by
priority when the table is narrow. Cells carry a marker (ok, warn, error, ...) styled by the
`marker--*` component classes of the stylesheet; cursor and marks also show as glyphs, so the
table reads without colour. Cell text is user data: it is drawn as plain segments (never
markup) with control characters made visible (`core.plaintext.visible`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from rich.cells import cell_len
from rich.segment import Segment
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from gryvia_cli.core.plaintext import visible
from gryvia_cli.tui.bindings import TABLE, bindings

Cell = tuple[str, str]
"""(text, marker); marker "" for none, else ok, warn, error, disabled, info, unknown, dim."""
MARKERS = ("ok", "warn", "error", "disabled", "info", "unknown", "dim", "accent")
GUTTER = 2


@dataclass(frozen=True)
class Column:
    """A column: key, header, width (minimum for the flex column), priority (lower stays
    longer when narrow), alignment, and whether it takes the spare width."""

    key: str
    label: str
    width: int
    priority: int = 0
    justify: Literal["left", "right"] = "left"
    flex: bool = False
    max_width: int = 48
    """Widest the flex column grows; what is left stays blank on the right."""


def fit(text: str, width: int, justify: str = "left") -> str:
    """`text` cut (with …) or padded to exactly `width` cells."""
    size = cell_len(text)
    if size > width:
        out, used = [], 0
        for ch in text:
            w = cell_len(ch)
            if used + w > width - 1:
                break
            out.append(ch)
            used += w
        return "".join(out) + "…" + " " * (width - 1 - used)
    pad = " " * (width - size)
    return pad + text if justify == "right" else text + pad


def layout(columns: Sequence[Column], width: int) -> list[tuple[Column, int]]:
    """Columns that fit in `width` (most important first, one space between), in their
    declared order; the flex column takes what is left."""
    chosen: set[str] = set()
    used = 0
    for col in sorted(columns, key=lambda c: c.priority):
        need = col.width + (1 if chosen else 0)
        if used + need <= width:
            chosen.add(col.key)
            used += need
    extra = max(width - used, 0)
    out = []
    for col in columns:
        if col.key in chosen:
            grow = min(extra, max(col.max_width - col.width, 0)) if col.flex else 0
            out.append((col, col.width + grow))
    return out


class RowTable(ScrollView, can_focus=True):
    """A table of rows by key; see the module docstring."""

    BINDINGS: ClassVar = bindings(TABLE)
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "row-table--header",
        "row-table--cursor",
        "row-table--marked",
        "row-table--empty",
        *(f"marker--{m}" for m in MARKERS),
    }

    class TableMessage(Message):
        """What the table posts about one of its rows: `table` is the sender (its `control`)."""

        def __init__(self, table: RowTable) -> None:
            super().__init__()
            self.table = table

        @property
        def control(self) -> RowTable:
            """The table."""
            return self.table

    class Activated(TableMessage):
        """A row was opened (enter or double click)."""

        def __init__(self, table: RowTable, key: str) -> None:
            super().__init__(table)
            self.key = key

    class Highlighted(TableMessage):
        """The cursor moved to another row."""

        def __init__(self, table: RowTable, key: str | None) -> None:
            super().__init__(table)
            self.key = key

    def __init__(
        self,
        columns: Sequence[Column],
        cells: Callable[[str], Sequence[Cell]],
        *,
        markable: bool = False,
        empty_text: str = "Loading…",
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.columns = list(columns)
        self.cells = cells
        self.markable = markable
        self.empty_text = empty_text
        self.order: list[str] = []
        self._index: dict[str, int] = {}
        self.cursor = 0
        self.marks: set[str] = set()
        self.sort_key: str | None = None
        self.sort_reverse = False
        self.hidden: frozenset[str] = frozenset()
        """Column keys the user hid (column toggles)."""
        self._layout: list[tuple[Column, int]] = []
        self._layout_width = -1
        self._lines: dict[tuple[str, bool, bool], Strip] = {}

    # -- data ------------------------------------------------------------------------------

    @property
    def cursor_key(self) -> str | None:
        """Key of the row under the cursor, None when empty."""
        return self.order[self.cursor] if 0 <= self.cursor < len(self.order) else None

    def set_order(self, keys: list[str]) -> None:
        """Show `keys` in this order; the cursor stays on its row when it is still shown."""
        current = self.cursor_key
        self.order = keys
        self._index = {k: i for i, k in enumerate(keys)}
        self.marks &= self._index.keys()
        if current is not None and current in self._index:
            self.cursor = self._index[current]
        self.cursor = min(self.cursor, max(len(keys) - 1, 0))
        self.virtual_size = Size(self.scrollable_content_region.width, max(len(keys), 2) + 1)
        self._keep_cursor_visible()
        self.refresh()
        if self.cursor_key != current:
            self.post_message(self.Highlighted(self, self.cursor_key))

    def invalidate(self, keys: Iterable[str] | None = None) -> None:
        """Forget the rendered lines of `keys` (None: every row) and redraw those shown."""
        if keys is None:
            self._lines.clear()
            self.refresh()
            return
        top = int(self.scroll_offset.y)
        height = self.scrollable_content_region.height
        for key in keys:
            for flags in ((False, False), (True, False), (False, True), (True, True)):
                self._lines.pop((key, *flags), None)
            index = self._index.get(key)
            if index is not None and top <= index < top + height:
                self.refresh_line(index + 1)

    def set_sort(self, key: str | None, reverse: bool) -> None:
        """Show the sort indicator on column `key`."""
        self.sort_key, self.sort_reverse = key, reverse
        self.refresh_line(int(self.scroll_offset.y))

    def set_hidden(self, keys: Iterable[str]) -> None:
        """Hide the columns `keys` (the others show as the width allows)."""
        self.hidden = frozenset(keys)
        self._layout_width = -1
        self._lines.clear()
        self.refresh()

    @property
    def column_keys(self) -> list[str]:
        """Keys of every column, hidden or not, in their order."""
        return [col.key for col in self.columns]

    def toggle_mark(self) -> None:
        """Mark or unmark the row under the cursor, then move down."""
        key = self.cursor_key
        if key is None:
            return
        self.marks.symmetric_difference_update({key})
        self.invalidate([key])
        self.action_cursor_down()

    def set_marks(self, keys: Iterable[str]) -> None:
        """Replace the marks."""
        old = self.marks
        self.marks = set(keys) & self._index.keys()
        self.invalidate(old ^ self.marks)

    # -- movement --------------------------------------------------------------------------

    def move_to(self, index: int) -> None:
        """Put the cursor on row `index` (clamped)."""
        old_key = self.cursor_key
        self.cursor = max(0, min(index, len(self.order) - 1))
        if self.cursor_key != old_key:
            self._keep_cursor_visible()
            self.refresh()
            self.post_message(self.Highlighted(self, self.cursor_key))

    def move_to_key(self, key: str) -> None:
        """Put the cursor on the row `key` if shown."""
        if key in self._index:
            self.move_to(self._index[key])

    def _page(self) -> int:
        return max(self.scrollable_content_region.height - 2, 1)

    def _keep_cursor_visible(self) -> None:
        top = int(self.scroll_offset.y)
        rows = max(self.scrollable_content_region.height - 1, 1)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + rows:
            self.scroll_to(y=self.cursor - rows + 1, animate=False, immediate=True)

    def action_cursor_up(self) -> None:
        """Move up."""
        self.move_to(self.cursor - 1)

    def action_cursor_down(self) -> None:
        """Move down."""
        self.move_to(self.cursor + 1)

    def action_page_up(self) -> None:
        """Move up a page."""
        self.move_to(self.cursor - self._page())

    def action_page_down(self) -> None:
        """Move down a page."""
        self.move_to(self.cursor + self._page())

    def action_first(self) -> None:
        """Go to the first row."""
        self.move_to(0)

    def action_last(self) -> None:
        """Go to the last row."""
        self.move_to(len(self.order) - 1)

    def action_activate(self) -> None:
        """Open the row under the cursor."""
        if self.cursor_key is not None:
            self.post_message(self.Activated(self, self.cursor_key))

    def on_click(self, event: events.Click) -> None:
        """Click selects a row; double click opens it."""
        offset = event.get_content_offset(self)
        if offset is None or offset.y == 0:
            return
        self.move_to(int(self.scroll_offset.y) + offset.y - 1)
        if event.chain >= 2:
            self.action_activate()

    # -- rendering -------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        """Styles changed (theme): drop rendered lines."""
        super().notify_style_update()
        self._lines.clear()

    def on_resize(self, event: events.Resize) -> None:
        """Re-layout columns for the new width."""
        self.virtual_size = Size(self.scrollable_content_region.width, max(len(self.order), 2) + 1)
        self._keep_cursor_visible()

    def _columns(self) -> list[tuple[Column, int]]:
        width = self.scrollable_content_region.width
        if width != self._layout_width:
            shown = [c for c in self.columns if c.key not in self.hidden]
            self._layout = layout(shown, max(width - GUTTER, 0))
            self._layout_width = width
            self._lines.clear()
        return self._layout

    def visible_columns(self) -> list[str]:
        """Keys of the columns shown at the current width."""
        return [col.key for col, _ in self._columns()]

    def _header(self, width: int) -> Strip:
        style = self.get_component_rich_style("row-table--header")
        segments = [Segment(" " * GUTTER, style)]
        for col, w in self._columns():
            label = col.label
            if col.key == self.sort_key:  # the arrow stays when the label is cut
                arrow = "↓" if self.sort_reverse else "↑"
                fits = cell_len(label) + 1 <= w
                label = (label if fits else fit(label, max(w - 1, 1)).rstrip()) + arrow
            segments += [Segment(fit(label, w, col.justify), style), Segment(" ", style)]
        return Strip(segments).adjust_cell_length(width, style)

    def _row(self, key: str, width: int) -> Strip:
        cursor = key == self.cursor_key
        marked = key in self.marks
        cache_key = (key, cursor, marked)
        line = self._lines.get(cache_key)
        if line is not None:
            return line
        base = self.rich_style
        if marked:
            base += self.get_component_rich_style("row-table--marked")
        if cursor:
            base += self.get_component_rich_style("row-table--cursor")
        gutter = ("▸" if cursor else " ") + ("●" if marked else " ")
        segments = [Segment(gutter, base)]
        cells = self.cells(key)
        by_key = dict(zip([c.key for c in self.columns], cells, strict=False))
        for col, w in self._columns():
            text, marker = by_key.get(col.key, ("", ""))
            style = base
            if marker:
                style = base + self.get_component_rich_style(f"marker--{marker}", partial=True)
            segments += [Segment(fit(visible(text), w, col.justify), style), Segment(" ", base)]
        line = Strip(segments).adjust_cell_length(width, base)
        if len(self._lines) > 4000:
            self._lines.clear()
        self._lines[cache_key] = line
        return line

    def render_line(self, y: int) -> Strip:
        """Line `y` of the viewport: the header, a row, or the empty text."""
        width = self.scrollable_content_region.width
        if y == 0:
            return self._header(width)
        index = int(self.scroll_offset.y) + y - 1
        if 0 <= index < len(self.order):
            return self._row(self.order[index], width)
        if not self.order and y == 2:
            style = self.get_component_rich_style("row-table--empty")
            return Strip([Segment(fit("  " + visible(self.empty_text), width), style)])
        return Strip.blank(width, self.rich_style)
