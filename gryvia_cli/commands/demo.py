"""`gryvia demo`: a sandbox with the chart, the operator, tenants and jobs in every state."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from gryvia_cli.errors import GryviaError
from gryvia_cli.output import info, render_table

if TYPE_CHECKING:
    from gryvia_cli.sandbox.cluster import Sandbox

app = typer.Typer(
    help="Run the demo: a sandbox with Gryvia installed and seeded.", no_args_is_help=True
)


def _bring_up() -> Sandbox:
    from gryvia_cli.cli.binaries import ensure_binaries
    from gryvia_cli.sandbox import demo

    ensure_binaries(yes=True)
    return demo.up(progress=lambda m: info(f"• {m}"))


@app.command()
def up(
    tui: Annotated[
        bool, typer.Option("--tui/--no-tui", help="Open the console at the end.")
    ] = True,
) -> None:
    """Start (or reuse) the demo sandbox, install Gryvia, seed it, and open the console.

    Builds the Kubernetes binaries first if they are missing. Seeds a GPU price catalog, two
    tenants with quotas and budgets, and jobs that are running, queued over quota, pending
    for an absent GPU type, succeeded, failed, and imported from a Slurm script.

    Examples:
      gryvia demo up
      gryvia demo up --no-tui
      KUBECONFIG=$(gryvia sandbox kubeconfig --name demo --path) gryvia queue -A
    """

    box = _bring_up()
    info(f"demo is up: context {box.context}; stop it with 'gryvia demo down'")
    if tui and sys.stdin.isatty() and sys.stdout.isatty():
        from gryvia_cli.tui import run

        run(
            kubeconfig=str(box.kubeconfig),
            context=None,
            namespace=None,
            all_namespaces=True,
            readonly=False,
        )
    else:
        info(f"  console: gryvia --kubeconfig {box.kubeconfig} tui -A")


@app.command()
def check(
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for every state.")
    ] = 240.0,
) -> None:
    """Bring the demo up without the console, print what it set up, and check each state.

    Exits 1 when a state is not reached within --timeout seconds (for CI).

    Examples:
      gryvia demo check
    """
    from gryvia_cli.sandbox import demo

    box = _bring_up()
    info("• waiting for every demo state")
    checks = demo.wait_for_checks(box, timeout)
    render_table(
        ["check", "expected", "observed", "ok"],
        [[c.what, c.expected, c.observed, "yes" if c.ok else "NO"] for c in checks],
    )
    failed = [c for c in checks if not c.ok]
    if failed:
        raise GryviaError(
            f"{len(failed)} of {len(checks)} demo checks failed",
            hint=f"logs: {box.workdir / 'logs'}",
        )
    info(f"all {len(checks)} demo checks passed")


@app.command()
def down(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Stop the demo sandbox and everything it runs (operator included).

    Examples:
      gryvia demo down --yes
    """
    from gryvia_cli.sandbox import cluster, demo

    if not cluster.Sandbox(demo.DEMO_NAME).workdir.exists():
        info("no demo is running")
        return
    if not yes and sys.stdin.isatty() and not typer.confirm("Stop the demo sandbox?", default=True):
        raise typer.Exit(1)
    cluster.down(demo.DEMO_NAME)
    info("demo stopped")
