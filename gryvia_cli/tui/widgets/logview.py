"""LogView: a container log that keeps up with fast output; wrap, timestamps, search.

Lines arrive as `<RFC 3339 timestamp> <text>` (kubectl logs --timestamps); the view keeps the
last `max_lines`, renders only visible rows, follows the end while `follow` is on, and
highlights matches of `search` (`n`/`N` jump between them).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import ClassVar

from rich.segment import Segment
from textual import events
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from gryvia_cli.core.plaintext import log_text

_TS = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) ")


def split_timestamp(line: str) -> tuple[str, str]:
    """(timestamp, text) of a `--timestamps` log line; ("", line) without one. The text is
    user data made safe by `core.plaintext.log_text`: escapes (colours, titles) dropped,
    other control characters shown as glyphs."""
    match = _TS.match(line)
    stamp, text = (match.group(1), line[match.end() :]) if match else ("", line)
    return stamp, log_text(text)


def short_time(stamp: str) -> str:
    """`2024-05-01T10:00:00.123456789Z` -> `10:00:00.123`."""
    if "T" not in stamp:
        return stamp
    clock = stamp.split("T", 1)[1].rstrip("Z")
    clock = re.split(r"[+-]\d\d:\d\d$", clock)[0]
    head, _, frac = clock.partition(".")
    return f"{head}.{(frac + '000')[:3]}"


class LogView(ScrollView, can_focus=True):
    """See the module docstring."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "log-view--timestamp",
        "log-view--match",
        "log-view--empty",
    }

    def __init__(self, *, max_lines: int = 20000, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_lines = max_lines
        self.lines: list[tuple[str, str]] = []
        self.wrap = False
        self.timestamps = True
        self.follow = True
        self.search = ""
        self.empty_text = "No log lines yet."
        self._starts: list[int] = []
        self._rows = 0
        self._width = -1
        self._match_at = -1
        self._longest = 0

    # -- content ---------------------------------------------------------------------------

    def clear(self) -> None:
        """Drop every line."""
        self.lines = []
        self._match_at = -1
        self._rebuild()

    def append(self, raw: list[str]) -> None:
        """Add raw log lines; keeps the newest `max_lines`."""
        if not raw:
            return
        self.lines.extend(split_timestamp(line) for line in raw)
        if len(self.lines) > self.max_lines:
            del self.lines[: len(self.lines) - self.max_lines]
            self._rebuild()
        else:
            self._extend(len(self.lines) - len(raw))
        if self.follow:
            self.call_after_refresh(self._stick_to_end)

    def _stick_to_end(self) -> None:
        # force: before the first layout has computed the scrollbars, Textual refuses to
        # scroll a view that it does not yet know overflows.
        self.scroll_end(animate=False, immediate=True, force=True)
        self.call_after_refresh(self._sync_scrollbar)

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        """The bar appears: put its thumb where the view is."""
        if shown:
            self.call_after_refresh(self._sync_scrollbar)

    def _sync_scrollbar(self) -> None:
        # Textual moves the bar's thumb only on scrolls made while the bar is shown.
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.position = self.scroll_y

    def set_options(self, *, wrap: bool | None = None, timestamps: bool | None = None) -> None:
        """Change wrapping or timestamps and redraw."""
        if wrap is not None:
            self.wrap = wrap
        if timestamps is not None:
            self.timestamps = timestamps
        self._rebuild()

    # -- layout ----------------------------------------------------------------------------

    def _prefix(self) -> int:
        return 13 if self.timestamps else 0

    def _height_of(self, text: str, width: int) -> int:
        if not self.wrap or width <= 0:
            return 1
        return max(1, -(-len(text) // width))

    def _rebuild(self) -> None:
        self._starts = []
        self._rows = 0
        self._extend(0)
        self.refresh()

    def _extend(self, first: int) -> None:
        width = max(self.scrollable_content_region.width - self._prefix(), 1)
        self._width = self.scrollable_content_region.width
        if first == 0:
            self._longest = 0
        for _, text in self.lines[first:]:
            self._starts.append(self._rows)
            self._rows += self._height_of(text, width)
            self._longest = max(self._longest, len(text))
        wide = 0 if self.wrap else self._longest + self._prefix()
        self.virtual_size = Size(wide, self._rows)
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        """Re-wrap for the new width; a followed log stays at its end (lines appended before
        the first layout could not scroll yet)."""
        if self.scrollable_content_region.width != self._width:
            self._rebuild()
        if self.follow:
            self.call_after_refresh(self._stick_to_end)

    # -- search ----------------------------------------------------------------------------

    def set_search(self, text: str) -> int:
        """Highlight `text` (case-insensitive); jump to the first match after the top line.
        Returns the number of matching lines."""
        self.search = text.lower()
        self._match_at = -1
        self.refresh()
        if not self.search:
            return 0
        self.jump(1)
        return sum(1 for _, t in self.lines if self.search in t.lower())

    def jump(self, step: int) -> bool:
        """Scroll to the next (`step` 1) or previous (-1) matching line; False if none."""
        if not self.search or not self.lines:
            return False
        count = len(self.lines)
        start = (
            self._match_at
            if self._match_at >= 0
            else self._line_at(int(self.scroll_offset.y)) - step
        )
        for i in range(1, count + 1):
            index = (start + step * i) % count
            if self.search in self.lines[index][1].lower():
                self._match_at = index
                self.follow = False
                self.scroll_to(y=max(self._starts[index] - 2, 0), animate=False, immediate=True)
                self.refresh()
                return True
        return False

    # -- rendering -------------------------------------------------------------------------

    def _line_at(self, row: int) -> int:
        return max(bisect_right(self._starts, row) - 1, 0)

    def render_line(self, y: int) -> Strip:
        """Row `y` of the viewport."""
        width = self.scrollable_content_region.width
        row = int(self.scroll_offset.y) + y
        if not self.lines:
            if y == 0:
                style = self.get_component_rich_style("log-view--empty")
                return Strip([Segment(self.empty_text, style)]).adjust_cell_length(width)
            return Strip.blank(width, self.rich_style)
        if row >= self._rows:
            return Strip.blank(width, self.rich_style)
        index = self._line_at(row)
        stamp, text = self.lines[index]
        prefix = self._prefix()
        body_width = max(width - prefix, 1)
        part = row - self._starts[index]
        base = self.rich_style
        segments: list[Segment] = []
        if prefix:
            label = short_time(stamp) if part == 0 else ""
            ts_style = base + self.get_component_rich_style("log-view--timestamp", partial=True)
            segments.append(Segment(f"{label:<12} ", ts_style))
        chunk = text[part * body_width : (part + 1) * body_width] if self.wrap else text
        segments += self._highlight(chunk, base)
        strip = Strip(segments)
        if not self.wrap:
            x = int(self.scroll_offset.x)
            strip = strip.crop(x, x + width) if x else strip
        return strip.adjust_cell_length(width, base)

    def _highlight(self, chunk: str, base: object) -> list[Segment]:
        if not self.search or self.search not in chunk.lower():
            return [Segment(chunk, base)]  # type: ignore[arg-type]
        match_style = base + self.get_component_rich_style("log-view--match", partial=True)  # type: ignore[operator]
        out: list[Segment] = []
        lower, pos, size = chunk.lower(), 0, len(self.search)
        while True:
            hit = lower.find(self.search, pos)
            if hit < 0:
                out.append(Segment(chunk[pos:], base))  # type: ignore[arg-type]
                return out
            out += [Segment(chunk[pos:hit], base), Segment(chunk[hit : hit + size], match_style)]  # type: ignore[arg-type]
            pos = hit + size
