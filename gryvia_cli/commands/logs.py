"""`gryvia logs JOB`: print or follow the log of one of a job's pods."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from gryvia_cli.cli.options import NamespaceOpt, check_job_name
from gryvia_cli.cli.session import session
from gryvia_cli.errors import NotFoundError
from gryvia_cli.output import info, spinner, warn

app = typer.Typer()


def _write(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


@app.command("logs", rich_help_panel="Workloads")
def logs(
    ctx: typer.Context,
    job: Annotated[str, typer.Argument(help="Job name.", show_default=False)],
    follow: Annotated[
        bool, typer.Option("-f", "--follow", help="Keep streaming until the container ends.")
    ] = False,
    tail: Annotated[
        int, typer.Option("--tail", help="Lines from the end to show; -1 for the whole log.")
    ] = 100,
    replica: Annotated[
        int | None,
        typer.Option(
            "--replica",
            help="Replica number: the completion index of a batch-Job pod (RANK) or the "
            "ordinal of a StatefulSet pod [default: the first].",
            show_default=False,
        ),
    ] = None,
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
    namespace: NamespaceOpt = None,
) -> None:
    """Print or follow a job's log.

    Shows the first pod's log (replica 0) unless --replica picks another.

    Pods are found by the label gryvia.io/job=JOB (also gryvia.io/job-name,
    batch.kubernetes.io/job-name and job-name). With -f, waits for the pod to start and
    stops once its container has ended.

    Examples:
      gryvia logs train-ddp
      gryvia logs train-ddp -f --replica 1
      gryvia logs train-ddp --tail -1 --timestamps > train.log
    """
    from gryvia_cli.core.pods import container_state, first_container
    from gryvia_cli.views import streams

    check_job_name(job)
    state = session(ctx)
    access = state.access()
    ns = state.resolve_namespace(namespace)
    pods = streams.job_pods(access, ns, job)
    if not pods:
        summary = streams.read_job(access, ns, job)  # NotFoundError when the job is missing
        if not follow or summary.terminal:
            warn(
                f"No pods found for job {job} (phase {summary.phase}): it may still be "
                "scheduling; try `gryvia queue`"
            )
            return
        with spinner(f"{job}: waiting for its first pod") as update:
            first = streams.wait_for_first_pod(access, ns, job, update)
        if first is None:
            warn(f"job {job} ended before any pod started; no logs")
            return
        pods = streams.job_pods(access, ns, job)
    if replica is not None:
        from gryvia_cli.core.jobs import replica_of_pod

        chosen = [p for p in pods if replica_of_pod(p) == replica]
        if not chosen:
            known = sorted({n for n in map(replica_of_pod, pods) if n is not None})
            raise NotFoundError(
                f"job {job} has no pod for replica {replica}",
                hint=f"replicas with pods: {', '.join(map(str, known)) or 'none'}",
            )
        pod = chosen[0]
    else:
        pod = pods[0]
    pod_name = str(pod["metadata"]["name"])
    name = container or first_container(pod)
    state_name, reason = container_state(pod, name)
    if follow:
        if state_name not in ("running", "terminated"):
            with spinner(f"waiting for pod {pod_name}") as update:
                streams.wait_for_pod_start(access, ns, pod_name, name, update)
        info(f"Streaming logs from pod: {pod_name}")
        streams.follow_log(
            access,
            ns,
            pod_name,
            name,
            _write,
            tail=None if tail < 0 else tail,
            timestamps=timestamps,
        )
        return
    if state_name == "waiting":
        warn(f"pod {pod_name} has not started yet ({reason}); no logs")
        return
    info(f"Logs of pod: {pod_name}")
    from gryvia_cli.kube.access import stream_lines

    response = access.pod_log(
        pod_name, ns, container=name, tail=None if tail < 0 else tail, timestamps=timestamps
    )
    try:
        for line in stream_lines(response):
            _write(line)
    finally:
        response.release_conn()
