"""Following a job over time: its pods, its phase until terminal, its pods' logs.

Used by `submit --wait/--logs`, `logs -f` and `status --watch`. Every wait ends when the
GryviaAIJob is terminal, whatever its pods do (a failed job's other replicas may be deleted,
replaced or left running), and gives up at an optional deadline (time.monotonic() seconds)
with WaitTimeoutError. A stalled or cut connection ends none of them: each poll goes
through a `kube.retry.Link` (`new_link`), which says `reconnecting ...` and retries with
back-off until the deadline. Log following lives in `views.logfollow`: it watches each pod
(kwok keeps a follow stream open after the container exits) and resumes broken streams
without repeating or losing lines.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gryvia_cli.core.jobs import JobSummary, sort_pods, summarize_job
from gryvia_cli.core.pods import container_state
from gryvia_cli.errors import NotFoundError, WaitTimeoutError
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.retry import POLL_READ_TIMEOUT, Link
from gryvia_operator.api.names import JOB_POD_LABELS

POLL_SECONDS = 1.0
DRAIN_SECONDS = 1.0
JobDone = Callable[[], bool]
"""A check that returns True once the followed job is terminal (see `job_done`)."""


@dataclass(frozen=True)
class LogTarget:
    """One container log to follow and the prefix put before each of its lines."""

    pod: str
    container: str | None
    prefix: str = ""


def replica_prefix(replica: int | None) -> str:
    """The `--all-replicas` line prefix: `[<replica>] `, `[?] ` when the pod has none."""
    return f"[{'?' if replica is None else replica}] "


def newest_by_replica(pods: Sequence[Mapping[str, Any]]) -> dict[int | None, Mapping[str, Any]]:
    """The newest pod of each replica, in replica order (None, for pods without a replica
    number, last); `pods` sorted as job_pods returns them."""
    from gryvia_cli.core.jobs import replica_of_pod

    out: dict[int | None, Mapping[str, Any]] = {}
    for pod in pods:
        out.setdefault(replica_of_pod(pod), pod)
    return out


def missing_replicas(newest: Mapping[int | None, Any], replicas: int) -> list[int]:
    """Replica numbers 0..replicas-1 that have no pod in `newest`."""
    return [n for n in range(replicas) if n not in newest]


def job_pods(access: Any, namespace: str, job: str) -> list[Mapping[str, Any]]:
    """The job's pods by replica (first label of JOB_POD_LABELS that finds any), newest first
    within a replica; [] when none exist yet."""
    for label in JOB_POD_LABELS:
        pods = access.items(r.POD, namespace, label_selector=f"{label}={job}")
        if pods:
            return sort_pods(pods)
    return []


def read_job(access: Any, namespace: str, name: str) -> JobSummary:
    """Read a job and summarise it. Raises NotFoundError when it does not exist."""
    return summarize_job(access.get(r.AIJOB, name, namespace))


def job_done(access: Any, namespace: str, name: str) -> JobDone:
    """A JobDone check for one GryviaAIJob: True once it is terminal or has been deleted."""

    def check() -> bool:
        try:
            return read_job(access, namespace, name).terminal
        except NotFoundError:
            return True

    return check


def deadline_after(seconds: float | None) -> float | None:
    """The time.monotonic() deadline `seconds` from now (None: no deadline)."""
    return None if seconds is None else time.monotonic() + seconds


def new_link(access: Any, say: Callable[[str], None] | None = None) -> Link:
    """The Link a long-running command polls through: shortens the access layer's reads to
    POLL_READ_TIMEOUT and says `reconnecting ...` / `reconnected ...` with `say` (default:
    warnings on stderr)."""
    from gryvia_cli.output import warn

    shorten = getattr(access, "shorten_reads", None)
    if callable(shorten):
        shorten(POLL_READ_TIMEOUT)
    return Link(say or warn)


def _check_deadline(deadline: float | None, message: str, hint: str) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise WaitTimeoutError(message, hint=hint)


def wait_for_pod_start(
    access: Any,
    namespace: str,
    pod: str,
    container: str | None,
    update: Callable[[str], None],
    *,
    deadline: float | None = None,
    done: JobDone | None = None,
    job: str = "",
    link: Link | None = None,
) -> Mapping[str, Any] | None:
    """Poll until the container runs or has ended; return the pod. Returns None when the pod
    goes away or `done` says the job ended before the container started. Raises
    WaitTimeoutError at `deadline`; connection failures are retried through `link`."""
    link = link or new_link(access)
    hint = f"gryvia status {job or pod}; gryvia queue"

    def poll() -> tuple[Mapping[str, Any] | None, str, bool]:
        try:
            obj = access.get(r.POD, pod, namespace)
        except NotFoundError:
            return None, "", True
        state, reason = container_state(obj, container)
        if state in ("running", "terminated"):
            return obj, reason, True
        return None, reason, done is not None and done()

    while True:
        obj, reason, over = link.call(poll, deadline=deadline, what=f"pod {pod}", hint=hint)
        if over:
            return obj
        update(f"waiting for pod {pod} to start ({reason})")
        _check_deadline(
            deadline, f"pod {pod} did not start before the wait timeout ({reason})", hint
        )
        time.sleep(POLL_SECONDS)


def follow_logs(
    access: Any,
    namespace: str,
    targets: Sequence[LogTarget],
    write: Callable[[str], None],
    *,
    tail: int | None = None,
    timestamps: bool = False,
    done: JobDone | None = None,
    deadline: float | None = None,
    job: str = "",
    link: Link | None = None,
) -> None:
    """Stream several container logs to `write` (each line with its target's prefix, and its
    time with `timestamps`) until every stream has ended: its container ended, its pod went
    away or `done` said the job is terminal, and no line came for a second after that.
    A cut or stalled stream is reopened where it was (see `views.logfollow`).

    Raises WaitTimeoutError at `deadline` (the streams are closed first; `job` names the job
    in its message), and the access layer's answers (403, ...) when a log cannot be opened.
    """
    from gryvia_cli.views.logfollow import LogPump, followed

    name = job or "JOB"
    LogPump(
        access,
        namespace,
        followed(targets, tail, timestamps),
        write,
        link or new_link(access),
        done=done,
        deadline=deadline,
        poll=POLL_SECONDS,
        drain=DRAIN_SECONDS,
        expired=(
            f"job {name} did not end before the wait timeout; stopped following its log "
            "(the job keeps running)",
            f"keep following it with: gryvia logs {name} -f",
        ),
    ).run()


def wait_for_job(
    access: Any,
    namespace: str,
    name: str,
    update: Callable[[str], None],
    *,
    deadline: float | None = None,
    poll: float | None = None,
    link: Link | None = None,
) -> JobSummary:
    """Poll the job until it is terminal; return its summary. Raises WaitTimeoutError when
    it is still not done at `deadline`; connection failures are retried through `link`."""
    link = link or new_link(access)
    hint = f"keep following it with: gryvia status {name} --watch"
    while True:
        job = link.call(
            lambda: read_job(access, namespace, name),
            deadline=deadline,
            what=f"job {name}",
            hint=hint,
        )
        detail = f": {job.message}" if job.message else ""
        update(f"{name}: {job.phase}{detail}")
        if job.terminal:
            return job
        _check_deadline(
            deadline,
            f"job {name} is still {job.phase} at the wait timeout; stopped waiting "
            "(the job keeps running)",
            hint,
        )
        time.sleep(POLL_SECONDS if poll is None else poll)


def wait_for_first_pod(
    access: Any,
    namespace: str,
    job: str,
    update: Callable[[str], None],
    *,
    deadline: float | None = None,
    link: Link | None = None,
) -> Mapping[str, Any] | None:
    """Poll until the job has a pod (returns replica 0, else the first) or ends without one
    (returns None). Raises WaitTimeoutError at `deadline`; connection failures are retried
    through `link`."""
    link = link or new_link(access)
    hint = f"gryvia queue; gryvia status {job}"

    def poll() -> tuple[list[Mapping[str, Any]], JobSummary | None]:
        pods = job_pods(access, namespace, job)
        return pods, None if pods else read_job(access, namespace, job)

    while True:
        pods, summary = link.call(poll, deadline=deadline, what=f"job {job}", hint=hint)
        if pods:
            return pods[0]
        if summary is None or summary.terminal:
            return None
        detail = f": {summary.message}" if summary.message else ""
        update(f"{job}: {summary.phase}{detail} (waiting for its first pod)")
        _check_deadline(
            deadline,
            f"job {job} has no pod at the wait timeout (still {summary.phase}{detail})",
            hint,
        )
        time.sleep(POLL_SECONDS)


def next_attempts(
    access: Any,
    namespace: str,
    job: str,
    seen: set[str],
    replicas: set[int | None],
    done: JobDone,
    link: Link,
) -> dict[int | None, tuple[Mapping[str, Any], int]]:
    """After the followed pods ended: wait until the job ends or each of the `replicas`
    succeeded (returns {}), or one of them has a newer pod than those in `seen` (a retry of
    a failed pod: the batch Job makes a new pod for the same replica). Returns replica ->
    (its newest pod, its attempt number: 1 for the replica's first pod); connection failures
    are retried through `link`."""
    from gryvia_cli.core.jobs import replica_of_pod

    while True:
        pods = link.call(lambda: job_pods(access, namespace, job), what=f"job {job}")
        newest = newest_by_replica(pods)
        succeeded = {
            r for r, p in newest.items() if (p.get("status") or {}).get("phase") == "Succeeded"
        }
        if not replicas - succeeded:  # each followed replica is done: no retry will come
            return {}
        fresh = {
            replica: pod
            for replica, pod in newest.items()
            if replica in replicas and str(pod["metadata"]["name"]) not in seen
        }
        if fresh:
            counts = [replica_of_pod(p) for p in pods]
            return {replica: (pod, counts.count(replica)) for replica, pod in fresh.items()}
        if link.call(done, what=f"job {job}"):
            return {}
        time.sleep(POLL_SECONDS)
