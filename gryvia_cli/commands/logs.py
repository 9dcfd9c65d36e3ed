"""`gryvia logs JOB`: print or follow the log of one of a job's replicas, or of all of them."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gryvia_cli.cli.options import NamespaceOpt, check_job_name
from gryvia_cli.cli.session import session
from gryvia_cli.errors import NotFoundError, UsageError
from gryvia_cli.output import info, spinner, warn

if TYPE_CHECKING:
    from gryvia_cli.core.jobs import JobSummary
    from gryvia_cli.views.streams import LogTarget

app = typer.Typer()

GONE_WHY = (
    "Kubernetes deletes the replicas still running when a job fails or is cancelled; "
    "replicas that failed keep their pod and log until the job is deleted"
)


def _write(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


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
    Cancelled, ...). A failed replica keeps its pod and log until the job is deleted; the
    replicas Kubernetes stops because another failed, or because the job was cancelled, are
    deleted with their log.

    Examples:
      gryvia logs train-ddp
      gryvia logs train-ddp -f --replica 1
      gryvia logs train-ddp --all-replicas --tail -1
      gryvia logs train-ddp --tail -1 --timestamps > train.log
      gryvia logs sweep --index 3
    """
    from gryvia_cli.views import streams

    check_job_name(job)
    if all_replicas and replica is not None:
        raise UsageError("pass --replica N or --all-replicas, not both")
    state = session(ctx)
    access = state.access()
    ns = state.resolve_namespace(namespace)
    if index is not None:
        from gryvia_cli.views.arrays import element_name

        job = element_name(access, ns, job, index)
    summary = streams.read_job(access, ns, job)  # NotFoundError when the job is missing
    pods = streams.job_pods(access, ns, job)
    if not pods:
        if not follow or summary.terminal:
            warn(
                f"No pods found for job {job} (phase {summary.phase}): "
                + (
                    GONE_WHY
                    if summary.terminal
                    else "it may still be scheduling; try `gryvia queue`"
                )
            )
            return
        with spinner(f"{job}: waiting for its first pod") as update:
            first = streams.wait_for_first_pod(access, ns, job, update)
        if first is None:
            warn(f"job {job} ended before any pod started; no logs")
            return
        pods = streams.job_pods(access, ns, job)
    newest = streams.newest_by_replica(pods)
    if all_replicas:
        chosen = list(newest.items())
        for missing in streams.missing_replicas(newest, summary.pods):
            warn(f"replica {missing} of job {job} has no pod{_why(summary)}")
    else:
        chosen = [_pick(job, newest, replica, summary)]
    targets = [_target(pod, n, container, prefix=all_replicas) for n, pod in chosen]
    tail_lines = None if tail < 0 else tail
    if follow:
        _follow(access, ns, job, targets, tail_lines, timestamps)
    else:
        _print(
            access,
            ns,
            [(t, pod) for t, (_, pod) in zip(targets, chosen, strict=True)],
            tail_lines,
            timestamps,
            all_replicas,
        )


def _why(summary: JobSummary) -> str:
    return f" ({GONE_WHY})" if summary.terminal else " yet"


def _pick(
    job: str,
    newest: dict[int | None, Mapping[str, Any]],
    replica: int | None,
    summary: JobSummary,
) -> tuple[int | None, Mapping[str, Any]]:
    """The replica to show: `replica`, else 0, else the first with a pod (said on stderr).
    Raises NotFoundError naming the replicas with pods when `replica` has none."""
    known = ", ".join(str(n) for n in newest if n is not None) or "none"
    if replica is not None:
        if replica in newest:
            return replica, newest[replica]
        if summary.pods and replica >= summary.pods:
            raise NotFoundError(
                f"job {job} has {summary.pods} replica(s), 0 to {summary.pods - 1}; "
                f"there is no replica {replica}",
                hint=f"replicas with pods: {known}; or pass --all-replicas",
            )
        raise NotFoundError(
            f"replica {replica} of job {job} has no pod{_why(summary)}",
            hint=f"replicas with pods: {known}; or pass --all-replicas",
        )
    if 0 in newest:
        return 0, newest[0]
    shown, pod = next(iter(newest.items()))
    if shown is None:  # pods without a replica number (not made by the operator)
        return shown, pod
    info(
        f"replica 0 of job {job} has no pod{_why(summary)}; showing replica {shown} "
        f"(pod {pod['metadata']['name']})"
    )
    return shown, pod


def _target(
    pod: Mapping[str, Any], replica: int | None, container: str | None, *, prefix: bool
) -> LogTarget:
    from gryvia_cli.core.pods import first_container
    from gryvia_cli.views.streams import LogTarget, replica_prefix

    return LogTarget(
        str(pod["metadata"]["name"]),
        container or first_container(pod),
        replica_prefix(replica) if prefix else "",
    )


def _follow(
    access: Any,
    ns: str,
    job: str,
    targets: list[LogTarget],
    tail: int | None,
    timestamps: bool,
) -> None:
    from gryvia_cli.views import streams

    done = streams.job_done(access, ns, job)
    started = []
    for target in targets:
        with spinner(f"waiting for pod {target.pod}") as update:
            pod = streams.wait_for_pod_start(
                access, ns, target.pod, target.container, update, done=done, job=job
            )
        if pod is None:
            warn(f"pod {target.pod} went away or the job ended before it started; no logs")
        else:
            started.append(target)
    if not started:
        return
    info(f"Streaming logs from pod: {', '.join(t.pod for t in started)}")
    streams.follow_logs(
        access, ns, started, _write, tail=tail, timestamps=timestamps, done=done, job=job
    )


def _print(
    access: Any,
    ns: str,
    chosen: list[tuple[LogTarget, Mapping[str, Any]]],
    tail: int | None,
    timestamps: bool,
    several: bool,
) -> None:
    from gryvia_cli.core.pods import container_state
    from gryvia_cli.kube.access import stream_lines

    for target, pod in chosen:
        state_name, reason = container_state(pod, target.container)
        if state_name == "waiting":
            warn(f"pod {target.pod} has not started yet ({reason}); no logs")
            continue
        info(f"Logs of pod: {target.pod}" + (f" ({target.prefix.strip()})" if several else ""))
        response = access.pod_log(
            target.pod, ns, container=target.container, tail=tail, timestamps=timestamps
        )
        try:
            for line in stream_lines(response):
                _write(target.prefix + line)
        finally:
            response.release_conn()
