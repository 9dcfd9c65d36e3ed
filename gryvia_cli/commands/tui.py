"""`gryvia tui`: the interactive console."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.options import AllNamespacesOpt, NamespaceOpt
from gryvia_cli.cli.session import session

app = typer.Typer()


@app.command()
def tui(
    ctx: typer.Context,
    namespace: NamespaceOpt = None,
    all_namespaces: AllNamespacesOpt = False,
    readonly: Annotated[
        bool, typer.Option("--readonly", help="Hide every action that changes the cluster.")
    ] = False,
) -> None:
    """Open the interactive console: jobs, queue, capacity, cost, nodes, submit.

    Press ? inside for every key, : to jump to a view, ctrl+p for the command palette.

    Examples:
      gryvia tui -A
      gryvia tui -n team-a --readonly
      gryvia --context prod tui
    """
    from gryvia_cli.tui import run

    state = session(ctx)
    run(
        kubeconfig=str(state.kubeconfig) if state.kubeconfig else None,
        context=state.context,
        namespace=namespace or state.namespace,
        all_namespaces=all_namespaces,
        readonly=readonly,
    )
