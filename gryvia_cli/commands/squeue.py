"""`gryvia squeue`: Gryvia jobs in Slurm's squeue layout, states and reason codes."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.session import session
from gryvia_cli.errors import UsageError
from gryvia_cli.output import emit

app = typer.Typer()


@app.command("squeue", rich_help_panel="Workloads")
def squeue(
    ctx: typer.Context,
    user: Annotated[
        list[str] | None,
        typer.Option(
            "-u",
            "--user",
            help="Only jobs these users submitted (a job without a recorded submitter: its "
            "tenant), comma-separated.",
        ),
    ] = None,
    account: Annotated[
        list[str] | None,
        typer.Option(
            "-A",
            "--account",
            help="Only jobs of these accounts (tenants: the ACCOUNT column), comma-separated.",
        ),
    ] = None,
    me: Annotated[
        bool,
        typer.Option(
            "--me",
            help="Only jobs you submitted (you as the API server sees your kubeconfig user).",
        ),
    ] = False,
    states: Annotated[
        list[str] | None,
        typer.Option("-t", "--states", help="States to show (PD,R,CD,... or ALL)."),
    ] = None,
    partition: Annotated[
        list[str] | None, typer.Option("-p", "--partition", help="Only these GPU types.")
    ] = None,
    jobs: Annotated[
        list[str] | None, typer.Option("-j", "--jobs", help="Only these job names.")
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option("-o", "--format", help='squeue format, e.g. "%.18i %.2t %R".'),
    ] = None,
    start: Annotated[
        bool, typer.Option("--start", help="Pending jobs with their expected start time.")
    ] = False,
    noheader: Annotated[bool, typer.Option("-h", "--noheader", help="No header line.")] = False,
) -> None:
    """Jobs in Slurm's squeue layout: states, reasons, -o letters.

    Jobs as Slurm's squeue shows them: JOBID PARTITION NAME USER ST TIME NODES
    NODELIST(REASON), running jobs first, across every namespace you can read.

    JOBID is the job's name (`sweep_3` for element 3 of array sweep, whose job is sweep-3;
    its elements still waiting for the %N throttle show as one row `sweep_[2-5%2]`),
    PARTITION the GPU type it asks for, USER who submitted it (annotation
    gryvia.io/submitted-by, recorded by the admission webhook; the tenant of its namespace
    for a job without one), %a (ACCOUNT) the tenant. States: PD, CF, R (CD, F, TO, CA, PR with
    -t). Reasons of pending jobs: JobArrayTaskLimit, JobHeldUser, QOSGrpGRES (quota),
    ReqNodeNotAvail (no node of the GPU type), Resources, None; with the operator's blocker
    (status.pending) also Priority, Reservation, BadConstraints (never fits) and
    AssocGrpBillingMinutes (budget spent). -o takes squeue's field letters: i j P u t T M l
    L D C b R r N S V Q a A Y, plus n (namespace). --start shows pending jobs with
    START_TIME the operator's likely start (status.estimatedStart, UTC), N/A when unknown.

    Examples:
      gryvia squeue
      gryvia squeue --me -t PD
      gryvia squeue -A vision
      gryvia squeue -o "%.18i %.9P %.2t %.10M %R"
    """
    from gryvia_cli.core.slurmfmt import parse_percent_format, render_percent, select
    from gryvia_cli.core.slurmviews import (
        SQUEUE_FORMAT,
        SQUEUE_HEADERS,
        SQUEUE_START_FORMAT,
        squeue_items,
        squeue_rows,
    )
    from gryvia_cli.views.slurm import read_slurm_jobs

    parts, unknown = parse_percent_format(
        fmt or (SQUEUE_START_FORMAT if start else SQUEUE_FORMAT), SQUEUE_HEADERS
    )
    if unknown:
        raise UsageError(
            f"-o/--format: unknown field letter(s) {', '.join(unknown)}",
            hint=f"known: {' '.join(SQUEUE_HEADERS)}",
        )
    state = session(ctx)
    items = read_slurm_jobs(state, reasons=True, exit_codes=False)
    users = list(user or []) + ([state.access().whoami()[0]] if me else [])
    shown = squeue_items(
        items,
        users=users,
        states=states,
        partitions=partition,
        pending_only=start,
        accounts=account,
    )
    shown = select(shown, jobs, lambda item: item.job.name)
    rows = squeue_rows(shown, state.now())
    for line in render_percent(parts, rows, header=not noheader):
        emit(line)
