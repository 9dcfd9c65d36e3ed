"""Input files named on the command line: a path, or `-` for stdin."""

from __future__ import annotations

import sys
from pathlib import Path

from gryvia_cli.errors import InvalidInputError


def read_source(path: str) -> tuple[str, str]:
    """Return (text, display name) of a file path or `-` (stdin).

    Raises InvalidInputError when the file cannot be read.
    """
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    file = Path(path)
    try:
        return file.read_text(encoding="utf-8"), path
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.__class__.__name__}: {exc}") from None
