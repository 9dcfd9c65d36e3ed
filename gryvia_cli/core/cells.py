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
    """`1 GPU`, `8 GPUs`, `0 GPUs`, `2 idle policies`: the count and the noun, plural unless
    the count is 1 (`nouns` when the plural is not `plural_of(noun)`)."""
    return f"{count} {noun if count == 1 else (nouns or plural_of(noun))}"


def plural_of(noun: str) -> str:
    """English plural of a noun phrase's last word: `policy` -> `policies`, `key` -> `keys`,
    else + "s"."""
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return noun[:-1] + "ies"
    return noun + "s"
