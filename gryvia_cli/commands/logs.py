"""`gryvia logs JOB`: print or follow the log of one of a job's replicas, or of all of them."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gryvia_cli.cli.options import NamespaceOpt, check_job_name
from gryvia_cli.cli.session import session
from gryvia_cli.core import savedlogs
from gryvia_cli.errors import NotFoundError, UsageError
from gryvia_cli.output import info, spinner, warn

if TYPE_CHECKING:
    from gryvia_cli.core.jobs import JobSummary
    from gryvia_cli.kube.retry import Link
    from gryvia_cli.views.streams import LogTarget
    from gryvia_operator.api.savedlogs import SavedLog

app = typer.Typer()

GONE_WHY = (
    "Kubernetes deletes the replicas still running when a job fails or is cancelled, and the "
    "operator saved no log for it; replicas that failed keep their pod and log until the job "
    "is deleted"
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
    if not pods and _show_saved_only(
        job, access, ns, replica, all_replicas, tail, timestamps, container
    ):
        return
    link = streams.new_link(access) if follow else None  # -f waits out a stalled connection
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
            first = streams.wait_for_first_pod(access, ns, job, update, link=link)
        if first is None:
            warn(f"job {job} ended before any pod started; no logs")
            return
        pods = streams.job_pods(access, ns, job)
    newest = streams.newest_by_replica(pods)
    tail_lines = None if tail < 0 else tail
    wanted = [replica if replica is not None else 0]
    gaps = streams.missing_replicas(newest, summary.pods) if all_replicas else wanted
    saved = _saved(access, ns, job, container) if any(n not in newest for n in gaps) else {}
    if all_replicas:
        sources, missing = savedlogs.every_replica(newest, saved, summary.pods)
        for gap in missing:
            warn(f"replica {gap} of job {job} has no pod{_why(summary)}")
    else:
        one = savedlogs.one_replica(newest, saved, replica)
        if one is None:
            shown, pod = _pick(job, newest, replica, summary)
            one = savedlogs.Source(shown, pod=pod)
        sources = [one]
    if follow:  # saved logs first (they do not change), then follow the live pods
        for source in sources:
            if source.saved is not None:
                _print_saved(job, source.saved, tail_lines, timestamps, prefix=all_replicas)
        live = {s.replica: s.pod for s in sources if s.pod}
        if live:
            pick = _Pick(container, all_replicas)
            _follow(access, ns, job, live, pick, tail_lines, timestamps, link)
        return
    for source in sources:  # replica by replica
        if source.saved is not None:
            _print_saved(job, source.saved, tail_lines, timestamps, prefix=all_replicas)
        elif source.pod is not None:
            target = _target(source.pod, source.replica, container, prefix=all_replicas)
            _print(access, ns, [(target, source.pod)], tail_lines, timestamps, all_replicas)


def _saved(access: Any, ns: str, job: str, container: str | None) -> dict[int, SavedLog]:
    """The job's saved logs (of `container` when one was asked for)."""
    from gryvia_cli.views.savedlogs import read_saved_logs

    found = read_saved_logs(access, ns, job)
    return {n: e for n, e in found.items() if container is None or e.container == container}


def _print_saved(
    job: str, saved: SavedLog, tail: int | None, timestamps: bool, *, prefix: bool
) -> None:
    from gryvia_cli.views.savedlogs import print_saved
    from gryvia_cli.views.streams import replica_prefix

    text_prefix = replica_prefix(saved.replica) if prefix else ""
    print_saved(job, saved, _write, tail=tail, prefix=text_prefix, timestamps=timestamps)


def _show_saved_only(
    job: str,
    access: Any,
    ns: str,
    replica: int | None,
    all_replicas: bool,
    tail: int,
    timestamps: bool,
    container: str | None,
) -> bool:
    """With no pod left: print the saved logs asked for and return True; False when there
    are none (the caller says why)."""
    saved = _saved(access, ns, job, container)
    if not saved:
        return False
    tail_lines = None if tail < 0 else tail
    if all_replicas:
        for entry in saved.values():
            _print_saved(job, entry, tail_lines, timestamps, prefix=True)
        return True
    source = savedlogs.one_replica({}, saved, replica)
    if source is None and replica is not None:
        known = ", ".join(str(n) for n in saved)
        raise NotFoundError(
            f"replica {replica} of job {job} has no pod and no saved log",
            hint=f"replicas with saved logs: {known}; or pass --all-replicas",
        )
    if source is None:
        source = savedlogs.first_saved(saved)
        assert source is not None and source.saved is not None
        info(
            f"replica 0 of job {job} has no pod and no saved log; showing replica {source.replica}"
        )
    assert source.saved is not None
    _print_saved(job, source.saved, tail_lines, timestamps, prefix=False)
    return True


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


@dataclass(frozen=True)
class _Pick:
    """What `logs -f` shows of each pod: its `container` (None: the first), and the
    `[replica]` line prefix with `--all-replicas`."""

    container: str | None
    prefix: bool


def _follow(
    access: Any,
    ns: str,
    job: str,
    pods: Mapping[int | None, Mapping[str, Any]],
    pick: _Pick,
    tail: int | None,
    timestamps: bool,
    link: Link | None,
) -> None:
    """Follow the replicas' pods (replica -> pod), then each retry of a replica whose pod
    ended while the job goes on (the batch Job's next pod: "attempt N" on stderr), until the
    job ends. `tail` limits only the first pods' logs: a retry's log is new, shown whole."""
    from gryvia_cli.views import streams

    done = streams.job_done(access, ns, job)
    link = link or streams.new_link(access)
    seen: set[str] = set()
    while pods:
        targets = [
            _target(pod, replica, pick.container, prefix=pick.prefix)
            for replica, pod in pods.items()
        ]
        seen |= {t.pod for t in targets}
        started = []
        for target in targets:
            with spinner(f"waiting for pod {target.pod}") as update:
                pod = streams.wait_for_pod_start(
                    access, ns, target.pod, target.container, update, done=done, job=job, link=link
                )
            if pod is None:
                warn(f"pod {target.pod} went away or the job ended before it started; no logs")
            else:
                started.append(target)
        if started:
            info(f"Streaming logs from pod: {', '.join(t.pod for t in started)}")
            streams.follow_logs(
                access,
                ns,
                started,
                _write,
                tail=tail,
                timestamps=timestamps,
                done=done,
                job=job,
                link=link,
            )
        tail = None
        more = streams.next_attempts(access, ns, job, seen, set(pods), done, link)
        for replica, (pod, attempt) in more.items():
            shown = "" if replica is None else f"replica {replica} of "
            info(f"{shown}job {job}: attempt {attempt}, pod {pod['metadata']['name']}")
        pods = {replica: pod for replica, (pod, _) in more.items()}


def _print(
    access: Any,
    ns: str,
    chosen: list[tuple[LogTarget, Mapping[str, Any]]],
    tail: int | None,
    timestamps: bool,
    several: bool,
) -> None:
    from gryvia_cli.core.pods import container_state
    from gryvia_cli.kube.stream import stream_lines

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
