"""After `gryvia submit`: follow the first job's first pod log (`--logs`) and wait for every
job to end (`--wait`), through stalls and cuts of the connection, within one deadline."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from gryvia_cli.cli.session import Session
from gryvia_cli.errors import JobEndedError, job_failure_hint
from gryvia_cli.output import failure, info, spinner, success, warn

if TYPE_CHECKING:
    from gryvia_cli.kube.retry import Link


def follow(
    state: Session, created: list[tuple[str, str]], wait: bool, logs: bool, timeout: float
) -> None:
    """After creation: stream the first job's first pod log (`--logs`), then wait for every
    job to end (`--wait`), all within `timeout` seconds. The log follow ends when the job is
    terminal, even while another replica's pod still runs.

    Raises JobEndedError when any job did not succeed, WaitTimeoutError (exit 124) when the
    timeout passes first.
    """
    from gryvia_cli.views import streams

    access = state.access()
    deadline = streams.deadline_after(timeout)
    if not (wait or (logs and created)):
        return
    link = streams.new_link(access)  # a stalled or cut connection waits until `deadline`
    if logs and created:
        namespace, name = created[0]
        _stream_first_pod(access, namespace, name, deadline, link)
    if not wait:
        return
    failed = []
    for namespace, name in created:
        with spinner(f"{name}: waiting") as update:
            job = streams.wait_for_job(
                access, namespace, name, update, deadline=deadline, link=link
            )
        if job.phase == "Succeeded":
            success(f"job {name} Succeeded")
        else:
            failure(f"job {name} {job.phase}" + (f": {job.message}" if job.message else ""))
            failed.append(f"{name} {job.phase}")
    if failed:
        raise JobEndedError(
            f"job(s) did not succeed: {', '.join(failed)}",
            hint=job_failure_hint([entry.split(" ", 1)[0] for entry in failed]),
        )


def _stream_first_pod(
    access: Any, namespace: str, name: str, deadline: float | None, link: Link
) -> None:
    """Follow the log of job `name`'s first pod (replica 0) until the job ends."""
    from gryvia_cli.core.pods import first_container
    from gryvia_cli.views import streams

    done = streams.job_done(access, namespace, name)
    started = None
    with spinner(f"{name}: waiting for its first pod") as update:
        pod = streams.wait_for_first_pod(
            access, namespace, name, update, deadline=deadline, link=link
        )
        if pod is not None:
            pod_name = str(pod["metadata"]["name"])
            container = first_container(pod)
            started = streams.wait_for_pod_start(
                access,
                namespace,
                pod_name,
                container,
                update,
                deadline=deadline,
                done=done,
                link=link,
            )
    if pod is None or started is None:
        warn(f"job {name} ended before its first pod started; no logs")
        return
    info(f"Streaming logs from pod: {pod_name}")
    target = streams.LogTarget(pod_name, container)
    streams.follow_logs(
        access,
        namespace,
        [target],
        _write_line,
        done=done,
        deadline=deadline,
        job=name,
        link=link,
    )


def _write_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
