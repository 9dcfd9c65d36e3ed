"""One output module: data to stdout as a table, JSON, YAML or names; chatter to stderr.

Tables are Rich tables; colour is off with NO_COLOR, `--no-color` or when the stream is not a
terminal (CLICOLOR_FORCE=1 keeps it). Cluster data is never read as Rich markup and never
sends a terminal escape: every cell is `views.usertext.user_text`, every line passes
`core.plaintext.visible`. Messages carry the glyphs ✓ (success), ⚠ (warning), ✗ (error) and an
information sign (notes).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from gryvia_cli.core.cells import Marked
from gryvia_cli.core.plaintext import visible
from gryvia_cli.errors import GryviaError
from gryvia_cli.tablelayout import (
    EMPTY,
    MARKER_STYLES,
    SGR,
    TRAILING,
    layout_line,
    plain_table,
    text_of,
)


class OutputFormat(StrEnum):
    """Formats every read command accepts with `-o`; jsonpath and custom-columns carry a
    template (`-o jsonpath=TEMPLATE`, kept by gryvia_cli/outputtemplates.py)."""

    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"
    name = "name"
    jsonpath = "jsonpath"
    custom_columns = "custom-columns"


TEMPLATE_FORMATS = frozenset({OutputFormat.jsonpath, OutputFormat.custom_columns})
MACHINE_FORMATS = frozenset({OutputFormat.json, OutputFormat.yaml, *TEMPLATE_FORMATS})
"""Formats that print API objects (or kubectl's templates over them) rather than tables."""


def default_format() -> OutputFormat:
    """`GRYVIA_OUTPUT` if set to a known format, else table."""
    try:
        return OutputFormat(os.environ.get("GRYVIA_OUTPUT", "table"))
    except ValueError:
        return OutputFormat.table


@dataclass
class OutputState:
    """Process-wide output switches set once by the root callback."""

    no_color: bool = False
    verbose: bool = False


state = OutputState()


def configure(*, no_color: bool = False, verbose: bool = False) -> None:
    """Set the `--no-color` and `-v` switches for this process."""
    state.no_color = no_color
    state.verbose = verbose


def color_enabled(stream: Any) -> bool:
    """True when output to `stream` may use colour (flags, NO_COLOR, CLICOLOR_FORCE, TTY)."""
    if state.no_color or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("CLICOLOR_FORCE", "") not in ("", "0"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    color = color_enabled(stream)
    return Console(
        file=stream,
        color_system="auto" if color else None,  # None: no escape bytes at all, bold included
        no_color=not color,
        force_terminal=color or None,
        highlight=False,
        soft_wrap=False,
        emoji=False,
        markup=False,
        width=None if stream.isatty() else UNBOUNDED_WIDTH,
    )


UNBOUNDED_WIDTH = 1_000_000
"""Off a terminal lines never wrap: one object per line, whatever its length (like kubectl)."""
SHORT_COLUMN = 24
"""Columns whose widest cell fits in this many characters are never shortened on a narrow
terminal; the long ones (names, messages) give way instead, ending in an ellipsis."""


def _cell(value: Any) -> Any:
    from gryvia_cli.usertext import user_text

    if isinstance(value, Marked):
        return user_text(value.text, MARKER_STYLES.get(value.marker, ""), multiline=True)
    text = "" if value is None else str(value)
    return user_text(text or EMPTY, multiline=True)


def render_table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], *, header: bool = True
) -> None:
    """Print rows as a borderless table with upper-case headers, kubectl style (three spaces
    between columns, no rule, no trailing blanks). `header=False` leaves the header line out
    (the next page of a table printed page by page, laid out on its own as kubectl's chunks).

    Cells are strings, numbers, None (empty) or `Marked` (coloured by marker). A table of
    one-line ASCII cells that fits the width is laid out here (Rich's layout, byte for byte,
    at a fraction of the cost: 1000 rows in milliseconds); anything else goes to Rich, which
    shortens long columns with an ellipsis on a narrow terminal.
    """
    stream = sys.stdout
    color = color_enabled(stream)
    fast = plain_table(columns, rows, color, _width(stream))
    if fast is not None:
        stream.write(fast if header else fast.split("\n", 1)[-1])
        stream.flush()
        return
    console = _console()
    text = _rich_table(console, columns, rows, color)
    console.file.write(text if header else text.split("\n", 1)[-1])
    console.file.flush()


