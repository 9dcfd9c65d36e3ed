"""`gryvia queue`: jobs not running yet, their place per GPU type, wait time and why."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from gryvia_cli.cli.options import (
    AllNamespacesOpt,
    MineOpt,
    NamespaceOpt,
    OutputOpt,
    RedrawEveryOpt,
    UserOpt,
    render_entries,
)
from gryvia_cli.cli.session import session
from gryvia_cli.kube import resources as r
from gryvia_cli.output import OutputFormat, render_table

if TYPE_CHECKING:
    from gryvia_cli.core.queue import QueueEntry

app = typer.Typer()


@app.command("queue", rich_help_panel="Workloads")
def queue(
    ctx: typer.Context,
    namespace: NamespaceOpt = None,
    all_namespaces: AllNamespacesOpt = False,
    gpu_type: Annotated[
        str | None, typer.Option("--gpu-type", help="Only jobs asking for this GPU type.")
    ] = None,
    start: Annotated[
        bool,
        typer.Option(
            "--start",
            help="Show the operator's start estimates (earliest, likely, what the start "
            "waits for), soonest first, like squeue --start.",
        ),
    ] = False,
    running: Annotated[
        bool,
        typer.Option(
            "--running",
            help="The running jobs instead, idlest first: their GPUs and GPU activity as the "
            "operator sampled it (last and mean %, sample count).",
        ),
    ] = False,
    mine: MineOpt = False,
    user: UserOpt = None,
    watch: RedrawEveryOpt = None,
    output: OutputOpt = None,
) -> None:
    """Waiting jobs, oldest first, and why each one waits.

    Oldest first; # is the place among waiting jobs asking for the same GPU type (counted
    over every namespace you can read); for a job Kueue admits (docs/kueue.md), the place in
    its LocalQueue, higher priority first as Kueue takes them. The reason is the first of:
    suspended, quota or Kueue hold, no node of that GPU type, pods larger than any node, the
    operator's SchedulingFailed message, the pods' FailedScheduling event, too few free GPUs.

    USER is who submitted the job (annotation gryvia.io/submitted-by, recorded by the
    admission webhook; `-` when not recorded). --mine keeps your own jobs (you as the API
    server sees your kubeconfig user), -u USER those of USER; positions still count every
    waiting job. A job held by its quota's per-user limit (gpuQuota.maxGPUsPerUser) says so
    in REASON, naming the user.

    -o wide adds TENANT: the tenant the operator meters the job to (the namespace
    tenant-NAME of an existing GryviaTenant, else the job's gryvia.io/team label, else its
    namespace's gryvia.io/tenant or gryvia.io/team label, else the namespace), and for jobs
    Kueue admitted (still starting) FLAVOR, the ResourceFlavor of their GPUs, and BORROWED,
    the GPUs over their team's nominal quota borrowed from the cohort (status.kueue; `-`
    where it has none).

    START is the operator's estimate (status.estimatedStart, UTC): `14:20-15:05` (earliest,
    if no job ahead took the GPUs first, to likely), `unknown` (a job it waits for has no
    timeout and no history) or `never` (it can never fit). REASON uses the operator's
    structured blocker (status.pending) when there is one. --start lists the estimates with
    full dates and what each start waits for.

    Examples:
      gryvia queue
      gryvia queue -A --gpu-type H100
      gryvia queue --start
      gryvia queue -A --mine
      gryvia queue -o json | jq '.items[] | {name, reason}'

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: Queue, items: [{position, namespace, name,
    user, tenant, gpuType, gpus, gpusPerPod, pods, phase, createdAt, waitingSeconds, reason,
    blocker, estimatedStart, start, kueueQueue, flavor, borrowedGPUs}]}; blocker and
    estimatedStart are the job's status.pending and status.estimatedStart as the operator
    wrote them (docs/pending.md).

    --running lists the running jobs instead, idlest first: GPU% is the operator's last
    sample of the job's GPUs (marked `idle` under 10 %), MEAN% the mean over its run,
    SAMPLES how many (`-`: not sampled: the operator runs without --enable-gpu-metrics, or
    the job has no GPUs); -o wide adds tensor activity, the DCGM field and the last sample's
    age (docs/gpu-metrics.md). JSON/YAML: {kind: RunningJobs, items: [{namespace, name, user,
    gpuType, gpus, runningSeconds, gpuActivityPercent, meanGpuActivityPercent,
    tensorActivityPercent, samples, field, lastSampleTime, idle}]}.
    """
    from gryvia_cli.views.queue import read_queue

    state = session(ctx)
    fmt = state.fmt(output)
    current = state.resolve_namespace(namespace)
    show_ns = None if all_namespaces else current
    from gryvia_cli.views.submitters import wanted_users

    users = wanted_users(state, mine, user)
    if running:
        from gryvia_cli.views.runningjobs import show_running

        show_running(state, fmt, show_ns, gpu_type, current, users, watch)
        return
    if not watch:
        entries = read_queue(state, show_ns, gpu_type, current, users)
        _render(entries, fmt, show_ns is None, show_ns, start)
        return
    from gryvia_cli.views.streams import new_link
    from gryvia_cli.views.watching import redraw_on_changes

    link = new_link(state.access())  # waits out a stalled or cut connection (until Ctrl-C)

    def draw() -> None:
        entries = link.call(lambda: read_queue(state, show_ns, gpu_type, current, users))
        _render(entries, fmt, show_ns is None, show_ns, start)

    watched = [(r.AIJOB, None), (r.POD, None), (r.NODE, None)]
    redraw_on_changes(state.access(), watched, draw, watch)


def _render(
    entries: list[QueueEntry], fmt: OutputFormat, all_ns: bool, ns: str | None, start: bool
) -> None:
    from gryvia_cli.core.queue import (
        QUEUE_COLUMNS,
        QUEUE_WIDE_COLUMNS,
        START_COLUMNS,
        queue_row,
        start_order,
        start_row,
    )

    items = [e.as_dict() for e in entries]
    names = [f"{r.AIJOB.qualified}/{e.job.name}" for e in entries]
    empty = "No jobs waiting" + ("" if all_ns else f" in namespace {ns}") + "."
    if render_entries(fmt, "Queue", items, names, empty):
        return
    if start:
        columns = list(START_COLUMNS)
        if all_ns:
            columns.insert(1, "namespace")
        rows = [start_row(e, all_namespaces=all_ns) for e in start_order(entries)]
        render_table(columns, rows)
        return
    wide = fmt is OutputFormat.wide
    columns = list(QUEUE_WIDE_COLUMNS if wide else QUEUE_COLUMNS)
    if all_ns:
        columns.insert(1, "namespace")
    render_table(columns, [queue_row(e, all_namespaces=all_ns, wide=wide) for e in entries])
