"""The `gryvia` root command (the Typer app): global options; the command groups come from
`cli/commandtable.py`.

Start-up stays light: heavy libraries (kubernetes, textual, kopf) are imported only inside
the commands that need them; `tests/unit/cli/test_import_hygiene.py` guards this. Help is
plain Click help grouped by section (Rich help would cost ~80 ms per start). `gryvia_cli.main`
imports this module only when the start-up fast path (`cli.fastpath`) does not run the
command itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gryvia_cli.cli.commandtable import COMMANDS
from gryvia_cli.cli.group import GryviaGroup
from gryvia_cli.cli.session import Session
from gryvia_cli.output import OutputFormat
from gryvia_cli.outputtemplates import output_completion, output_parser

for _entry, _aliases in COMMANDS:
    GryviaGroup.register(_entry, _aliases)

app = typer.Typer(
    name="gryvia",
    cls=GryviaGroup,
    help="Gryvia CLI - manage GPU jobs on Kubernetes: submit, follow, inspect, plan capacity.",
    epilog="Run `gryvia COMMAND --help` for a command's options and examples. "
    "Exit codes: 0 ok, 1 failed, 2 usage, 130 interrupted.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def _version_callback(value: bool) -> None:
    if value:
        from gryvia_cli import __version__

        typer.echo(f"gryvia {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the client version and exit.",
        ),
    ] = False,
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            "--kubeconfig",
            metavar="FILE",
            help="Kubeconfig file [default: $KUBECONFIG (several files merged), else "
            "~/.kube/config, else the pod's service account].",
            show_default=False,
        ),
    ] = None,
    context: Annotated[
        str | None,
        typer.Option(
            "--context",
            metavar="NAME",
            envvar="GRYVIA_CONTEXT",
            help="Kubeconfig context [default: the current context; env: GRYVIA_CONTEXT].",
            show_default=False,
            show_envvar=False,
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option(
            "-n",
            "--namespace",
            metavar="NAMESPACE",
            envvar="GRYVIA_NAMESPACE",
            help="Namespace [default: `gryvia config set-namespace`, else the context's, else "
            "default; env: GRYVIA_NAMESPACE].",
            show_default=False,
            show_envvar=False,
        ),
    ] = None,
    output: Annotated[
        OutputFormat | None,
        typer.Option(
            "-o",
            "--output",
            metavar="FORMAT",
            envvar="GRYVIA_OUTPUT",
            parser=output_parser(OutputFormat),
            autocompletion=output_completion(OutputFormat),
            help="Output format of read commands: table, wide, json, yaml, name, "
            "jsonpath=TEMPLATE, custom-columns=SPEC (and their -file=FILE forms, as kubectl's) "
            "[env: GRYVIA_OUTPUT].",
            show_default=False,
            show_envvar=False,
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "-v",
            "--verbose",
            envvar="GRYVIA_VERBOSE",
            help="Show details of errors (the API server's reply) and debug logs "
            "[env: GRYVIA_VERBOSE].",
            show_envvar=False,
        ),
    ] = False,
    no_color: Annotated[
        bool,
        typer.Option(
            "--no-color",
            help="No colours (also when NO_COLOR is set or output is not a terminal; "
            "CLICOLOR_FORCE=1 keeps them).",
        ),
    ] = False,
) -> None:
    """Gryvia: a terminal-first GPU platform for Kubernetes."""
    from gryvia_cli.output import configure

    configure(no_color=no_color, verbose=verbose)
    state = ctx.obj if isinstance(ctx.obj, Session) else Session()
    state.kubeconfig = kubeconfig or state.kubeconfig
    state.context = context or state.context
    state.namespace = namespace or state.namespace
    state.output = output or state.output
    state.verbose = verbose or state.verbose
    state.no_color = no_color or state.no_color
    ctx.obj = state
    if verbose:
        import logging

        logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")
