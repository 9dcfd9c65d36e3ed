"""`gryvia delete KIND NAME...` (alias `rm`): delete jobs (or other Gryvia objects)."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.each import Outcome, act_on_each
from gryvia_cli.cli.options import NamespaceOpt, YesOpt, confirm
from gryvia_cli.cli.session import session
from gryvia_cli.errors import NotFoundError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import warn

app = typer.Typer()


@app.command("delete", rich_help_panel="Workloads")
def delete(
    ctx: typer.Context,
    kind: Annotated[
        str, typer.Argument(help="job (or quota, sku, node, ...).", show_default=False)
    ],
    names: Annotated[list[str], typer.Argument(help="Names to delete.", show_default=False)],
    yes: YesOpt = False,
    ignore_not_found: Annotated[
        bool, typer.Option("--ignore-not-found", help="Treat missing objects as deleted.")
    ] = False,
    namespace: NamespaceOpt = None,
) -> None:
    """Delete jobs (or other Gryvia objects).

    A job's pods, Service and batch Job go with it (garbage collection).

    Asks first unless --yes or stdin is not a terminal. Use `gryvia cancel` to stop a job
    but keep its record. Exit 1 when any object could not be deleted.

    Examples:
      gryvia delete job train-ddp --yes
      gryvia rm job a b c -n team-a -y
    """
    res = r.lookup(kind)
    state = session(ctx)
    ns = state.resolve_namespace(namespace) if res.namespaced else None
    where = f" in {ns}" if ns else ""
    if not confirm(f"Delete {r.noun(res)} {', '.join(names)}{where}?", yes):
        raise typer.Exit(1)
    access = state.access()

    def delete_one(name: str) -> Outcome:
        try:
            access.delete(res, name, ns)
        except NotFoundError:
            if not ignore_not_found:
                raise
            warn(f"{r.noun(res)} {name} not found{where}")
            return None
        return f"{r.noun(res)} {name} deleted", f"{res.qualified}/{name}"

    act_on_each(
        names,
        delete_one,
        label=lambda name: f"{r.noun(res)} {name}",
        what="object(s) could not be deleted",
    )
