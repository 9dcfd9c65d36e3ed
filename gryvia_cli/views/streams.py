"""Following a job over time: its pods, its phase until terminal, a pod's log.

Used by `submit --wait/--logs`, `logs -f` and `status --watch`. The sandbox serves logs
through kwok, which keeps a follow stream open after the container exits, so log following
also watches the pod and stops shortly after the container ends.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from gryvia_cli.core.jobs import JobSummary, sort_pods, summarize_job
from gryvia_cli.core.pods import container_state
from gryvia_cli.errors import GryviaError, NotFoundError
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.access import stop_stream
from gryvia_operator.api.names import JOB_POD_LABELS

POLL_SECONDS = 1.0
DRAIN_SECONDS = 1.0


def job_pods(access: Any, namespace: str, job: str) -> list[Mapping[str, Any]]:
    """The job's pods by replica (first label of JOB_POD_LABELS that finds any), newest first
    within a replica; [] when none exist yet."""
    for label in JOB_POD_LABELS:
        pods = access.items(r.POD, namespace, label_selector=f"{label}={job}")
        if pods:
            return sort_pods(pods)
    return []


def wait_for_pod_start(
    access: Any,
    namespace: str,
    pod: str,
    container: str | None,
    update: Callable[[str], None],
    timeout: float = 600.0,
) -> Mapping[str, Any]:
    """Poll until the container runs or has ended; return the pod. Raises GryviaError on
    timeout and NotFoundError when the pod goes away."""
    deadline = time.monotonic() + timeout
    while True:
        obj = access.get(r.POD, pod, namespace)
        state, reason = container_state(obj, container)
        if state in ("running", "terminated"):
            return obj  # type: ignore[no-any-return]
        update(f"waiting for pod {pod} to start ({reason})")
        if time.monotonic() > deadline:
            raise GryviaError(f"pod {pod} did not start within {int(timeout)}s ({reason})")
        time.sleep(POLL_SECONDS)


def follow_log(
    access: Any,
    namespace: str,
    pod: str,
    container: str | None,
    write: Callable[[str], None],
    *,
    tail: int | None = None,
    timestamps: bool = False,
) -> None:
    """Stream a pod's log to `write` until the stream ends or the container has ended and
    no line arrived for DRAIN_SECONDS."""
    response = access.pod_log(
        pod, namespace, container=container, tail=tail, timestamps=timestamps, follow=True
    )
    lines: queue.Queue[tuple[str, Any]] = queue.Queue()

    def reader() -> None:
        from gryvia_cli.kube.access import stream_lines

        try:
            for line in stream_lines(response):
                lines.put(("line", line))
        except Exception as exc:  # the stream broke or was shut down: end quietly
            lines.put(("error", exc))
        lines.put(("end", None))

    threading.Thread(target=reader, daemon=True, name=f"log-{pod}").start()
    ended_at: float | None = None
    next_check = time.monotonic() + POLL_SECONDS
    try:
        while True:
            try:
                kind, value = lines.get(timeout=0.2)
            except queue.Empty:
                kind, value = "idle", None
            if kind == "line":
                write(value)
                continue
            if kind in ("end", "error"):
                return
            now = time.monotonic()
            if ended_at is not None and now - ended_at >= DRAIN_SECONDS:
                return
            if ended_at is None and now >= next_check:
                next_check = now + POLL_SECONDS
                try:
                    obj = access.get(r.POD, pod, namespace)
                except NotFoundError:
                    ended_at = now
                    continue
                if _finished(obj, container):
                    ended_at = now
    finally:
        stop_stream(response)
        response.release_conn()


def _finished(pod: Mapping[str, Any], container: str | None) -> bool:
    state, _ = container_state(pod, container)
    policy = (pod.get("spec") or {}).get("restartPolicy", "Always")
    phase = (pod.get("status") or {}).get("phase")
    return state == "terminated" and (policy != "Always" or phase in ("Succeeded", "Failed"))


def read_job(access: Any, namespace: str, name: str) -> JobSummary:
    """Read a job and summarise it."""
    return summarize_job(access.get(r.AIJOB, name, namespace))


def wait_for_job(
    access: Any,
    namespace: str,
    name: str,
    update: Callable[[str], None],
    timeout: float,
    poll: float = POLL_SECONDS,
) -> JobSummary:
    """Poll the job until it is terminal; return its summary. Raises GryviaError when it is
    still not done after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        job = read_job(access, namespace, name)
        detail = f": {job.message}" if job.message else ""
        update(f"{name}: {job.phase}{detail}")
        if job.terminal:
            return job
        if time.monotonic() > deadline:
            raise GryviaError(
                f"job {name} is still {job.phase} after {int(timeout)}s",
                hint=f"keep following it with: gryvia status {name} --watch",
            )
        time.sleep(poll)


def wait_for_first_pod(
    access: Any, namespace: str, job: str, update: Callable[[str], None], timeout: float = 600.0
) -> Mapping[str, Any] | None:
    """Poll until the job has a pod (returns replica 0, else the first) or ends without one
    (returns None). Raises GryviaError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        pods = job_pods(access, namespace, job)
        if pods:
            return pods[0]
        summary = read_job(access, namespace, job)
        if summary.terminal:
            return None
        detail = f": {summary.message}" if summary.message else ""
        update(f"{job}: {summary.phase}{detail} (waiting for its first pod)")
        if time.monotonic() > deadline:
            raise GryviaError(
                f"job {job} has no pod after {int(timeout)}s",
                hint=f"gryvia queue; gryvia status {job}",
            )
        time.sleep(POLL_SECONDS)