def _rich_table(
    console: Any, columns: Sequence[str], rows: Sequence[Sequence[Any]], color: bool
) -> str:
    """The table laid out by Rich on `console` (shortening long columns to fit its width)."""
    from rich.table import Table

    table = Table(
        box=None,
        padding=(0, 3, 0, 0),
        pad_edge=False,
        show_edge=False,
        header_style="bold" if color else "",
    )
    cells = [[_cell(v) for v in row] for row in rows]
    for index, col in enumerate(columns):
        widest = max([len(col), *(c.cell_len for row in cells for c in row[index : index + 1])])
        short = widest <= SHORT_COLUMN
        table.add_column(
            col.upper(),
            no_wrap=short,
            overflow="ellipsis",
            min_width=widest if short else min(widest, 8),
        )
    for row in cells:
        table.add_row(*row)
    with console.capture() as captured:
        console.print(table)
    return TRAILING.sub(r"\1", captured.get())


def _width(stream: Any) -> int | None:
    """The width Rich lays a table out in: unbounded off a terminal, else $COLUMNS or the
    terminal's; None when unknown (Rich then decides)."""
    if not stream.isatty():
        return UNBOUNDED_WIDTH
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return int(columns)
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError):
        return None


def render_rows(rows: Sequence[Sequence[Any]], widths: Sequence[int]) -> None:
    """Print table rows without a header, aligned to `widths` (a watch's later rows line up
    with the table it printed first; longer cells push the line out)."""
    color = color_enabled(sys.stdout)
    text = "".join(
        layout_line(
            [(t, st if color and st in SGR else "") for t, st in map(text_of, row)], widths, ""
        )
        for row in rows
    )
    sys.stdout.write(TRAILING.sub(r"\1", text))
    sys.stdout.flush()


