"""kubectl's custom columns (`-o custom-columns=SPEC`, `-o custom-columns-file=FILE`).

A spec is `HEADER:PATH,HEADER:PATH` (headers kept as written, not upper-cased); a file is one
line of headers and one line of paths, separated by blanks. A path is relaxed as kubectl does
(`metadata.name`, `.metadata.name`, `{.metadata.name}`) and run as a JSONPath template with
missing keys allowed. A document with an `items` list is a List: one row per item; any other
document is one row. A cell is every result in `fmt.Sprint` form joined by commas, `<none>`
when there is none, with ESC shown as `^[` and CR as `\\r` (kubectl's EscapeTerminal); the
rows are aligned as kubectl's tabwriter aligns them (minimum width 6, padding 3, the last
column unpadded).

Source of the rules: kubectl `pkg/cmd/get/customcolumn.go` and cli-runtime
`pkg/printers/tabwriter.go`, `terminal.go` (v1.36).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gryvia_cli.core.gotext import go_sprint
from gryvia_cli.core.jsonpath import JsonPathError, Template, compile_template, relaxed_path

__all__ = ["Column", "columns_from_file", "columns_from_spec", "render_columns", "tabwrite"]

MIN_WIDTH = 6
PADDING = 3
FILE_FORMAT = (
    "Expected format is one line of space separated headers, one line of space separated "
    "column specs."
)


@dataclass(frozen=True)
class Column:
    """One column: its header as written and its compiled path template."""

    header: str
    template: Template


def _column(header: str, path: str) -> Column:
    return Column(header, compile_template(relaxed_path(path)))


def columns_from_spec(spec: str) -> list[Column]:
    """Columns of `HEADER:PATH[,HEADER:PATH...]`. Raises JsonPathError with kubectl's
    message for an empty spec, a part without `:` or a bad path."""
    if not spec:
        raise JsonPathError("custom-columns format specified but no custom columns given")
    columns = []
    for part in spec.split(","):
        header, colon, path = part.partition(":")
        if not colon:
            raise JsonPathError(
                f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>"
            )
        columns.append(_column(header, path))
    return columns


def columns_from_file(text: str) -> list[Column]:
    """Columns of a custom-columns file: headers on the first line, paths on the second.
    Raises JsonPathError when a line is missing or the counts differ."""
    lines = text.splitlines()
    if not lines:
        raise JsonPathError(f"invalid template, missing header line. {FILE_FORMAT}")
    if len(lines) < 2:
        raise JsonPathError(f"invalid template, missing spec line. {FILE_FORMAT}")
    headers, paths = lines[0].split(), lines[1].split()
    if len(headers) != len(paths):
        raise JsonPathError(
            f"number of headers ({len(headers)}) and field specifications ({len(paths)}) "
            "don't match"
        )
    return [_column(h, p) for h, p in zip(headers, paths, strict=True)]


def _cell(column: Column, obj: Any) -> str:
    values = [v for result in column.template.results(obj) for v in result]
    if not values:
        return "<none>"
    return ",".join(go_sprint(v).replace("\x1b", "^[").replace("\r", "\\r") for v in values)


def render_columns(document: Any, columns: Sequence[Column], *, headers: bool = True) -> str:
    """The table kubectl prints for `document`: the header line (unless `headers` is False),
    then a row per item of a List (a document with an `items` list) or one row for any other
    document; every line ends with a newline. Raises JsonPathError from a column's path."""
    rows = [[c.header for c in columns]] if headers else []
    items = document.get("items") if isinstance(document, dict) else None
    objects = items if isinstance(items, list) else [document]
    rows.extend([_cell(c, obj) for c in columns] for obj in objects)
    return tabwrite("".join("\t".join(row) + "\n" for row in rows))


def tabwrite(text: str) -> str:
    """Align tab-separated cells as Go's text/tabwriter with kubectl's settings: a column
    block is a run of lines that have a cell in that column (the last cell of a line is not
    in a column); each block's cells are padded with blanks to the widest + 3 (at least 6)."""
    lines = [line.split("\t") for line in text.split("\n")]
    out: list[str] = []
    _format(lines, 0, len(lines), [], out)
    return "\n".join(out)


def _format(
    lines: list[list[str]], first: int, stop: int, widths: list[int], out: list[str]
) -> None:
    """text/tabwriter's format(): find the blocks of column len(widths) in lines[first:stop],
    size each, recurse for the columns to its right, and write the lines of no block."""
    column = len(widths)
    this = first
    while this < stop:
        if column >= len(lines[this]) - 1:
            this += 1
            continue
        _write(lines, first, this, widths, out)
        first = this
        width = MIN_WIDTH
        while this < stop and column < len(lines[this]) - 1:
            width = max(width, len(lines[this][column]) + PADDING)
            this += 1
        _format(lines, first, this, [*widths, width], out)
        first = this
    _write(lines, first, stop, widths, out)


def _write(
    lines: list[list[str]], first: int, stop: int, widths: list[int], out: list[str]
) -> None:
    for cells in lines[first:stop]:
        out.append(
            "".join(
                cell.ljust(widths[i]) if i < len(widths) else cell for i, cell in enumerate(cells)
            )
        )
