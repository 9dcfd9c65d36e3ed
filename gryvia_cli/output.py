"""One output module: data to stdout as a table, JSON, YAML or names; chatter to stderr.

Tables are Rich tables; colour is off with NO_COLOR or when stdout is not a terminal. Cluster
data is never read as Rich markup.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from enum import StrEnum
from typing import Any


class OutputFormat(StrEnum):
    """Formats every read command accepts with `-o`."""

    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"
    name = "name"


def default_format() -> OutputFormat:
    """`GRYVIA_OUTPUT` if set to a known format, else table."""
    try:
        return OutputFormat(os.environ.get("GRYVIA_OUTPUT", "table"))
    except ValueError:
        return OutputFormat.table


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    no_color = bool(os.environ.get("NO_COLOR")) or not stream.isatty()
    return Console(
        file=stream, no_color=no_color, highlight=False, soft_wrap=False, emoji=False, markup=False
    )


def render_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print rows as a borderless table with upper-case headers, kubectl style."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for col in columns:
        table.add_column(col.upper(), no_wrap=True)
    for row in rows:
        table.add_row(*(Text("" if v is None else str(v)) for v in row))
    _console().print(table)


def render_data(data: Any, fmt: OutputFormat) -> None:
    """Print `data` (API objects or a documented list shape) as JSON or YAML."""
    if fmt is OutputFormat.json:
        sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
    else:
        import yaml

        sys.stdout.write(yaml.safe_dump(data, sort_keys=False))


def info(message: str) -> None:
    """Print a progress or status line to stderr (never mixed into data)."""
    _console(stderr=True).print(message)
