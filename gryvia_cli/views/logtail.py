"""A job's log as `gryvia logs JOB` prints it without -f: the replicas to show (live pods, else
the logs the operator saved), and their last lines written through a callable (stdout for
the CLI, a list for the `logs` tool of `gryvia mcp`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from gryvia_cli.core import savedlogs
from gryvia_cli.errors import NotFoundError
from gryvia_cli.output import info, warn

if TYPE_CHECKING:
    from gryvia_cli.core.jobs import JobSummary
    from gryvia_cli.views.streams import LogTarget
    from gryvia_operator.api.savedlogs import SavedLog

Write = Callable[[str], None]
"""Where log lines go (one line, no newline)."""
Say = Callable[[str], None]
"""Where notes about what is shown go (`output.info`/`warn` for the CLI: stderr)."""

GONE_WHY = (
    "Kubernetes deletes the replicas still running when a job fails or is cancelled, and the "
    "operator saved no log for it; replicas that failed keep their pod and log until the job "
    "is deleted"
)


def saved_logs(access: Any, ns: str, job: str, container: str | None) -> dict[int, SavedLog]:
    """The job's saved logs by replica (of `container` when one was asked for)."""
    from gryvia_cli.views.savedlogs import read_saved_logs

    found = read_saved_logs(access, ns, job)
    return {n: e for n, e in found.items() if container is None or e.container == container}


def print_saved_log(
    job: str, saved: SavedLog, write: Write, tail: int | None, timestamps: bool, *, prefix: bool
) -> None:
    """Write a saved log's last `tail` lines (`[replica] ` before each with `prefix`)."""
    from gryvia_cli.views.savedlogs import print_saved
    from gryvia_cli.views.streams import replica_prefix

    text_prefix = replica_prefix(saved.replica) if prefix else ""
    print_saved(job, saved, write, tail=tail, prefix=text_prefix, timestamps=timestamps)


def why_missing(summary: JobSummary) -> str:
    """Why a replica has no pod: the job ended (GONE_WHY), else not yet."""
    return f" ({GONE_WHY})" if summary.terminal else " yet"


def pick_replica(
    job: str,
    newest: Mapping[int | None, Mapping[str, Any]],
    replica: int | None,
    summary: JobSummary,
    say: Say = info,
) -> tuple[int | None, Mapping[str, Any]]:
    """The replica to show: `replica`, else 0, else the first with a pod (said through
    `say`). Raises NotFoundError naming the replicas with pods when `replica` has none."""
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
            f"replica {replica} of job {job} has no pod{why_missing(summary)}",
            hint=f"replicas with pods: {known}; or pass --all-replicas",
        )
    if 0 in newest:
        return 0, newest[0]
    shown, pod = next(iter(newest.items()))
    if shown is None:  # pods without a replica number (not made by the operator)
        return shown, pod
    say(
        f"replica 0 of job {job} has no pod{why_missing(summary)}; showing replica {shown} "
        f"(pod {pod['metadata']['name']})"
    )
    return shown, pod


def log_target(
    pod: Mapping[str, Any], replica: int | None, container: str | None, *, prefix: bool
) -> LogTarget:
    """The pod's container to read (`container`, else its first) and the line prefix."""
    from gryvia_cli.core.pods import first_container
    from gryvia_cli.views.streams import LogTarget, replica_prefix

    return LogTarget(
        str(pod["metadata"]["name"]),
        container or first_container(pod),
        replica_prefix(replica) if prefix else "",
    )


