"""`gryvia logs JOB`: print or follow the log of one of a job's replicas, or of all of them
(`gryvia.logs`, which the Python API's `Client.logs` runs too)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Annotated

import typer

from gryvia_cli.cli.options import NamespaceOpt, check_job_name
from gryvia_cli.cli.session import session
from gryvia_cli.output import info, spinner, warn

app = typer.Typer()


@app.command("logs", rich_help_panel="Workloads")
def logs(
    ctx: typer.Context,
    job: Annotated[str, typer.Argument(help="Job name.", show_default=False)],
    follow: Annotated[
        bool,
        typer.Option("-f", "--follow", help="Keep streaming until the containers or the job end."),
    ] = False,
    tail: Annotated[
        int, typer.Option("--tail", help="Lines from the end to show; -1 for the whole log.")
    ] = 100,
    replica: Annotated[
        int | None,
        typer.Option(
            "--replica",
            help="Replica number: the completion index of a batch-Job pod (RANK) or the "
            "ordinal of a StatefulSet pod [default: 0, else the first with a pod].",
            show_default=False,
        ),
    ] = None,
    all_replicas: Annotated[
        bool,
        typer.Option(
            "--all-replicas",
            help="Every replica's log, each line prefixed `[<replica>] ` (like srun -l).",
        ),
    ] = False,
    timestamps: Annotated[
        bool, typer.Option("--timestamps", help="Prefix each line with its RFC 3339 time.")
    ] = False,
    container: Annotated[
        str | None,
        typer.Option(
            "-c",
            "--container",
            help="Container [default: the pod's first, `trainer`].",
            show_default=False,
        ),
    ] = None,
    index: Annotated[
        int | None,
        typer.Option(
            "--index",
            help="Array index: JOB names a job array (gryvia.io/array-name) and this picks "
            "its element, as Slurm's JOBID_INDEX.",
            show_default=False,
        ),
    ] = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Print or follow a job's log.

    Shows replica 0's log unless --replica picks another; says so when it shows another
    replica because replica 0 has no pod. --replica N without a pod is an error that lists
    the replicas that have one. --all-replicas shows every replica's newest pod, each line
    prefixed `[<replica>] ` (`[0] rank 0 starting`), replica by replica (with -f, as the
    lines come).

    Pods are found by the label gryvia.io/job=JOB (also gryvia.io/job-name,
    batch.kubernetes.io/job-name and job-name). With -f, waits for the pods to start and
    stops once their containers have ended or the job is terminal (Succeeded, Failed,
    Cancelled, ...). A failed replica keeps its pod and log until the job is deleted; for a
    replica whose pod was deleted (Kubernetes stops the other replicas when one fails, a
    cancelled job's workload is deleted), the operator saved the last lines of its log
    (up to 2000 lines / 256 KiB): those are shown, and stderr says when they were saved and
    whether the log was cut.

    Examples:
      gryvia logs train-ddp
      gryvia logs train-ddp -f --replica 1
      gryvia logs train-ddp --all-replicas --tail -1
      gryvia logs train-ddp --tail -1 --timestamps > train.log
      gryvia logs sweep --index 3
    """
    from gryvia.logs import LogOptions, read_logs

    check_job_name(job)
    state = session(ctx)
    access = state.access()
    ns = state.resolve_namespace(namespace)
    if index is not None:
        from gryvia_cli.views.arrays import element_name

        job = element_name(access, ns, job, index)
    opts = LogOptions(
        follow=follow,
        tail=None if tail < 0 else tail,
        replica=replica,
        all_replicas=all_replicas,
        timestamps=timestamps,
        container=container,
    )
    read_logs(access, ns, job, opts, _Terminal())


class _Terminal:
    """The log sink of the CLI: lines to stdout, notes and warnings to stderr, a spinner."""

    def line(self, text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def note(self, text: str) -> None:
        info(text)

    def warning(self, text: str) -> None:
        warn(text)

    def progress(self, text: str) -> AbstractContextManager[Callable[[str], None]]:
        return spinner(text)
