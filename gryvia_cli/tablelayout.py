"""Tables of one-line cells of single-width characters laid out by hand, byte for byte as Rich lays
them out when nothing needs shortening (kubectl style: upper-case headers, three spaces
between columns, no rule, no trailing blanks).

Pure: cells in, text out. `gryvia_cli.output` writes it, and hands anything else (wide,
East Asian wide, combining or multi-line cells) to Rich.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

from gryvia_cli.core.cells import Marked

MARKER_STYLES = {
    "ok": "green",
    "warn": "yellow",
    "error": "red",
    "disabled": "dim",
    "unknown": "dim",
    "info": "cyan",
}


EMPTY = "<none>"
"""What an empty cell shows, like kubectl."""


SGR = {"bold": "1", "green": "32", "yellow": "33", "red": "31", "dim": "2", "cyan": "36"}
"""The escape codes Rich writes for the styles tables use."""
GAP = " " * 3


def plain_table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], color: bool, width: int | None
) -> str | None:
    """The table as Rich prints it when nothing needs shortening, or None when a cell is not
    one line of single-width printable characters (`single_width`) or the table is wider than
    `width` (Rich's job then)."""
    if width is None or (color and os.environ.get("TERM") in ("dumb", "unknown")):
        return None
    header = [(c.upper(), "bold" if color else "") for c in columns]
    body: list[list[tuple[str, str]]] = []
    for row in rows:
        if len(row) > len(columns):
            return None
        line = []
        for value in row:
            if isinstance(value, Marked):
                text, style = value.text, MARKER_STYLES.get(value.marker, "")
            else:
                text, style = ("" if value is None else str(value)) or EMPTY, ""
            if not single_width(text):
                return None
            if style not in SGR and style:
                return None
            line.append((text, style if color else ""))
        body.append(line)
    widths = [
        max([len(name), *(len(line[i][0]) for line in body if i < len(line))])
        for i, (name, _) in enumerate(header)
    ]
    if not all(single_width(name) for name, _ in header):
        return None
    if sum(widths) + len(GAP) * (len(widths) - 1) > width:
        return None
    out = [layout_line(header, widths, "bold" if color else "")]
    out.extend(layout_line(line, widths, "") for line in body)
    return TRAILING.sub(r"\1", "".join(out))


def single_width(text: str) -> bool:
    """True when `text` is one line of printable characters that each take one terminal
    cell (ASCII, and e.g. `✓`, `ï`; not East Asian wide or combining characters), so that
    `len` is its width on screen (Rich's `cell_len`, the Unicode East Asian Width rules)."""
    if not text.isprintable():
        return False
    if text.isascii():
        return True
    from rich.cells import cell_len

    return cell_len(text) == len(text)


def text_of(value: Any) -> tuple[str, str]:
    """(text, marker style) of a cell as tables print it."""
    if isinstance(value, Marked):
        return value.text, MARKER_STYLES.get(value.marker, "")
    return ("" if value is None else str(value)) or EMPTY, ""


def column_widths(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[int]:
    """The width of each column of `render_table` when nothing is shortened."""
    texts = [[text_of(v)[0] for v in row] for row in rows]
    return [
        max([len(name), *(len(line[i]) for line in texts if i < len(line))])
        for i, name in enumerate(columns)
    ]


def layout_line(cells: Sequence[tuple[str, str]], widths: Sequence[int], gap_style: str) -> str:
    parts = []
    last = len(widths) - 1
    for index, width in enumerate(widths):
        text, style = cells[index] if index < len(cells) else ("", "")
        parts.append(styled(text.ljust(width), style))
        if index < last:
            parts.append(styled(GAP, gap_style))
    parts.append("\n")
    return "".join(parts)


def styled(text: str, style: str) -> str:
    return f"\x1b[{SGR[style]}m{text}\x1b[0m" if style else text


TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)
