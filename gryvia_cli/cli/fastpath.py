"""Start-up fast path: `gryvia list jobs` and `gryvia tui` run without importing Typer and Click.

Building the Typer app costs about 50 ms of every start (importing typer and click, then the
root group's options), more than kubectl takes to list 200 objects. `run_fast` recognises
the plain forms of `list jobs` (alias `ls`, noun `job`): the global options `--kubeconfig`,
`--context`, `-n/--namespace`, `-o/--output` (table, wide, json, yaml, name), `-v/--verbose`
and `--no-color` before or after the command, and the command's own `-A/--all-namespaces`,
`-n`, `-o` and `-l/--selector`. It builds the same `Session` the root callback builds and
calls the same body (`views.joblist.list_jobs`) the Typer command calls, mapping errors to
exit codes as `GryviaGroup.invoke` does. `tui` (its `-A`, `-n` and `--readonly`, the same global
options) calls the console's `run` as `commands.tui` does: the console's first rows must not
wait for the CLI's command table (issue 42).

Anything else returns None and the Typer app runs as before: help (`-h`), another command
or option, an argument, a template format (`-o jsonpath=...`), `--`, a value given as
`-oVALUE`, `GRYVIA_OUTPUT` or `GRYVIA_VERBOSE` set (Click's conversion of them), shell
completion. So usage errors, help and completion always come from the one Typer app, and a
form this module does not know costs nothing but the look at argv.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gryvia_cli.cli.session import Session

VERBS = frozenset({"list", "ls"})
TUI = "tui"
NOUNS = frozenset({"jobs", "job"})
FORMATS = ("table", "wide", "json", "yaml", "name")
"""`-o` values the fast path takes; templates go to the Typer app (its parser checks them)."""
VALUE_OPTIONS = {
    "--kubeconfig": "kubeconfig",
    "--context": "context",
    "-n": "namespace",
    "--namespace": "namespace",
    "-o": "output",
    "--output": "output",
}
"""Options with a value (`-x V`, and `--long=V`), global or the command's: where they go."""
COMMAND_ONLY = {"-l": "selector", "--selector": "selector"}
FLAGS = {
    "-v": "verbose",
    "--verbose": "verbose",
    "--no-color": "no_color",
}
COMMAND_FLAGS = {"-A": "all_namespaces", "--all-namespaces": "all_namespaces"}
TUI_FLAGS = COMMAND_FLAGS | {"--readonly": "readonly"}
HOISTED = frozenset({"--kubeconfig", "--context"})
"""Value options also taken between `list` and `jobs` (`GryviaGroup` hoists them)."""


@dataclass
class FastArgs:
    """A `list jobs` or `tui` command line parsed: the root's options (`root_*`) and the
    command's."""

    command: str = "list"
    kubeconfig: str | None = None
    context: str | None = None
    root_namespace: str | None = None
    root_output: str | None = None
    namespace: str | None = None
    output: str | None = None
    selector: str | None = None
    all_namespaces: bool = False
    readonly: bool = False
    verbose: bool = False
    no_color: bool = False
    seen: set[str] = field(default_factory=set)


def parse(argv: list[str], environ: dict[str, str] | None = None) -> FastArgs | None:
    """The parsed command line when it is a `list jobs` or `tui` form the fast path runs (see the
    module docstring), else None. Later occurrences of an option win, as in Click."""
    env = os.environ if environ is None else environ
    if env.get("GRYVIA_OUTPUT") or env.get("GRYVIA_VERBOSE") or env.get("_GRYVIA_COMPLETE"):
        return None
    args = FastArgs()
    position = 0  # 0: before the verb, 1: after the verb, 2: after the noun
    index = 0
    while index < len(argv):
        token = argv[index]
        index += 1
        if not token.startswith("-") or token == "-":
            if position == 0 and token in VERBS:
                position = 1
            elif position == 0 and token == TUI:
                position, args.command = 2, TUI
            elif position == 1 and token in NOUNS:
                position = 2
            else:
                return None
            continue
        name, equals, inline = token.partition("=")
        if equals and not name.startswith("--"):
            return None  # `-o=json`: Click reads the value as `=json`
        own = TUI_FLAGS if args.command == TUI else COMMAND_FLAGS
        if token in FLAGS or (position == 2 and token in own):
            setattr(args, (FLAGS | own)[token], True)
            continue
        listing = position == 2 and args.command != TUI
        where = VALUE_OPTIONS.get(name) or (COMMAND_ONLY.get(name) if listing else None)
        if where is None or (position == 1 and name not in HOISTED):
            return None  # `list -n X jobs`: the list group has no -n (Click's usage error)
        if where == "output" and position == 2 and args.command == TUI:
            return None  # `tui -o`: no such option of tui (Click's usage error)
        if not equals:
            if index >= len(argv):
                return None  # a missing value: Click's usage error
            inline = argv[index]
            index += 1
        if where in ("namespace", "output") and position == 0:
            where = f"root_{where}"
        setattr(args, where, inline)
    if position != 2 or args.kubeconfig == "":
        return None
    if any(v is not None and v not in FORMATS for v in (args.output, args.root_output)):
        return None
    return args


def run_fast(argv: list[str]) -> int | None:
    """Run `argv` when `parse` accepts it and return the exit code (0 done, a GryviaError's
    code, 130 interrupted, 1 when stdout was closed early); None: the Typer app must run it."""
    args = parse(argv)
    if args is None:
        return None
    from gryvia_cli.errors import EXIT_INTERRUPTED, GryviaError
    from gryvia_cli.output import configure, report_error

    configure(no_color=args.no_color, verbose=args.verbose)
    if args.verbose:
        import logging

        logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")
    try:
        (_tui if args.command == TUI else _list_jobs)(args)
    except GryviaError as exc:
        report_error(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `gryvia list jobs | head`: as Click's main does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return 0


def _session(args: FastArgs) -> Session:
    """The `Session` the root callback would build from these global options."""
    from gryvia_cli.cli.session import Session
    from gryvia_cli.output import OutputFormat

    env = os.environ  # Click reads an option's variable only when the option is not given
    context = args.context if args.context is not None else env.get("GRYVIA_CONTEXT")
    namespace = args.root_namespace
    namespace = namespace if namespace is not None else env.get("GRYVIA_NAMESPACE")
    return Session(
        kubeconfig=Path(args.kubeconfig) if args.kubeconfig else None,
        context=context or None,
        namespace=namespace or None,
        verbose=args.verbose,
        output=OutputFormat(args.root_output) if args.root_output else None,
        no_color=args.no_color,
    )


def _tui(args: FastArgs) -> None:
    from gryvia_cli.tui import run

    state = _session(args)
    run(
        kubeconfig=str(state.kubeconfig) if state.kubeconfig else None,
        context=state.context,
        namespace=args.namespace or state.namespace,
        all_namespaces=args.all_namespaces,
        readonly=args.readonly,
    )


def _list_jobs(args: FastArgs) -> None:
    from gryvia_cli.output import OutputFormat
    from gryvia_cli.views.joblist import list_jobs

    state = _session(args)
    local = OutputFormat(args.output) if args.output else None
    list_jobs(
        state,
        state.fmt(local),
        namespace=args.namespace or None,
        all_namespaces=args.all_namespaces,
        selector=args.selector or None,
    )
