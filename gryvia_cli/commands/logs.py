"""`gryvia logs JOB`: print or follow the log of one of a job's replicas, or of all of them."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gryvia_cli.cli.options import NamespaceOpt, check_job_name
from gryvia_cli.cli.session import session
from gryvia_cli.errors import UsageError
from gryvia_cli.output import info, spinner, warn

if TYPE_CHECKING:
    from gryvia_cli.kube.retry import Link

app = typer.Typer()


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
    from gryvia_cli.views import logtail, streams

    check_job_name(job)
    if all_replicas and replica is not None:
        raise UsageError("pass --replica N or --all-replicas, not both")
    state = session(ctx)
    access = state.access()
    ns = state.resolve_namespace(namespace)
    if index is not None:
        from gryvia_cli.views.arrays import element_name

        job = element_name(access, ns, job, index)
    tail_lines = None if tail < 0 else tail
    if not follow:
        logtail.tail_job_log(
            access,
            ns,
            job,
            replica=replica,
            all_replicas=all_replicas,
            tail=tail_lines,
            timestamps=timestamps,
            container=container,
            write=_write,
        )
        return
    summary = streams.read_job(access, ns, job)  # NotFoundError when the job is missing
    pods = streams.job_pods(access, ns, job)
    if not pods and logtail.show_saved_only(
        job, access, ns, replica, all_replicas, tail_lines, timestamps, container, _write
    ):
        return
    link = streams.new_link(access)  # -f waits out a stalled connection
    if not pods:
        if summary.terminal:
            warn(f"No pods found for job {job} (phase {summary.phase}): {logtail.GONE_WHY}")
            return
        with spinner(f"{job}: waiting for its first pod") as update:
            first = streams.wait_for_first_pod(access, ns, job, update, link=link)
        if first is None:
            warn(f"job {job} ended before any pod started; no logs")
            return
        pods = streams.job_pods(access, ns, job)
    sources = logtail.log_sources(access, ns, job, summary, pods, replica, all_replicas, container)
    # saved logs first (they do not change), then follow the live pods
    for source in sources:
        if source.saved is not None:
            logtail.print_saved_log(
                job, source.saved, _write, tail_lines, timestamps, prefix=all_replicas
            )
    live = {s.replica: s.pod for s in sources if s.pod}
    if live:
        pick = _Pick(container, all_replicas)
        _follow(access, ns, job, live, pick, tail_lines, timestamps, link)


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
    from gryvia_cli.views import logtail, streams

    done = streams.job_done(access, ns, job)
    link = link or streams.new_link(access)
    seen: set[str] = set()
    while pods:
        targets = [
            logtail.log_target(pod, replica, pick.container, prefix=pick.prefix)
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
