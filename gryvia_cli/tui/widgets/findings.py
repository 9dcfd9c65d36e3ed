"""Findings: validation errors, warnings and notes, one line each with a glyph."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.widgets import Static

from gryvia_cli.core.plaintext import visible

GLYPHS = {"error": "✗", "warn": "⚠", "info": "→", "ok": "✓"}


class Findings(Static):
    """Renders (kind, message) pairs; kinds error, warn, info, ok."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {f"finding--{k}" for k in GLYPHS}

    def show(self, findings: Sequence[tuple[str, str]], ready: str = "") -> None:
        """Render `findings`, with `ready` as a first ok line when there is no error."""
        text = Text()
        if ready and not any(kind == "error" for kind, _ in findings):
            text.append(
                f"{GLYPHS['ok']} {ready}\n", style=self.get_component_rich_style("finding--ok")
            )
        for kind, message in findings:
            style = self.get_component_rich_style(f"finding--{kind}")
            text.append(f"{GLYPHS[kind]} {visible(message)}\n", style=style)
        self.update(text)
