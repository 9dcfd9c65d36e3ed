"""`gryvia sacct`: Gryvia jobs in Slurm's sacct layout, with elapsed time and GPU-hours."""

from __future__ import annotations

from datetime import UTC, datetime, time
from typing import Annotated

import typer

from gryvia_cli.cli.session import session
from gryvia_cli.errors import UsageError
from gryvia_cli.output import emit

app = typer.Typer()


@app.command("sacct", rich_help_panel="Workloads")
def sacct(
    ctx: typer.Context,
    user: Annotated[
        list[str] | None,
        typer.Option("-u", "--user", help="Only jobs of these users (tenants), comma-separated."),
    ] = None,
    allusers: Annotated[
        bool, typer.Option("-a", "--allusers", help="Jobs of every tenant.")
    ] = False,
    starttime: Annotated[
        str | None,
        typer.Option(
            "-S", "--starttime", help="Jobs submitted since (YYYY-MM-DD[THH:MM[:SS]], UTC)."
        ),
    ] = None,
    state_filter: Annotated[
        list[str] | None, typer.Option("-s", "--state", help="Only these states (CD,F,...).")
    ] = None,
    fmt: Annotated[
        str | None, typer.Option("-o", "--format", help="Fields, e.g. JobID,State,Elapsed%12.")
    ] = None,
    noheader: Annotated[bool, typer.Option("-n", "--noheader", help="No header lines.")] = False,
) -> None:
    """Jobs in Slurm's sacct layout: state, exit code, elapsed, GPU-hours.

    Jobs as Slurm's sacct shows them: JobID JobName Partition Account AllocCPUS State
    ExitCode (sacct's default columns), then Elapsed and GPUHours.

    By default the jobs of the current namespace's tenant submitted since midnight UTC, as
    sacct shows your own jobs of today; -a for every tenant, -u for some. Account and User are
    the tenant; ExitCode is `exit:signal` of the batch script (pod 0) while its pod exists.
    Fields for -o: JobID JobName Partition Account User AllocCPUS AllocGPUs NNodes State
    ExitCode Elapsed GPUHours Start End Submit Timelimit NodeList Reason (`Name%width`), and
    GPUEff (mean GPU activity the operator sampled, docs/gpu-metrics.md) and GPUActHrs
    (GPUHours x GPUEff), like jobstats' GPU utilization.

    Examples:
      gryvia sacct
      gryvia sacct -a -S 2026-11-30 -o JobID,JobName%20,State,Elapsed,GPUHours
      gryvia sacct -o JobID,State,Elapsed,GPUHours,GPUEff,GPUActHrs
    """
    from gryvia_cli.core.slurmfmt import parse_sacct_format, render_sacct
    from gryvia_cli.core.slurmviews import SACCT_FORMAT, SACCT_WIDTHS, sacct_row, state_of
    from gryvia_cli.views.slurm import current_tenant, read_slurm_jobs

    fields, unknown = parse_sacct_format(fmt or SACCT_FORMAT, SACCT_WIDTHS)
    if unknown or not fields:
        raise UsageError(
            f"--format: unknown field(s) {', '.join(unknown) or '(none given)'}",
            hint=f"known: {','.join(SACCT_WIDTHS)}",
        )
    state = session(ctx)
    now = state.now()
    since = _since(starttime, now)
    items = read_slurm_jobs(state, reasons=False, exit_codes=True)
    users = {u.strip() for v in user or [] for u in v.split(",") if u.strip()}
    if not users and not allusers:
        users = {current_tenant(state)}
    states = {s.strip().upper() for v in state_filter or [] for s in v.split(",") if s.strip()}
    shown = [
        item
        for item in items
        if (not users or item.user in users)
        and (item.job.created is None or item.job.created >= since)
        and (not states or bool(states & set(state_of(item.job))))
    ]
    shown.sort(key=lambda i: (i.job.created or since, i.job.namespace, i.job.name))
    for line in render_sacct(fields, (sacct_row(i, now) for i in shown), header=not noheader):
        emit(line)


def _since(text: str | None, now: datetime) -> datetime:
    if not text:
        return datetime.combine(now.astimezone(UTC).date(), time(), tzinfo=UTC)
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"-S/--starttime {text!r} is not a date", hint="use YYYY-MM-DD or YYYY-MM-DDTHH:MM"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)
