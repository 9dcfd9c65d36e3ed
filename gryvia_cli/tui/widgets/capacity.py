"""Capacity widgets: a bar per GPU type (allocated, free, pending, shortfall) and a grid of
nodes with one glyph per GPU. Glyphs and numbers say it all without colour."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from gryvia_cli.core.capacity import CapacityReport, TypeCapacity
from gryvia_cli.core.cells import plural
from gryvia_cli.core.plaintext import visible

ALLOC, FREE, PENDING, SHORT = "█", "░", "▒", "▓"
STATS_WIDTH = 48


def bar_cells(row: TypeCapacity, width: int, scale: int) -> tuple[int, int, int, int]:
    """(allocated, free, pending-that-fits, shortfall) bar lengths for `width` cells per
    `scale` GPUs; pending overlays free cells, the shortfall extends past the total."""

    def cells(n: int) -> int:
        return 0 if n <= 0 else max(1, round(n * width / scale)) if scale else 0

    alloc = min(cells(row.allocated), width)
    fits = min(row.pending, row.free)
    pend = min(cells(fits), max(width - alloc, 0))
    free = max(cells(row.total) - alloc - pend, 0)
    short = cells(row.shortfall)
    return alloc, free, pend, short


class CapacityBars(Static):
    """One line per GPU type plus the totals."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "capacity--allocated",
        "capacity--free",
        "capacity--pending",
        "capacity--shortfall",
        "capacity--label",
    }

    def show(self, report: CapacityReport) -> None:
        """Render `report`."""
        self.update(self._render_report(report))

    def _render_report(self, report: CapacityReport) -> RenderableType:
        width = self.size.width or 80
        if not report.types:
            return Text("No GPU nodes and no GPU demand yet.", style=self._style("capacity--label"))
        label_w = max(8, *(len(t.gpu_type) for t in report.types)) + 1
        bar_w = max(width - label_w - STATS_WIDTH - 1, 10)
        scale = max(max((t.total + t.shortfall for t in report.types), default=0), 1)
        lines = [self._legend()]
        for row in report.types:
            lines.append(self._line(row, label_w, bar_w, scale))
        totals = report.totals
        summary = (
            f"{'total':<{label_w}} {plural(totals.total, 'GPU')} on "
            f"{plural(totals.nodes, 'node')} · "
            f"{totals.allocated} allocated · {totals.free} free · {totals.pending} pending"
        )
        if totals.reserved:
            summary += f" · {totals.reserved} reserved"
        if report.unspecified_pending:
            summary += f" ({report.unspecified_pending} of any type)"
        lines.append(Text(summary, style=self._style("capacity--label")))
        return Group(*lines)

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def _legend(self) -> Text:
        text = Text()
        for glyph, name, cls in (
            (ALLOC, "allocated", "allocated"),
            (FREE, "free", "free"),
            (PENDING, "pending (fits)", "pending"),
            (SHORT, "shortfall", "shortfall"),
        ):
            text.append(glyph * 2, style=self._style(f"capacity--{cls}"))
            text.append(f" {name}   ")
        return text

    def _line(self, row: TypeCapacity, label_w: int, bar_w: int, scale: int) -> Text:
        alloc, free, pend, short = bar_cells(row, bar_w, scale)
        text = Text(f"{visible(row.gpu_type):<{label_w}}", style=self._style("capacity--label"))
        for glyph, count, cls in (
            (ALLOC, alloc, "allocated"),
            (PENDING, pend, "pending"),
            (FREE, free, "free"),
            (SHORT, short, "shortfall"),
        ):
            text.append(glyph * count, style=self._style(f"capacity--{cls}"))
        text.append(" " * max(bar_w - alloc - pend - free - short, 0) + " ")
        text.append(
            f"{row.allocated:>4}/{row.total:<4} used {row.free:>4} free {row.pending:>4} pend"
        )
        if row.reserved:
            text.append(f" {row.reserved} reserved", style=self._style("capacity--label"))
        if row.shortfall:
            text.append(f" ⚠ short {row.shortfall}", style=self._style("capacity--shortfall"))
        for note in row.notes:
            text.append(f"\n{'':<{label_w}}↳ {visible(note)}", style=self._style("capacity--label"))
        return text


class NodeGrid(Static):
    """Every GPU node as `name ■■■□□□□□` (■ allocated, □ free, ◇ reserved, ✗ unusable)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "capacity--allocated",
        "capacity--free",
        "capacity--shortfall",
        "capacity--label",
    }

    def show(self, report: CapacityReport) -> None:
        """Render the per-node part of `report`."""
        width = self.size.width or 80
        nodes = report.nodes
        if not nodes:
            self.update(Text("No GPU nodes.", style=self._style("capacity--label")))
            return
        name_w = min(max(len(n.name) for n in nodes), 24)
        gpus_w = min(max(n.total for n in nodes), 16)
        cell_w = name_w + gpus_w + 4
        per_line = max(width // cell_w, 1)
        lines: list[Text] = []
        line = Text()
        for i, node in enumerate(nodes):
            if i and i % per_line == 0:
                lines.append(line)
                line = Text()
            shown = visible(node.name)
            name = shown if len(shown) <= name_w else shown[: name_w - 1] + "…"
            line.append(f"{name:<{name_w}} ", style=self._style("capacity--label"))
            if not node.usable:
                line.append(
                    "✗" * min(node.total, gpus_w) or "✗", style=self._style("capacity--shortfall")
                )
                pad = gpus_w - min(node.total, gpus_w) if node.total else gpus_w - 1
            else:
                used = min(node.allocated, gpus_w)
                free = min(max(node.total - node.allocated, 0), gpus_w - used)
                line.append("■" * used, style=self._style("capacity--allocated"))
                glyph = "◇" if node.reserved_for else "□"  # held by a GryviaReservation
                line.append(glyph * free, style=self._style("capacity--free"))
                pad = gpus_w - used - free
            line.append(" " * (pad + 3))
        lines.append(line)
        self.update(Group(*lines))

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)
