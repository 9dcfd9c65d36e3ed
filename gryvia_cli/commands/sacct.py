"""`gryvia sacct`: Gryvia jobs in Slurm's sacct layout, with elapsed time and GPU-hours."""

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
    from gryvia_cli.views.slurm import sacct_lines

    for line in sacct_lines(session(ctx), user, allusers, starttime, state_filter, fmt, noheader):
        emit(line)
