"""Gryvia's expected errors and the exit codes they map to (documented in docs/cli.md).

| code | meaning |
|---|---|
| 0 | success |
| 1 | the command failed (a GryviaError, a failed job with --wait, invalid input files) |
| 2 | usage error (bad flag or argument; Typer/Click) |
| 130 | interrupted (Ctrl-C) |
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class GryviaError(Exception):
    """An expected failure: printed as one line plus an optional hint, never a traceback."""

    exit_code = EXIT_FAILED

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(GryviaError):
    """The command line is wrong in a way Typer cannot see (e.g. two exclusive options)."""

    exit_code = EXIT_USAGE
