"""TopBar: the view tabs, context and namespace, and the connection marker."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from gryvia_cli.core.plaintext import visible
from gryvia_cli.tui.bindings import VIEWS

CONNECTION_GLYPHS = {
    "live": ("●", "live"),
    "slow": ("◐", "slow"),
    "connecting": ("○", "connecting"),
    "reconnecting": ("⟳", "reconnecting"),
    "unreachable": ("✗", "unreachable"),
    "failed": ("✗", "failed"),
}
WORDED = frozenset({"slow", "reconnecting", "unreachable"})
"""States whose marker shows the app's `connection_detail` (`slow 3.1s`, `reconnecting
(attempt 2, Read timed out)`) instead of the bare word."""


class TopBar(Widget):
    """One line: `gryvia  1 Jobs 2 Queue …   ctx · ns   ● live`; watches the app's state."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "top-bar--brand",
        "top-bar--active",
        "top-bar--live",
        "top-bar--connecting",
        "top-bar--reconnecting",
        "top-bar--failed",
        "top-bar--slow",
        "top-bar--unreachable",
    }

    view: reactive[str] = reactive("jobs")
    context: reactive[str] = reactive("")
    namespace: reactive[str] = reactive("")
    connection: reactive[str] = reactive("connecting")
    detail: reactive[str] = reactive("")
    readonly: reactive[bool] = reactive(False)

    def __init__(self, view: str) -> None:
        super().__init__()
        self.view = view

    def on_mount(self) -> None:
        """Follow the app's target and connection."""
        self.watch(self.app, "target", self._target_changed)
        self.watch(self.app, "connection", self._connection_changed)
        self.readonly = bool(getattr(self.app, "readonly", False))

    def _target_changed(self, target: object) -> None:
        self.context = visible(str(getattr(target, "context", "")))
        self.namespace = visible(str(getattr(target, "namespace_label", "")))

    def _connection_changed(self, value: str) -> None:
        self.detail = visible(str(getattr(self.app, "connection_detail", "")))
        self.connection = value

    def render(self) -> Text:
        """Tabs on the left, where and how connected on the right."""
        width = self.size.width
        wide = width >= 100
        left = Text(" gryvia ", style=self.get_component_rich_style("top-bar--brand"))
        active = self.get_component_rich_style("top-bar--active")
        for i, name in enumerate(VIEWS, start=1):
            label = f"{i} {name.capitalize()}" if wide else name.capitalize()
            left.append(f" {label} ", style=active if name == self.view else "")
        glyph, word = CONNECTION_GLYPHS.get(self.connection, ("?", self.connection))
        state = self.connection if self.connection in CONNECTION_GLYPHS else "failed"
        if state in WORDED and self.detail:
            words = self.detail if self.detail.startswith(word) else f"{word} ({self.detail})"
            word = words[: max(width // 2, 12)]
        marker = Text(f"{glyph} {word}", style=self.get_component_rich_style(f"top-bar--{state}"))
        place = f"{self.context} · ns {self.namespace}" if wide else f"ns {self.namespace}"
        if self.readonly:
            place += " · read-only"
        room = width - left.cell_len - marker.cell_len - 3
        if room < len(place):
            place = place[: max(room - 1, 0)] + ("…" if room > 1 else "")
        right = Text(place + "  ")
        right.append_text(marker)
        gap = max(width - left.cell_len - right.cell_len - 1, 1)
        return Text.assemble(left, " " * gap, right, " ")
