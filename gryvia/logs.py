"""A job's logs: one replica's, or every replica's, printed once or followed to the job's end.

The one implementation behind `gryvia logs` and `gryvia.Client.logs`: the CLI passes a sink
that writes lines to stdout and notes to stderr; the Python API one that queues the lines for
an iterator. Pods are found by `gryvia.io/job` (and the other JOB_POD_LABELS); a replica whose
pod is gone shows the log the operator saved (`gryvia_operator.api.savedlogs`); following
waits for pods to start, resumes cut streams without repeating or losing lines
(`views.logfollow`) and goes on with each retry's pod until the job is terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gryvia_cli.core import savedlogs
from gryvia_cli.errors import NotFoundError, UsageError

if TYPE_CHECKING:
    from gryvia_cli.core.jobs import JobSummary
    from gryvia_cli.kube.retry import Link
    from gryvia_cli.views.streams import LogTarget
    from gryvia_operator.api.savedlogs import SavedLog

GONE_WHY = (
    "Kubernetes deletes the replicas still running when a job fails or is cancelled, and the "
    "operator saved no log for it; replicas that failed keep their pod and log until the job "
    "is deleted"
)


class LogSink(Protocol):
    """Where a log read goes: `line` gets each log line (prefixed `[<replica>] ` with
    all_replicas), `note` and `warning` what the CLI prints on stderr, `progress(text)` a
    context whose value updates a progress message while waiting for pods."""

    def line(self, text: str) -> None: ...

    def note(self, text: str) -> None: ...

    def warning(self, text: str) -> None: ...

    def progress(self, text: str) -> AbstractContextManager[Callable[[str], None]]: ...


@dataclass(frozen=True)
class LogOptions:
    """What to read. `replica`: one replica (None: 0, else the first with a pod);
    `all_replicas`: every replica, lines prefixed; `tail`: lines from the end of each log
    (None: all); `container`: None is the pod's first; `follow`: stream until the job ends;
    `stop`: polled while following, True ends the read early (the iterator was closed)."""

    follow: bool = False
    tail: int | None = 100
    replica: int | None = None
    all_replicas: bool = False
    timestamps: bool = False
    container: str | None = None
    stop: Callable[[], bool] | None = None


def read_logs(access: Any, namespace: str, job: str, opts: LogOptions, sink: LogSink) -> None:
    """Send job `job`'s log (see LogOptions) to `sink`. Raises NotFoundError when the job is
    missing or `opts.replica` has no pod and no saved log (the hint lists the replicas that
    have one), UsageError for replica together with all_replicas, WaitTimeoutError never
    (no deadline), and the access layer's errors (ForbiddenError, ...)."""
    from gryvia_cli.views import streams

    if opts.all_replicas and opts.replica is not None:
        raise UsageError("pass --replica N or --all-replicas, not both")
    summary = streams.read_job(access, namespace, job)  # NotFoundError when the job is missing
    pods = streams.job_pods(access, namespace, job)
    reader = _Reader(access, namespace, job, opts, sink)
    if not pods and reader.saved_only():
        return
    link = streams.new_link(access, sink.warning) if opts.follow else None
    if not pods:
        if not opts.follow or summary.terminal:
            why = GONE_WHY if summary.terminal else "it may still be scheduling; try `gryvia queue`"
            sink.warning(f"No pods found for job {job} (phase {summary.phase}): {why}")
            return
        with sink.progress(f"{job}: waiting for its first pod") as update:
            first = streams.wait_for_first_pod(access, namespace, job, update, link=link)
        if first is None:
            sink.warning(f"job {job} ended before any pod started; no logs")
            return
        pods = streams.job_pods(access, namespace, job)
    if opts.follow and opts.all_replicas and not summary.terminal:
        with sink.progress(f"{job}: waiting for every replica's pod") as update:
            pods = _every_replica(access, namespace, job, summary.pods, pods, update, link)
    newest = streams.newest_by_replica(pods)
    wanted = [opts.replica if opts.replica is not None else 0]
    gaps = streams.missing_replicas(newest, summary.pods) if opts.all_replicas else wanted
    saved = reader.saved() if any(n not in newest for n in gaps) else {}
    if opts.all_replicas:
        sources, missing = savedlogs.every_replica(newest, saved, summary.pods)
        for gap in missing:
            sink.warning(f"replica {gap} of job {job} has no pod{_why(summary)}")
    else:
        one = savedlogs.one_replica(newest, saved, opts.replica)
        if one is None:
            shown, pod = _pick(job, newest, opts.replica, summary, sink)
            one = savedlogs.Source(shown, pod=pod)
        sources = [one]
    if opts.follow:  # saved logs first (they do not change), then follow the live pods
        for source in sources:
            if source.saved is not None:
                reader.print_saved(source.saved, opts.tail, prefix=opts.all_replicas)
        live = {s.replica: s.pod for s in sources if s.pod}
        if live:
            reader.follow(live, link)
        return
    for source in sources:  # replica by replica
        if source.saved is not None:
            reader.print_saved(source.saved, opts.tail, prefix=opts.all_replicas)
        elif source.pod is not None:
            reader.print_pod(source.pod, source.replica)


