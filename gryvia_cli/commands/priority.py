"""`gryvia priority create|list|get|delete`: GryviaPriorities (each owns a PriorityClass)."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.objects import ObjectGroup
from gryvia_cli.cli.options import OutputOpt, YesOpt, check_new_name
from gryvia_cli.cli.session import session
from gryvia_cli.errors import UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import OutputFormat, info, render_one, render_table, success

app = typer.Typer(help="Job priorities: create, list, show and delete them.", no_args_is_help=True)
NameArg = Annotated[str, typer.Argument(help="Priority name.", show_default=False)]
PRIORITIES = ObjectGroup(r.PRIORITY, "priority", "priority")


@app.command("create")
def create(
    ctx: typer.Context,
    name: NameArg,
    value: Annotated[
        int,
        typer.Option(
            "--value", help="Priority value; higher wins (-1e9..1e9).", show_default=False
        ),
    ],
    preemption: Annotated[
        str,
        typer.Option(
            "--preemption",
            help="PreemptLowerPriority (its jobs may preempt lower ones) or Never (they wait).",
        ),
    ] = "PreemptLowerPriority",
    description: Annotated[
        str | None, typer.Option("--description", help="What the priority is for.")
    ] = None,
    output: OutputOpt = None,
) -> None:
    """Create or update a priority (server-side apply).

    The operator (with priorities enabled) keeps a PriorityClass of the same name with this
    value; jobs use it with `spec.priorityClassName: NAME`. Changing the value replaces the
    PriorityClass (running pods keep the priority they started with).

    Examples:
      gryvia priority create urgent --value 50000 --description "deadline work"
      gryvia priority create batch --value 100 --preemption Never
    """
    check_new_name(name, "priority name")
    from gryvia_cli.core.priorities import build_priority

    try:
        body = build_priority(name, value, preemption, description)
    except ValueError as exc:
        raise UsageError(str(exc), hint="see 'gryvia priority create --help'") from None
    state = session(ctx)
    obj = state.access().apply(r.PRIORITY, body)
    success(f"priority {name} applied")
    PRIORITIES.print_written(state, obj, output)


@app.command("list")
def list_priorities(ctx: typer.Context, output: OutputOpt = None) -> None:
    """List priorities, highest value first.

    Columns NAME, VALUE, PREEMPTION, READY (pending until the operator applied its
    PriorityClass), USED-BY-SPEC.PRIORITY (the `spec.priority` range the table maps to it);
    `-o wide` adds PRIORITYCLASS and DESCRIPTION. `-o json|yaml` prints the list.

    Examples:
      gryvia priority list
      gryvia priority list -o wide
    """
    from gryvia_cli.core.priorities import PRIORITY_COLUMNS, PRIORITY_WIDE_COLUMNS, priority_row
    from gryvia_operator.api import GryviaPriority

    state = session(ctx)
    fmt = state.fmt(output)
    empty = "No priorities found (the operator creates the table's with priorities enabled)."
    found = PRIORITIES.listed(state, GryviaPriority, fmt, None, empty)
    if found is None:
        return
    found.sort(key=lambda p: (-p.spec.value, p.name))
    wide = fmt is OutputFormat.wide
    columns = PRIORITY_WIDE_COLUMNS if wide else PRIORITY_COLUMNS
    render_table(columns, [priority_row(p, wide) for p in found])
    info(f"Total: {len(found)} priority(ies)")


@app.command("get")
def get(ctx: typer.Context, name: NameArg, output: OutputOpt = None) -> None:
    """Show one priority: value, preemption policy, its PriorityClass and the jobs naming it.

    Examples:
      gryvia priority get gryvia-high
      gryvia priority get urgent -o yaml
    """
    from gryvia_cli.core.priorities import priority_details
    from gryvia_operator.api import GryviaPriority

    state = session(ctx)
    fmt = state.fmt(output)
    obj = PRIORITIES.read(state, name)

    def details() -> list[tuple[str, str]]:
        used: dict[str, int] = {}  # jobs naming this priority, per namespace
        for job in state.access().list_objects(r.AIJOB).get("items") or []:
            if (job.get("spec") or {}).get("priorityClassName") == name:
                ns = str((job.get("metadata") or {}).get("namespace", ""))
                used[ns] = used.get(ns, 0) + 1
        return list(priority_details(GryviaPriority.model_validate(obj), used))

    render_one(obj, fmt, f"{r.PRIORITY.qualified}/{name}", details)


@app.command("delete")
def delete(ctx: typer.Context, name: NameArg, yes: YesOpt = False) -> None:
    """Delete a priority and, with it, its PriorityClass (running pods keep their priority;
    new pods of jobs naming it are refused until it exists again).

    Examples:
      gryvia priority delete urgent --yes
    """
    PRIORITIES.delete(session(ctx), name, None, yes)
