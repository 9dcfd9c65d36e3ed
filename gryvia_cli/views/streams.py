"""Following a job over time: its pods, its phase until terminal, its pods' logs.

Used by `submit --wait/--logs`, `logs -f` and `status --watch`. Every wait ends when the
GryviaAIJob is terminal, whatever its pods do (a failed job's other replicas may be deleted,
replaced or left running), and gives up at an optional deadline (time.monotonic() seconds)
with WaitTimeoutError. The sandbox serves logs through kwok, which keeps a follow stream
open after the container exits, so log following also watches each pod and stops shortly
after its container ends.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gryvia_cli.core.jobs import JobSummary, sort_pods, summarize_job
from gryvia_cli.core.pods import container_state
from gryvia_cli.errors import NotFoundError, WaitTimeoutError
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.access import stop_stream
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
) -> Mapping[str, Any] | None:
    """Poll until the container runs or has ended; return the pod. Returns None when the pod
    goes away or `done` says the job ended before the container started. Raises
    WaitTimeoutError at `deadline`."""
    while True:
        try:
            obj = access.get(r.POD, pod, namespace)
        except NotFoundError:
            return None
        state, reason = container_state(obj, container)
        if state in ("running", "terminated"):
            return obj  # type: ignore[no-any-return]
        if done is not None and done():
            return None
        update(f"waiting for pod {pod} to start ({reason})")
        _check_deadline(
            deadline,
            f"pod {pod} did not start before the wait timeout ({reason})",
            f"gryvia status {job or pod}; gryvia queue",
        )
        time.sleep(POLL_SECONDS)


@dataclass
class _Stream:
    target: LogTarget
    response: Any
    open: bool = True
    ended_at: float | None = None
    last_line_at: float = 0.0


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
) -> None:
    """Stream several container logs to `write` (each line with its target's prefix) until
    every stream has ended: its response closed, or its container ended, its pod went away
    or `done` said the job is terminal, and no line came for DRAIN_SECONDS after that.

    Raises WaitTimeoutError at `deadline` (the streams are closed first; `job` names the job
    in its message), and the access layer's errors when a log cannot be opened.
    """
    streams: list[_Stream] = []
    lines: queue.Queue[tuple[int, str, Any]] = queue.Queue()
    try:
        for target in targets:
            response = access.pod_log(
                target.pod,
                namespace,
                container=target.container,
                tail=tail,
                timestamps=timestamps,
                follow=True,
            )
            streams.append(_Stream(target, response))
        for index, stream in enumerate(streams):
            threading.Thread(
                target=_read,
                args=(stream.response, index, lines),
                daemon=True,
                name=f"log-{stream.target.pod}",
            ).start()
        _pump(access, namespace, streams, lines, write, done, deadline, job or "JOB")
    finally:
        for stream in streams:
            stop_stream(stream.response)
            stream.response.release_conn()


def _read(response: Any, index: int, lines: queue.Queue[tuple[int, str, Any]]) -> None:
    from gryvia_cli.kube.access import stream_lines

    try:
        for line in stream_lines(response):
            lines.put((index, "line", line))
    except Exception as exc:  # the stream broke or was shut down: end quietly
        lines.put((index, "error", exc))
    lines.put((index, "end", None))


def _pump(
    access: Any,
    namespace: str,
    streams: list[_Stream],
    lines: queue.Queue[tuple[int, str, Any]],
    write: Callable[[str], None],
    done: JobDone | None,
    deadline: float | None,
    job: str,
) -> None:
    next_check = time.monotonic() + POLL_SECONDS
    while any(s.open for s in streams):
        try:
            index, kind, value = lines.get(timeout=0.2)
        except queue.Empty:
            index, kind, value = -1, "idle", None
        now = time.monotonic()
        if kind == "line":
            stream = streams[index]
            if stream.open:
                write(stream.target.prefix + value)
                stream.last_line_at = now
        elif kind in ("end", "error"):
            streams[index].open = False
        for stream in streams:  # ended and quiet for DRAIN_SECONDS: stop reading it
            quiet = now - max(stream.ended_at or now, stream.last_line_at)
            if stream.open and stream.ended_at is not None and quiet >= DRAIN_SECONDS:
                stream.open = False
                stop_stream(stream.response)
        if now < next_check:
            continue
        next_check = now + POLL_SECONDS
        _check_deadline(
            deadline,
            f"job {job} did not end before the wait timeout; stopped following its log "
            "(the job keeps running)",
            f"keep following it with: gryvia logs {job} -f",
        )
        waiting = [s for s in streams if s.open and s.ended_at is None]
        if waiting and done is not None and done():
            for stream in waiting:
                stream.ended_at = now
            continue
        for stream in waiting:
            try:
                obj = access.get(r.POD, stream.target.pod, namespace)
            except NotFoundError:
                stream.ended_at = now
                continue
            if _finished(obj, stream.target.container):
                stream.ended_at = now


def _finished(pod: Mapping[str, Any], container: str | None) -> bool:
    state, _ = container_state(pod, container)
    policy = (pod.get("spec") or {}).get("restartPolicy", "Always")
    phase = (pod.get("status") or {}).get("phase")
    return state == "terminated" and (policy != "Always" or phase in ("Succeeded", "Failed"))


def wait_for_job(
    access: Any,
    namespace: str,
    name: str,
    update: Callable[[str], None],
    *,
    deadline: float | None = None,
    poll: float | None = None,
) -> JobSummary:
    """Poll the job until it is terminal; return its summary. Raises WaitTimeoutError when
    it is still not done at `deadline`."""
    while True:
        job = read_job(access, namespace, name)
        detail = f": {job.message}" if job.message else ""
        update(f"{name}: {job.phase}{detail}")
        if job.terminal:
            return job
        _check_deadline(
            deadline,
            f"job {name} is still {job.phase} at the wait timeout; stopped waiting "
            "(the job keeps running)",
            f"keep following it with: gryvia status {name} --watch",
        )
        time.sleep(POLL_SECONDS if poll is None else poll)


def wait_for_first_pod(
    access: Any,
    namespace: str,
    job: str,
    update: Callable[[str], None],
    *,
    deadline: float | None = None,
) -> Mapping[str, Any] | None:
    """Poll until the job has a pod (returns replica 0, else the first) or ends without one
    (returns None). Raises WaitTimeoutError at `deadline`."""
    while True:
        pods = job_pods(access, namespace, job)
        if pods:
            return pods[0]
        summary = read_job(access, namespace, job)
        if summary.terminal:
            return None
        detail = f": {summary.message}" if summary.message else ""
        update(f"{job}: {summary.phase}{detail} (waiting for its first pod)")
        _check_deadline(
            deadline,
            f"job {job} has no pod at the wait timeout (still {summary.phase}{detail})",
            f"gryvia queue; gryvia status {job}",
        )
        time.sleep(POLL_SECONDS)
