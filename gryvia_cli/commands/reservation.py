"""`gryvia reservation create|list|get|delete`: GPU nodes held for an owner over a window.

The operator (`--enable-reservations`) claims, taints and labels the nodes while the window
is open; jobs of the owner opt in with the annotation `gryvia.io/reservation: <name>`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.kindcommands import add_get
from gryvia_cli.cli.objects import ObjectGroup
from gryvia_cli.cli.options import OutputOpt, YesOpt, check_new_name
from gryvia_cli.cli.session import Session, session
from gryvia_cli.core.reservations import reservation_details
from gryvia_cli.errors import GryviaError, UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import info, render_table, success

app = typer.Typer(
    help="GPU reservations: create, list, show and delete them.", no_args_is_help=True
)
NameArg = Annotated[str, typer.Argument(help="Reservation name.", show_default=False)]
RESERVATIONS = ObjectGroup(r.RESERVATION, "reservation", "reservation")


@app.command("create")
def create(
    ctx: typer.Context,
    name: NameArg,
    owner: Annotated[
        str,
        typer.Option(
            "--owner",
            metavar="TYPE:NAME",
            help="Who may use it: team:NAME (job label gryvia.io/team), namespace:NAME or "
            "tenant:NAME.",
            show_default=False,
        ),
    ],
    gpu_type: Annotated[
        str | None, typer.Option("--gpu-type", metavar="TYPE", help="GPU type, e.g. H100.")
    ] = None,
    gpus: Annotated[
        int | None,
        typer.Option("--gpus", min=1, metavar="N", help="GPUs to hold (whole nodes)."),
    ] = None,
    node: Annotated[
        list[str] | None,
        typer.Option("--node", metavar="NAME", help="Hold exactly this node; repeatable."),
    ] = None,
    start: Annotated[
        str | None,
        typer.Option(
            "--start", metavar="TIME", help="Window start (RFC 3339, UTC) [default: now]."
        ),
    ] = None,
    end: Annotated[
        str | None, typer.Option("--end", metavar="TIME", help="Window end (RFC 3339, UTC).")
    ] = None,
    duration: Annotated[
        str | None,
        typer.Option(
            "--duration",
            metavar="D",
            help="Window length (90m, 8h, 2d): the end of a one-off window, or each window "
            "of --cron.",
        ),
    ] = None,
    cron: Annotated[
        str | None,
        typer.Option(
            "--cron",
            metavar="EXPR",
            help="Recurring windows: 5-field cron in UTC, e.g. '0 22 * * 1-5'.",
        ),
    ] = None,
    exclusive: Annotated[
        bool, typer.Option("--exclusive", help="Also label the nodes gryvia.io/exclusive=true.")
    ] = False,
    output: OutputOpt = None,
) -> None:
    """Reserve GPU nodes for an owner over a time window.

    Immediate (from now, until --end or for --duration), scheduled (--start), or recurring
    (--cron with --duration per window). While a window is open the operator holds whole
    Ready nodes of --gpu-type until --gpus are covered (all or nothing), taints them
    gryvia.io/reserved=<owner>:NoSchedule and labels them gryvia.io/reserved-for=NAME; the
    owner's jobs annotated gryvia.io/reservation: NAME run there, other jobs do not.

    Examples:
      gryvia reservation create demo-day --owner team:ml --gpu-type H100 --gpus 8 --duration 4h
      gryvia reservation create launch --owner tenant:acme --gpu-type A100-80G --gpus 16 \\
        --start 2026-12-02T08:00:00Z --end 2026-12-02T20:00:00Z
      gryvia reservation create nightly --owner namespace:research --node gpu-7 \\
        --cron '0 22 * * *' --duration 8h
    """
    check_new_name(name, "reservation name")
    from gryvia_cli.core.reservations import build_reservation

    state = session(ctx)
    try:
        body = build_reservation(
            name,
            owner=owner,
            now=state.now(),
            gpu_type=gpu_type,
            gpus=gpus,
            nodes=node or [],
            start=start,
            end=end,
            duration=duration,
            cron=cron,
            exclusive=exclusive,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if gpu_type:
        _check_gpu_type(state, gpu_type)
    obj = state.access().create(r.RESERVATION, body, None)
    success(f"reservation {name} created; annotate jobs gryvia.io/reservation: {name}")
    RESERVATIONS.print_written(state, obj, output)


def _check_gpu_type(state: Session, gpu_type: str) -> None:
    """UsageError when the cluster's nodes are readable and none carries `gpu_type` (label
    gryvia.io/gpu, normalized as the operator compares it): such a reservation never holds a
    node. Unreadable nodes (no permission) leave the check to the operator."""
    from gryvia_operator.api.gputype import gpu_type_matches
    from gryvia_operator.api.names import LABEL_GPU

    try:
        nodes = state.access().items(r.NODE, None)
    except GryviaError:
        return
    types = sorted({t for n in nodes if (t := (n["metadata"].get("labels") or {}).get(LABEL_GPU))})
    if not any(gpu_type_matches(gpu_type, t) for t in types):
        raise UsageError(
            f"--gpu-type {gpu_type}: no node carries this GPU type (label {LABEL_GPU}), so the "
            "reservation would never hold a node",
            hint="GPU types of the cluster's nodes: " + (", ".join(types) or "none"),
        )


@app.command("list")
def list_reservations(ctx: typer.Context, output: OutputOpt = None) -> None:
    """List reservations.

    Columns NAME, OWNER, GPUS, GPU TYPE, STATE (pending, active, expired), NODES held,
    WINDOW. `-o json|yaml` prints the GryviaReservationList.

    Examples:
      gryvia reservation list
      gryvia reservation list -o json | jq -r '.items[] | select(.status.state=="active")'
    """
    from gryvia_cli.core.reservations import RESERVATION_COLUMNS, reservation_row
    from gryvia_operator.api import GryviaReservation

    state = session(ctx)
    found = RESERVATIONS.listed(state, GryviaReservation, state.fmt(output))
    if found is None:
        return
    found.sort(key=lambda x: x.name)
    render_table(list(RESERVATION_COLUMNS), [reservation_row(x) for x in found])
    info(f"Total: {len(found)} reservation(s)")


add_get(
    app,
    RESERVATIONS,
    lambda r_, _now: reservation_details(r_),
    "Show one reservation: owner, GPUs, schedule, state, nodes held.",
    "demo-day",
)


@app.command("delete")
def delete(ctx: typer.Context, name: NameArg, yes: YesOpt = False) -> None:
    """Delete (cancel) a reservation: the operator releases its nodes first.

    Asks first unless --yes or stdin is not a terminal.

    Examples:
      gryvia reservation delete demo-day --yes
    """
    RESERVATIONS.delete(
        session(ctx),
        name,
        None,
        yes,
        question=f"Delete reservation {name} and release its nodes?",
        done=f"reservation {name} deleted; its nodes are released",
    )
