"""The `gryvia` entry point: the start-up fast path (`cli.fastpath`) for the commands it
knows, else the Typer app of `cli.root` (help, completion and docs always come from it).

`gryvia_cli.main.app` and `.COMMANDS` still name the app and the command table (imported on
first access), for the docs generator and the tests.
"""

from __future__ import annotations

from typing import Any

from gryvia_cli.gcpause import relax

relax()  # before the imports below: start-up allocates much and makes almost no cycles


def main(prog_name: str = "gryvia") -> None:
    """Console-script entry point. Expected errors become one message and an exit code in one
    place for the Typer app, `GryviaGroup.invoke` (gryvia_cli/cli/group.py), whose mapping
    the fast path repeats (`cli.fastpath.run_fast`)."""
    import os
    import sys

    if os.environ.get("_GRYVIA_COMPLETE"):  # shell completion asks for candidates
        from typer._completion_classes import completion_init

        completion_init()
    else:
        from gryvia_cli.cli.fastpath import run_fast

        code = run_fast(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    from gryvia_cli.cli.root import app

    app(prog_name=prog_name)


def kubectl_main() -> None:
    """Entry point `kubectl-gryvia`: kubectl runs it for `kubectl gryvia ARGS` when it is on
    PATH (kubectl's plugin mechanism; docs/kubectl-plugin.md). The same commands and options;
    usage lines and hints read `kubectl gryvia ...`."""
    main("kubectl gryvia")


def __getattr__(name: str) -> Any:
    """`app`, `root` and `COMMANDS` of `cli.root`, imported on first access."""
    if name in ("app", "root", "COMMANDS"):
        from gryvia_cli.cli import root

        return getattr(root, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
