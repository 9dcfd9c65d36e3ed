"""`gryvia checkpoint create|list|get|delete`: GryviaCheckpointGuards and their jobs' steps."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.kindcommands import add_get, add_list
from gryvia_cli.cli.objects import ObjectGroup, TableSpec
from gryvia_cli.cli.options import NamespaceOpt, OutputOpt, YesOpt, check_new_name
from gryvia_cli.cli.session import session
from gryvia_cli.core.checkpointguards import (
    GUARD_COLUMNS,
    GUARD_WIDE_COLUMNS,
    guard_details,
    guard_row,
    guard_wide_row,
)
from gryvia_cli.errors import UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import success

app = typer.Typer(
    help="Checkpoint guards: save and resume selected jobs.",
    no_args_is_help=True,
)
NameArg = Annotated[str, typer.Argument(help="Checkpoint guard name.", show_default=False)]
GUARDS = ObjectGroup(r.CHECKPOINT_GUARD, "checkpoint guard", "checkpoint")


@app.command("create")
def create(
    ctx: typer.Context,
    name: NameArg,
    selector: Annotated[
        list[str] | None,
        typer.Option(
            "--selector",
            "-l",
            metavar="KEY=VALUE",
            help="Job label to select (repeatable; none: every job of the namespace).",
        ),
    ] = None,
    interval: Annotated[
        int, typer.Option("--interval", metavar="SECONDS", help="Save interval, 10..86400.")
    ] = 600,
    directory: Annotated[
        str, typer.Option("--directory", help="Folder under the job's PVC mount /data.")
    ] = "checkpoints",
    whole_job: Annotated[
        bool,
        typer.Option(
            "--whole-job/--lost-pods-only",
            help="After a loss restart every rank of a non-elastic job, or only the lost pods.",
        ),
    ] = True,
    no_restore: Annotated[
        bool, typer.Option("--no-restore", help="Record commits but start pods afresh.")
    ] = False,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Create (or update) a checkpoint guard for the jobs with the given labels.

    Guarded jobs need spec.storage (their checkpoints live on the job's PVC) and the operator
    flag --enable-checkpoint-guards (chart value aiOperator.checkpointGuard).

    Examples:
      gryvia checkpoint create guarded -l checkpoint=on --interval 300
      gryvia checkpoint create all-jobs --directory ckpt --lost-pods-only -n ml
    """
    check_new_name(name, "checkpoint guard name")
    from gryvia_cli.core.checkpointguards import build_guard, parse_selector

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    try:
        labels = parse_selector(selector or [])
        body = build_guard(
            name, ns, labels, interval, directory, restore=not no_restore, whole_job=whole_job
        )
    except ValueError as exc:
        raise UsageError(str(exc), hint="see 'gryvia checkpoint create --help'") from None
    obj = state.access().apply(r.CHECKPOINT_GUARD, body, ns)
    success(f"checkpoint guard {ns}/{name} applied")
    GUARDS.print_written(state, obj, output)


add_list(
    app,
    GUARDS,
    TableSpec(
        GUARD_COLUMNS,
        lambda g, _now: guard_row(g),
        GUARD_WIDE_COLUMNS,
        lambda g, _now: guard_wide_row(g),
    ),
    "List checkpoint guards: selector, interval, jobs guarded, last restore.",
    "DIRECTORY and WHOLE-JOB",
)
add_get(
    app,
    GUARDS,
    lambda g, _now: guard_details(g),
    "Show one guard: what it selects, where jobs save, each job's committed steps and the "
    "last restore.",
    "guarded",
)


@app.command("delete")
def delete(
    ctx: typer.Context, name: NameArg, namespace: NamespaceOpt = None, yes: YesOpt = False
) -> None:
    """Delete a guard (running jobs keep their env; their records stay in `<job>-checkpoint`).

    Examples:
      gryvia checkpoint delete guarded --yes
    """
    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    GUARDS.delete(
        state,
        name,
        ns,
        yes,
        question=f"Delete checkpoint guard {ns}/{name}?",
        done=f"checkpoint guard {ns}/{name} deleted",
    )
