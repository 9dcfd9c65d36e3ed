"""The `gryvia` root command: global options and the command groups.

Start-up stays light: heavy libraries (kubernetes, textual, kopf) are imported only inside
the commands that need them; `tests/unit/test_import_hygiene.py` guards this.
"""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli import __version__
from gryvia_cli.commands import sandbox

app = typer.Typer(
    name="gryvia",
    help="Gryvia: submit, follow and account for GPU jobs on Kubernetes.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(sandbox.app, name="sandbox")


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"gryvia {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the client version and exit.",
        ),
    ] = False,
) -> None:
    """Gryvia: a terminal-first GPU platform for Kubernetes."""


def main() -> None:
    """Console-script entry point: expected errors become one line and an exit code."""
    import sys

    from gryvia_cli.errors import EXIT_INTERRUPTED, GryviaError

    try:
        app()
    except GryviaError as exc:
        sys.stderr.write(f"error: {exc.message}\n")
        if exc.hint:
            sys.stderr.write(f"hint: {exc.hint}\n")
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(EXIT_INTERRUPTED) from None
