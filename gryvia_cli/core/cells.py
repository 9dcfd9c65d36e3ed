"""Table cells with a meaning attached (ok, warn, error, ...) that renderers may colour."""

from __future__ import annotations

from dataclasses import dataclass

MARKERS = ("ok", "warn", "error", "disabled", "info", "unknown")


@dataclass(frozen=True)
class Marked:
    """A table cell with a marker: ok, warn, error, disabled, info or unknown."""

    text: str
    marker: str

    def __str__(self) -> str:
        return self.text
