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


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 GPU`, `8 GPUs`, `0 GPUs`: the count and the noun, plural unless the count is 1
    (`nouns` when the plural is not noun + "s")."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"
