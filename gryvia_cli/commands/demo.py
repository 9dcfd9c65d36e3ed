"""`gryvia demo`: a sandbox with the chart, the operator, tenants and jobs in every state."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gryvia_cli.cli.options import MergeKubeconfigOpt
from gryvia_cli.errors import GryviaError
from gryvia_cli.output import info, render_table

if TYPE_CHECKING:
    from gryvia_cli.sandbox.cluster import Sandbox

app = typer.Typer(
    help="Run the demo: a sandbox with Gryvia installed and seeded.", no_args_is_help=True
)


NameOpt = Annotated[
    str, typer.Option("--name", help="Demo sandbox name; its context is gryvia-NAME.")
]


KueueOpt = Annotated[
    bool | None,
    typer.Option(
        "--kueue/--no-kueue",
        help="Run the demo with Kueue admitting the tenants' jobs (default: on when Kueue is "
        "built and you are root; a running demo keeps its mode).",
        show_default=False,
    ),
]


def _bring_up(name: str, kueue: bool | None) -> tuple[Sandbox, bool]:
    from gryvia_cli.cli.binaries import ensure_binaries
    from gryvia_cli.sandbox import cluster, demo, demokueue

    cluster.check_name(name)  # before any build or start
    with_kueue = demokueue.choose(kueue, cluster.Sandbox(name), info)
    ensure_binaries(yes=True)
    if with_kueue:
        info("• Kueue on: it admits the tenants' jobs (ClusterQueues gryvia-<tenant>)")
    box = demo.up(progress=lambda m: info(f"• {m}"), name=name, kueue=with_kueue)
    return box, with_kueue


def _say_how_to_reach(box: Sandbox, merged_into: Path | None) -> None:
    import yaml

    from gryvia_cli.sandbox import demo

    current = False
    if merged_into is not None and merged_into.is_file():
        data = yaml.safe_load(merged_into.read_text()) or {}
        current = data.get("current-context") == box.context
    for line in demo.reach_lines(box.context, box.kubeconfig, merged_into, current):
        info(line)


@app.command()
def up(
    name: NameOpt = "demo",
    tui: Annotated[
        bool, typer.Option("--tui/--no-tui", help="Open the console at the end.")
    ] = True,
    kubeconfig: MergeKubeconfigOpt = None,
    merge: Annotated[
        bool,
        typer.Option("--merge/--no-merge", help="Add the context gryvia-NAME to your kubeconfig."),
    ] = True,
    switch: Annotated[
        bool, typer.Option("--switch/--no-switch", help="Make gryvia-NAME the current context.")
    ] = True,
    kueue: KueueOpt = None,
) -> None:
    """Start (or reuse) the demo sandbox, install Gryvia, seed it, and open the console.

    Builds the Kubernetes binaries first if they are missing. Seeds a GPU price catalog, two
    tenants with quotas and budgets, and jobs that are running, queued over quota, pending
    for an absent GPU type, succeeded, failed, and imported from a Slurm script. With Kueue
    (the default when it is built and you are root) Kueue admits the tenants' jobs.

    Adds the context gryvia-NAME to your kubeconfig and makes it current (as `gryvia
    sandbox up` does), so `gryvia queue -A` works in another shell; also prints the exact
    `export KUBECONFIG=...` line for the demo alone, again when the console exits.

    Examples:
      gryvia demo up
      gryvia demo up --no-tui --name demo2
      gryvia demo up --no-merge
      gryvia demo up --no-kueue
    """
    from gryvia_cli.sandbox import kubeconfig as kc

    box, _ = _bring_up(name, kueue)
    target = None
    if merge:
        target = kubeconfig or kc.default_target()
        for note in kc.merge(box.kubeconfig, target, switch=switch):
            info(f"  {note}")
    info(f"demo is up: context {box.context}; stop it with 'gryvia demo down --name {name}'")
    _say_how_to_reach(box, target)
    if tui and sys.stdin.isatty() and sys.stdout.isatty():
        from gryvia_cli.tui import run

        try:
            run(
                kubeconfig=str(box.kubeconfig),
                context=None,
                namespace=None,
                all_namespaces=True,
                readonly=False,
            )
        finally:
            info(f"the demo keeps running: context {box.context}")
            _say_how_to_reach(box, target)
    else:
        info(f"  console: gryvia --kubeconfig {box.kubeconfig} tui -A")


@app.command()
def check(
    name: NameOpt = "demo",
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for every state.")
    ] = 240.0,
    kueue: KueueOpt = None,
) -> None:
    """Bring the demo up without the console, print what it set up, and check each state.

    Exits 1 when a state is not reached within --timeout seconds (for CI). Leaves your
    kubeconfig alone and prints the `export KUBECONFIG=...` line that reaches the demo. With
    Kueue it also checks Kueue's queues and prints the ClusterQueues' state.

    Examples:
      gryvia demo check
      gryvia demo check --no-kueue
    """
    from gryvia_cli.sandbox import demo, demokueue

    box, with_kueue = _bring_up(name, kueue)
    _say_how_to_reach(box, None)
    info("• waiting for every demo state")
    checks = demo.wait_for_checks(box, timeout, kueue=with_kueue)
    render_table(
        ["check", "expected", "observed", "ok"],
        [[c.what, c.expected, c.observed, "yes" if c.ok else "NO"] for c in checks],
    )
    if with_kueue:
        typer.echo("")
        render_table(
            ["clusterqueue", "cohort", "admitted", "pending", "gpus (flavor used/nominal)"],
            demokueue.queue_rows(box),
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
    name: NameOpt = "demo",
    kubeconfig: MergeKubeconfigOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Stop the demo sandbox and everything it runs (operator included); remove its context.

    Examples:
      gryvia demo down --yes
    """
    from gryvia_cli.sandbox import cluster
    from gryvia_cli.sandbox import kubeconfig as kc

    box = cluster.Sandbox(name)
    if not box.workdir.exists():
        info(f"no demo named {name!r} is running")
        return
    if not yes and sys.stdin.isatty() and not typer.confirm("Stop the demo sandbox?", default=True):
        raise typer.Exit(1)
    server = kc.server_of(box.kubeconfig)
    cluster.down(name)
    if server is not None:
        for note in kc.remove(box.context, kubeconfig or kc.default_target(), server=server):
            info(f"  {note}")
    info("demo stopped")
