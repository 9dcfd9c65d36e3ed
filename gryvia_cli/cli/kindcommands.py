"""The `list` and `get` commands every kind's group has, made once from its `ObjectGroup`:
the same options (`-n`, `-A`, `-o`), the same lookup, hint and rendering, and help built from
a one-line summary (`gryvia hook get`, `gryvia serve list`, ...). A group whose `list` or
`get` takes more options (`workflow get --run`, `workspace list`'s total) writes its own.

The model is the kind's (`KindInfo.model`, looked up when the command runs).
"""

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Annotated, Any

import typer

from gryvia_cli.cli.objects import ObjectGroup, TableSpec
from gryvia_cli.cli.options import AllNamespacesOpt, NamespaceOpt, OutputOpt
from gryvia_cli.cli.session import session

Details = Callable[[Any, datetime], Sequence[tuple[str, str]]]
"""Label/value lines of one validated object at a time (`core.<kind>s.<kind>_details`)."""


def _model(group: ObjectGroup) -> type[Any]:
    from gryvia_operator.api.registry import kind_info

    return kind_info(group.resource.kind).model


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def add_get(
    app: typer.Typer,
    group: ObjectGroup,
    details: Details,
    summary: str,
    example: str,
) -> None:
    """Add `gryvia GROUP get NAME [-n NS] [-o FORMAT]` to `app`: `details(object, now)` gives
    the lines of the object validated as the kind's model; the help is `summary` and two
    examples naming `example`. A cluster-scoped kind's command has no `-n`."""
    doc = (
        f"{summary}\n\nExamples:\n  gryvia {group.group} get {example}\n"
        f"  gryvia {group.group} get {example} -o yaml\n"
    )
    name_arg = Annotated[
        str, typer.Argument(help=f"{_capital(group.noun)} name.", show_default=False)
    ]

    def show(ctx: typer.Context, name: str, namespace: str | None, output: Any) -> None:
        state = session(ctx)
        ns = state.resolve_namespace(namespace) if group.resource.namespaced else None
        now = state.now()
        group.show(state, name, ns, output, _model(group), lambda item: details(item, now))

    if group.resource.namespaced:

        def get(
            ctx: typer.Context,
            name: name_arg,
            namespace: NamespaceOpt = None,
            output: OutputOpt = None,
        ) -> None:
            show(ctx, name, namespace, output)

    else:

        def get(  # type: ignore[misc]
            ctx: typer.Context,
            name: name_arg,
            output: OutputOpt = None,
        ) -> None:
            show(ctx, name, None, output)

    get.__doc__ = doc
    app.command("get")(get)


def add_list(
    app: typer.Typer,
    group: ObjectGroup,
    table: TableSpec[Any],
    summary: str,
    wide: str,
    empty: str | None = None,
) -> None:
    """Add `gryvia GROUP list [-n NS | -A] [-o FORMAT]` of a namespaced kind to `app`:
    `table` builds the rows of the objects validated as the kind's model; the help is
    `summary`, then what `-A` and `-o wide` (`wide`: the columns it adds) do, then two
    examples. `empty` is the line said when there is nothing (default `No <noun>s found.`)."""
    doc = (
        f"{summary}\n\n`-A` puts NAMESPACE first; `-o wide` adds {wide}; `-o json|yaml` prints "
        f"the List.\n\nExamples:\n  gryvia {group.group} list\n"
        f"  gryvia {group.group} list -A -o wide\n"
    )

    def list_objects(
        ctx: typer.Context,
        namespace: NamespaceOpt = None,
        all_namespaces: AllNamespacesOpt = False,
        output: OutputOpt = None,
    ) -> None:
        state = session(ctx)
        group.print_table(state, _model(group), output, namespace, all_namespaces, table, empty)

    list_objects.__doc__ = doc
    app.command("list")(list_objects)
