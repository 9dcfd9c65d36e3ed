"""`gryvia sacct`: Gryvia jobs in Slurm's sacct layout, deleted ones included (job records)."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.session import session
from gryvia_cli.output import emit

app = typer.Typer()


@app.command("sacct", rich_help_panel="Workloads")
def sacct(
    ctx: typer.Context,
    user: Annotated[
        list[str] | None,
        typer.Option(
            "-u",
            "--user",
            help="Only jobs submitted by these users, comma-separated (a tenant's name also "
            "picks its jobs, as before; -A is the account filter).",
        ),
    ] = None,
    accounts: Annotated[
        list[str] | None,
        typer.Option("-A", "--accounts", help="Only jobs of these accounts (tenants)."),
    ] = None,
    allusers: Annotated[
        bool, typer.Option("-a", "--allusers", help="Jobs of every tenant.")
    ] = False,
    starttime: Annotated[
        str | None,
        typer.Option(
            "-S",
            "--starttime",
            help="Window start: YYYY-MM-DD[THH:MM[:SS]] (UTC), now, now-COUNT[minutes|hours|"
            "days|weeks] or today; default midnight, with -s now.",
        ),
    ] = None,
    endtime: Annotated[
        str | None,
        typer.Option(
            "-E", "--endtime", help="Window end (forms of -S); default now, with -s the -S time."
        ),
    ] = None,
    state_filter: Annotated[
        list[str] | None,
        typer.Option("-s", "--state", help="Only jobs in these states in the window (CD,F,R...)."),
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option("-o", "--format", help="Fields, e.g. JobID,State,Elapsed%12."),
    ] = None,
    parsable: Annotated[
        bool,
        typer.Option("-P", "--parsable2", help="'|'-separated values, no trailing '|'."),
    ] = False,
    noheader: Annotated[bool, typer.Option("-n", "--noheader", help="No header lines.")] = False,
) -> None:
    """Jobs in Slurm's sacct layout, deleted ones included: state, exit code, GPU-hours.

    Jobs as Slurm's sacct shows them: JobID JobName Partition Account AllocCPUS State
    ExitCode (sacct's default columns), then Elapsed and GPUHours. A job that was deleted is
    still listed, from the record the operator kept when it ended (GryviaJobRecord,
    docs/slurm.md "sacct history"); records older than the retention (90 days by default) are
    summed per tenant and month, and a note on stderr says when the window reaches them.

    By default the jobs of the current namespace's tenant eligible or running since midnight
    UTC; -a for every tenant, -A for some (Account is the tenant), -u for the jobs some users
    submitted (User: the submitter, else the tenant). -S/-E pick the jobs that were eligible
    or running in the window; with -s, the jobs in those states in it (an end state: ended in
    it), and the window defaults to now, as sacct's. ExitCode is `exit:signal` of the batch
    script (pod 0). Fields for -o: JobID JobName Partition Account User AllocCPUS AllocGPUs
    NNodes State ExitCode Elapsed GPUHours Start End Submit Timelimit NodeList Reason
    (`Name%width`), GPUEff (mean GPU activity the operator sampled, docs/gpu-metrics.md),
    GPUActHrs (GPUHours x GPUEff) and Log (yes while its pods or saved log still hold its
    output; a saved log goes with its job).

    Examples:
      gryvia sacct
      gryvia sacct -a -S 2026-11-01 -E 2026-11-30 -o JobID,JobName%20,State,ExitCode,Log
      gryvia sacct -A vision -s F,TO -S 2026-11-01 -E now -P
    """
    from gryvia_cli.output import info
    from gryvia_cli.views.slurm import sacct_report

    lines, notes = sacct_report(
        session(ctx), user, allusers, starttime, state_filter, fmt, noheader,
        endtime=endtime, accounts=accounts, parsable=parsable,
    )  # fmt: skip
    for line in lines:
        emit(line)
    for note in notes:
        info(note)