def log_sources(
    access: Any,
    ns: str,
    job: str,
    summary: JobSummary,
    pods: list[Any],
    replica: int | None,
    all_replicas: bool,
    container: str | None,
    say: Say = warn,
) -> list[savedlogs.Source]:
    """The replicas to show, each a live pod or a saved log: every replica with
    `all_replicas` (those with neither said through `say`), else `replica` (default 0)."""
    from gryvia_cli.views import streams

    newest = streams.newest_by_replica(pods)
    wanted = [replica if replica is not None else 0]
    gaps = streams.missing_replicas(newest, summary.pods) if all_replicas else wanted
    saved = saved_logs(access, ns, job, container) if any(n not in newest for n in gaps) else {}
    if all_replicas:
        sources, missing = savedlogs.every_replica(newest, saved, summary.pods)
        for gap in missing:
            say(f"replica {gap} of job {job} has no pod{why_missing(summary)}")
        return sources
    one = savedlogs.one_replica(newest, saved, replica)
    if one is None:
        shown, pod = pick_replica(job, newest, replica, summary, say=say)
        one = savedlogs.Source(shown, pod=pod)
    return [one]


def show_saved_only(
    job: str,
    access: Any,
    ns: str,
    replica: int | None,
    all_replicas: bool,
    tail: int | None,
    timestamps: bool,
    container: str | None,
    write: Write,
    say: Say = info,
) -> bool:
    """With no pod left: write the saved logs asked for and return True; False when there
    are none (the caller says why). Raises NotFoundError when `replica` has no saved log."""
    saved = saved_logs(access, ns, job, container)
    if not saved:
        return False
    if all_replicas:
        for entry in saved.values():
            print_saved_log(job, entry, write, tail, timestamps, prefix=True)
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
        say(f"replica 0 of job {job} has no pod and no saved log; showing replica {source.replica}")
    assert source.saved is not None
    print_saved_log(job, source.saved, write, tail, timestamps, prefix=False)
    return True


def tail_job_log(
    access: Any,
    ns: str,
    job: str,
    *,
    replica: int | None,
    all_replicas: bool,
    tail: int | None,
    timestamps: bool,
    container: str | None,
    write: Write,
    say: Say | None = None,
) -> None:
    """`gryvia logs JOB` without -f: the last `tail` lines (None: all) of the replica asked
    for (default 0) or of every replica, live or saved, replica by replica; notes (no pods,
    another replica shown) through `say` (default: stderr as the CLI prints them). Raises
    NotFoundError for a missing job or a replica with no pod and no saved log."""
    from gryvia_cli.views import streams

    summary = streams.read_job(access, ns, job)
    pods = streams.job_pods(access, ns, job)
    if not pods:
        if show_saved_only(
            job, access, ns, replica, all_replicas, tail, timestamps, container, write, say or info
        ):
            return
        why = GONE_WHY if summary.terminal else "it may still be scheduling; try `gryvia queue`"
        (say or warn)(f"No pods found for job {job} (phase {summary.phase}): {why}")
        return
    sources = log_sources(
        access, ns, job, summary, pods, replica, all_replicas, container, say or warn
    )
    for source in sources:
        if source.saved is not None:
            print_saved_log(job, source.saved, write, tail, timestamps, prefix=all_replicas)
        elif source.pod is not None:
            target = log_target(source.pod, source.replica, container, prefix=all_replicas)
            print_pod_log(access, ns, target, source.pod, tail, timestamps, write, say or warn)


def print_pod_log(
    access: Any,
    ns: str,
    target: LogTarget,
    pod: Mapping[str, Any],
    tail: int | None,
    timestamps: bool,
    write: Write,
    say: Say = warn,
) -> None:
    """Write one pod's log (its last `tail` lines), each line after the target's prefix; a
    pod whose container has not started yet is said through `say` instead."""
    from gryvia_cli.core.pods import container_state
    from gryvia_cli.kube.stream import stream_lines

    state_name, reason = container_state(pod, target.container)
    if state_name == "waiting":
        say(f"pod {target.pod} has not started yet ({reason}); no logs")
        return
    info(f"Logs of pod: {target.pod}" + (f" ({target.prefix.strip()})" if target.prefix else ""))
    response = access.pod_log(
        target.pod, ns, container=target.container, tail=tail, timestamps=timestamps
    )
    try:
        for line in stream_lines(response):
            write(target.prefix + line)
    finally:
        response.release_conn()