def _every_replica(
    access: Any,
    namespace: str,
    job: str,
    replicas: int,
    pods: list[Mapping[str, Any]],
    update: Callable[[str], None],
    link: Link | None,
) -> list[Mapping[str, Any]]:
    """The job's pods once each of its `replicas` has one, or once the job has ended (a
    replica may then never get one): following every replica starts with all of them, not
    with those the scheduler placed first."""
    import time

    from gryvia_cli.views import streams

    while True:
        missing = streams.missing_replicas(streams.newest_by_replica(pods), replicas)
        if not missing:
            return pods
        update(f"{job}: waiting for the pods of replica(s) {', '.join(map(str, missing))}")
        time.sleep(streams.POLL_SECONDS)

        def poll() -> tuple[list[Mapping[str, Any]], bool]:
            return streams.job_pods(access, namespace, job), streams.job_done(
                access, namespace, job
            )()

        pods, ended = link.call(poll) if link is not None else poll()
        if ended:
            return pods


def _why(summary: JobSummary) -> str:
    return f" ({GONE_WHY})" if summary.terminal else " yet"


def _pick(
    job: str,
    newest: dict[int | None, Mapping[str, Any]],
    replica: int | None,
    summary: JobSummary,
    sink: LogSink,
) -> tuple[int | None, Mapping[str, Any]]:
    """The replica to show: `replica`, else 0, else the first with a pod (said as a note).
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
    sink.note(
        f"replica 0 of job {job} has no pod{_why(summary)}; showing replica {shown} "
        f"(pod {pod['metadata']['name']})"
    )
    return shown, pod


@dataclass
class _Reader:
    """One read of one job's logs: the saved logs, the live pods, the retries."""

    access: Any
    ns: str
    job: str
    opts: LogOptions
    sink: LogSink

    def saved(self) -> dict[int, SavedLog]:
        """The job's saved logs (of the container asked for, if any)."""
        from gryvia_cli.errors import ForbiddenError
        from gryvia_cli.views.savedlogs import fetch_saved_logs
        from gryvia_operator.api.names import saved_logs_name

        try:
            found = fetch_saved_logs(self.access, self.ns, self.job)
        except ForbiddenError:
            self.sink.warning(
                f"cannot read the saved logs of job {self.job} "
                f"(ConfigMap {saved_logs_name(self.job)}): forbidden"
            )
            return {}
        wanted = self.opts.container
        return {n: e for n, e in found.items() if wanted is None or e.container == wanted}

    def print_saved(self, saved: SavedLog, tail: int | None, *, prefix: bool) -> None:
        """Say that `saved` is shown (when it was saved, whether it was cut), then its lines."""
        from gryvia_cli.core.savedlogs import saved_lines, saved_note
        from gryvia_cli.views.streams import replica_prefix

        text_prefix = replica_prefix(saved.replica) if prefix else ""
        self.sink.note(saved_note(self.job, saved))
        if self.opts.timestamps:
            self.sink.warning(
                "saved lines carry no time stamps; --timestamps does not apply to them"
            )
        for line in saved_lines(saved, tail):
            self.sink.line(text_prefix + line)

    def saved_only(self) -> bool:
        """With no pod left: send the saved logs asked for and return True; False when there
        are none (the caller says why)."""
        saved = self.saved()
        if not saved:
            return False
        opts, job = self.opts, self.job
        if opts.all_replicas:
            for entry in saved.values():
                self.print_saved(entry, opts.tail, prefix=True)
            return True
        source = savedlogs.one_replica({}, saved, opts.replica)
        if source is None and opts.replica is not None:
            known = ", ".join(str(n) for n in saved)
            raise NotFoundError(
                f"replica {opts.replica} of job {job} has no pod and no saved log",
                hint=f"replicas with saved logs: {known}; or pass --all-replicas",
            )
        if source is None:
            source = savedlogs.first_saved(saved)
            assert source is not None and source.saved is not None
            self.sink.note(
                f"replica 0 of job {job} has no pod and no saved log; "
                f"showing replica {source.replica}"
            )
        assert source.saved is not None
        self.print_saved(source.saved, opts.tail, prefix=False)
        return True

    def target(self, pod: Mapping[str, Any], replica: int | None) -> LogTarget:
        """What to stream of `pod`: its container, and the `[replica] ` prefix when asked."""
        from gryvia_cli.core.pods import first_container
        from gryvia_cli.views.streams import LogTarget, replica_prefix

        return LogTarget(
            str(pod["metadata"]["name"]),
            self.opts.container or first_container(pod),
            replica_prefix(replica) if self.opts.all_replicas else "",
        )

    def print_pod(self, pod: Mapping[str, Any], replica: int | None) -> None:
        """The log of one pod as it is now (the last `tail` lines)."""
        from gryvia_cli.core.pods import container_state
        from gryvia_cli.kube.stream import stream_lines

        target = self.target(pod, replica)
        state_name, reason = container_state(pod, target.container)
        if state_name == "waiting":
            self.sink.warning(f"pod {target.pod} has not started yet ({reason}); no logs")
            return
        several = self.opts.all_replicas
        self.sink.note(
            f"Logs of pod: {target.pod}" + (f" ({target.prefix.strip()})" if several else "")
        )
        response = self.access.pod_log(
            target.pod,
            self.ns,
            container=target.container,
            tail=self.opts.tail,
            timestamps=self.opts.timestamps,
        )
        try:
            for line in stream_lines(response):
                self.sink.line(target.prefix + line)
        finally:
            response.release_conn()

    def follow(self, pods: Mapping[int | None, Mapping[str, Any]], link: Link | None) -> None:
        """Follow the replicas' pods (replica -> pod), then each retry of a replica whose pod
        ended while the job goes on (the batch Job's next pod: "attempt N" as a note), until
        the job ends. `tail` limits only the first pods' logs: a retry's log is new, whole."""
        from gryvia_cli.views import streams

        access, ns, job, sink = self.access, self.ns, self.job, self.sink
        ended = streams.job_done(access, ns, job)
        stop = self.opts.stop
        done = ended if stop is None else (lambda: stop() or ended())
        link = link or streams.new_link(access, sink.warning)
        seen: set[str] = set()
        tail = self.opts.tail
        while pods:
            targets = [self.target(pod, replica) for replica, pod in pods.items()]
            seen |= {t.pod for t in targets}
            started = []
            for target in targets:
                with sink.progress(f"waiting for pod {target.pod}") as update:
                    pod = streams.wait_for_pod_start(
                        access, ns, target.pod, target.container, update,
                        done=done, job=job, link=link,
                    )  # fmt: skip
                if pod is None:
                    sink.warning(
                        f"pod {target.pod} went away or the job ended before it started; no logs"
                    )
                else:
                    started.append(target)
            if started:
                sink.note(f"Streaming logs from pod: {', '.join(t.pod for t in started)}")
                streams.follow_logs(
                    access, ns, started, sink.line,
                    tail=tail, timestamps=self.opts.timestamps, done=done, job=job, link=link,
                )  # fmt: skip
            tail = None
            if stop is not None and stop():
                return
            more = streams.next_attempts(access, ns, job, seen, set(pods), done, link)
            for replica, (pod, attempt) in more.items():
                shown = "" if replica is None else f"replica {replica} of "
                sink.note(f"{shown}job {job}: attempt {attempt}, pod {pod['metadata']['name']}")
            pods = {replica: pod for replica, (pod, _) in more.items()}