def without_managed_fields(data: Any) -> Any:
    """A copy of `data` without `metadata.managedFields` (in it or its `items`), as kubectl."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    meta = out.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    if isinstance(out.get("items"), list):
        out["items"] = [without_managed_fields(item) for item in out["items"]]
    return out


def render_data(data: Any, fmt: OutputFormat) -> None:
    """Print `data` (API objects or a documented list shape) as JSON, YAML, or through the
    `-o jsonpath=`/`custom-columns=` template (on the document JSON would print)."""
    data = without_managed_fields(data)
    if fmt in TEMPLATE_FORMATS:
        from gryvia_cli.outputtemplates import render_templated

        render_templated(data, fmt.value)
    elif fmt is OutputFormat.json:
        sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
    else:
        import yaml

        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        sys.stdout.write(yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True))


def render_documents(documents: Sequence[Any]) -> None:
    """Print manifests as one YAML stream, each document after a `---` line; multi-line
    strings (a batch script) become readable `|` blocks."""
    import yaml

    base: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's emitter: ~10x faster

    class BlockDumper(base):  # type: ignore[misc]
        """SafeDumper writing multi-line strings as `|` blocks."""

    def block(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    BlockDumper.add_representer(str, block)
    for document in documents:
        sys.stdout.write("---\n")
        sys.stdout.write(
            yaml.dump(document, Dumper=BlockDumper, sort_keys=False, allow_unicode=True, width=100)
        )


def render_json_bytes(raw: bytes) -> None:
    """Print JSON the API server sent: indented on a terminal, as received when piped
    (compact, like `gh api`; `jq .` indents it)."""
    if sys.stdout.isatty():
        from gryvia_cli.core.jsonscan import indent_json

        indented = indent_json(raw)
        if indented is None:
            render_data(json.loads(raw), OutputFormat.json)
            return
        raw = indented
    sys.stdout.flush()
    sys.stdout.buffer.write(raw.rstrip() + b"\n")
    sys.stdout.buffer.flush()


def render_names(names: Sequence[str]) -> None:
    """Print one `kind.group/name` per line (`-o name`)."""
    if names:
        sys.stdout.write("\n".join(names) + "\n")


def render_one(
    obj: Any,
    fmt: OutputFormat,
    qualified: str,
    details: Callable[[], Sequence[tuple[str, str]]],
) -> None:
    """One object as a `get` command prints it: `-o yaml|json` as the API server stores it,
    `-o name` as `qualified` (`<resource>/<name>`), else the label/value pairs `details()`
    builds (only then), one per line, values aligned in one column."""
    if fmt in MACHINE_FORMATS:
        render_data(obj, fmt)
        return
    if fmt is OutputFormat.name:
        render_names([qualified])
        return
    rows = details()
    width = max(len(label) for label, _ in rows) + 2
    for label, value in rows:
        emit(f"{label + ':':<{width}}{value}")


def emit(line: str = "") -> None:
    """Print one line of a human report to stdout (never parsed as markup; controls shown
    as glyphs, line breaks and tabs kept)."""
    sys.stdout.write(visible(line, multiline=True) + "\n")


def emit_marked(parts: Sequence[Any]) -> None:
    """Print one stdout line built from strings and `Marked` pieces (coloured when allowed)."""
    from rich.text import Text

    line = Text()
    for part in parts:
        line.append_text(_cell(part))
    _console().print(line)


def section(title: str) -> None:
    """Print a section header `━━━ Title ━━━` to stdout."""
    emit_marked([Marked(f"━━━ {title} ━━━", "info")])


def info(message: str) -> None:
    """Print a progress or status line to stderr (never mixed into data)."""
    from gryvia_cli.usertext import user_text

    _console(stderr=True).print(user_text(message, multiline=True))


def _glyph_line(glyph: str, marker: str, message: str) -> None:
    from rich.text import Text

    line = Text(f"{glyph} ", style=MARKER_STYLES[marker])
    line.append(visible(message, multiline=True))
    _console(stderr=True).print(line)


def success(message: str) -> None:
    """Print `✓ message` (green) to stderr."""
    _glyph_line("✓", "ok", message)


def warn(message: str) -> None:
    """Print `⚠ message` (yellow) to stderr."""
    _glyph_line("⚠", "warn", message)


def failure(message: str) -> None:
    """Print `✗ message` (red) to stderr: one failed item of a command that goes on."""
    _glyph_line("✗", "error", message)


def note(message: str) -> None:
    """Print a note with the information sign (cyan) to stderr."""
    _glyph_line("\u2139", "info", message)


def report_error(exc: GryviaError, *, verbose: bool | None = None) -> None:
    """Print a GryviaError: `error: <message>`, up to two `caused by:` lines, `hint: <hint>`,
    and with `-v` the raw details."""
    verbose = state.verbose if verbose is None else verbose
    sys.stderr.write(f"error: {visible(exc.message, multiline=True)}\n")
    seen = {exc.message}
    shown = 0
    for cause in exc.causes:
        text = cause if len(cause) <= 220 else cause[:219] + "…"
        if text in seen or shown == 2:
            continue
        seen.add(text)
        shown += 1
        sys.stderr.write(f"caused by: {visible(text, multiline=True)}\n")
    if exc.hint:
        sys.stderr.write(f"hint: {visible(exc.hint, multiline=True)}\n")
    if verbose:
        for detail in exc.details:
            sys.stderr.write(f"detail: {visible(str(detail), multiline=True)}\n")


@contextmanager
def spinner(message: str) -> Iterator[Any]:
    """A live spinner on stderr while a block runs; yields `update(text)`.

    On a terminal the spinner redraws in place; otherwise each distinct update is one line.
    """
    if sys.stderr.isatty():
        from gryvia_cli.usertext import user_text

        console = _console(stderr=True)
        with console.status(user_text(message)) as status:  # cluster text is never markup
            yield lambda text: status.update(user_text(text))
        return
    last = [""]

    def update(text: str) -> None:
        if text != last[0]:
            last[0] = text
            info(text)

    update(message)
    yield update
