"""`gryvia.Client`: the CLI's operations as methods, for notebooks, pipelines and scripts.

One Client holds one connection (kubeconfig, context, default namespace), connected on first
use with the user's own credentials, so Kubernetes RBAC decides what it may read and do. Each
method runs the function the matching CLI command runs (`gryvia.jobs`, `gryvia.logs`,
`gryvia.reads`, `views.streams`), so the two cannot drift, and returns typed results whose
`as_dict()` is the CLI's `-o json` item. Failures raise the CLI's errors
(`gryvia.GryviaError` and its subclasses), carrying the message and the hint it prints.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gryvia.jobs import CancelResult, JobRef, Manifest
from gryvia_cli.connection import Connection
from gryvia_cli.errors import JobEndedError, NeverRunsError

if TYPE_CHECKING:
    from gryvia.usage import UsageResult
    from gryvia_cli.core.capacity import CapacityReport
    from gryvia_cli.core.explain import Explanation
    from gryvia_cli.core.jobs import JobSummary
    from gryvia_cli.core.queue import QueueEntry
    from gryvia_cli.views.cost import TeamCostReport

log = logging.getLogger("gryvia")
"""Warnings and notes the CLI prints on stderr go here (logger `gryvia`)."""


def _as_list(manifests: Manifest | Iterable[Manifest]) -> list[Manifest]:
    if isinstance(manifests, (str, Path, dict)) or hasattr(manifests, "model_dump"):
        return [manifests]
    return list(manifests)


class Client:
    """A connection to one cluster through a kubeconfig, and the Gryvia operations on it.

    `Client()` uses $KUBECONFIG (else ~/.kube/config) and its current context;
    `Client(context="prod", namespace="team-a")` picks them as `--context` and `-n` do.
    Methods taking `namespace` default to the Client's namespace, then the context's, then
    `default`. Not thread-safe: use one Client per thread.
    """

    def __init__(
        self,
        *,
        kubeconfig: str | Path | None = None,
        context: str | None = None,
        namespace: str | None = None,
        connection: Connection | None = None,
    ) -> None:
        self.connection = connection or Connection(
            kubeconfig=None if kubeconfig is None else Path(kubeconfig),
            context=context,
            namespace=namespace,
        )

    def _ns(self, namespace: str | None) -> str:
        return self.connection.resolve_namespace(namespace)

    @property
    def namespace(self) -> str:
        """The default namespace (the Client's, the context's, else `default`)."""
        return self._ns(None)

    def submit(
        self,
        manifests: Manifest | Iterable[Manifest],
        *,
        namespace: str | None = None,
        force: bool = False,
    ) -> list[JobRef]:
        """Validate and create GryviaAIJobs, as `gryvia submit -f` does: `manifests` is one
        or several dicts, GryviaAIJob models, `Path`s, file paths or YAML texts (see
        `gryvia.jobs.Manifest`). Raises InvalidManifestError (`.problems`) before creating
        anything when one is invalid, NeverRunsError when one can never fit the cluster
        (unless `force`), RejectedError when the admission webhook refuses one."""
        from gryvia.jobs import create_jobs, load_jobs, plan_jobs

        jobs = load_jobs(_as_list(manifests), log.warning)
        ns = self._ns(namespace)
        notes: list[str] = []
        never = [p.never for p in plan_jobs(self.connection, jobs, ns, notes) if p.never]
        for text in notes:
            log.warning("plan may be incomplete: %s", text)
        if never and not force:
            raise NeverRunsError(
                f"{len(never)} job(s) can never fit this cluster; nothing was submitted",
                hint="fix the GPU type or size, or pass force=True to create them anyway",
                causes=tuple(never[:2]),
            )
        return list(create_jobs(self.connection.access(), jobs, ns))

    def submit_sbatch(
        self,
        script: str | Path,
        *,
        image: str,
        namespace: str | None = None,
        name: str | None = None,
    ) -> list[JobRef]:
        """Import a Slurm batch script and create its job(s) (one per array index), as
        `gryvia submit --sbatch SCRIPT --image IMAGE` does; the importer's findings are
        printed on stderr. Raises InvalidInputError for a script the importer refuses."""
        from gryvia_cli.views.sbatchjobs import (
            claim_name,
            create_sbatch_jobs,
            import_sbatch,
            target_namespace,
        )

        imported = import_sbatch(str(script), image, namespace, self.connection, name)
        target = target_namespace(imported, self._ns(namespace))
        conversion = claim_name(self.connection, imported, target)
        created = create_sbatch_jobs(self.connection, conversion, target)
        return [JobRef(target, str(o["metadata"]["name"]), o) for o in created]

    def explain(
        self, manifests: Manifest | Iterable[Manifest], *, namespace: str | None = None
    ) -> list[Explanation]:
        """What submitting would do, creating nothing (`gryvia submit --explain`): the API
        server's dry run, placement now, quota and budget after, the start estimate, cost.
        Each Explanation's `as_dict()` is one item of `--explain -o json`."""
        from gryvia.jobs import load_jobs
        from gryvia_cli.views.explain import explain_manifests

        jobs = load_jobs(_as_list(manifests), log.warning)
        return explain_manifests(self.connection, jobs, self._ns(namespace))

    def get(self, name: str, *, namespace: str | None = None) -> JobSummary:
        """One job's summary. Raises NotFoundError when it does not exist."""
        from gryvia_cli.views.streams import read_job

        return read_job(self.connection.access(), self._ns(namespace), name)

    def jobs(
        self, *, namespace: str | None = None, all_namespaces: bool = False
    ) -> list[JobSummary]:
        """The jobs of a namespace, or of every namespace the user may list."""
        from gryvia_cli.core.jobs import summarize_job
        from gryvia_cli.views.reads import read_jobs

        ns = self._ns(namespace)
        raw, _ = read_jobs(self.connection.access(), None if all_namespaces else ns, ns)
        return [summarize_job(j) for j in raw]

    def watch(
        self, name: str, *, namespace: str | None = None, timeout: float | None = None
    ) -> Iterator[JobSummary]:
        """Yield the job's summary now and on every change of its phase, message or ready
        replicas, until it is terminal (the last one yielded). Polls through the CLI's
        reconnecting link, so a stalled or cut connection delays it but does not end it.
        Raises WaitTimeoutError after `timeout` seconds, NotFoundError if it is deleted."""
        import time

        from gryvia_cli.errors import WaitTimeoutError
        from gryvia_cli.views import streams

        access = self.connection.access()
        ns = self._ns(namespace)
        deadline = streams.deadline_after(timeout)
        link = streams.new_link(access, log.warning)
        seen: tuple[str, str, int] | None = None
        while True:
            job = link.call(lambda: streams.read_job(access, ns, name), deadline=deadline)
            key = (job.phase, job.message, job.replicas_ready)
            if key != seen:
                seen = key
                yield job
            if job.terminal:
                return
            if deadline is not None and time.monotonic() > deadline:
                raise WaitTimeoutError(
                    f"job {name} is still {job.phase} at the watch timeout",
                    hint=f"gryvia status {name} --watch",
                )
            time.sleep(streams.POLL_SECONDS)

    def wait(
        self,
        name: str,
        *,
        namespace: str | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> JobSummary:
        """Block until the job is terminal and return its summary (as `submit --wait`).
        Raises WaitTimeoutError after `timeout` seconds (the job keeps running) and, with
        `check`, JobEndedError when it ended other than Succeeded."""
        from gryvia_cli.views import streams

        access = self.connection.access()
        job = streams.wait_for_job(
            access,
            self._ns(namespace),
            name,
            lambda _: None,
            deadline=streams.deadline_after(timeout),
            link=streams.new_link(access, log.warning),
        )
        if check and job.phase != "Succeeded":
            raise JobEndedError(
                f"job {name} ended {job.phase}" + (f": {job.message}" if job.message else ""),
                hint=f"gryvia status {name}; gryvia logs {name} --all-replicas",
            )
        return job

    def logs(
        self,
        name: str,
        *,
        namespace: str | None = None,
        follow: bool = False,
        tail: int | None = None,
        replica: int | None = None,
        all_replicas: bool = False,
        timestamps: bool = False,
        container: str | None = None,
    ) -> Iterator[str]:
        """The job's log lines, as `gryvia logs` prints them (`[<replica>] ` prefixed with
        `all_replicas`; the saved log of a replica whose pod is gone). With `follow` the
        iterator goes on until the job ends, resuming cut streams without repeating or
        losing a line; closing it early stops the reading. Raises what `gryvia logs` does
        (NotFoundError for a missing job or replica, ForbiddenError, ...)."""
        from gryvia.logs import LogOptions, read_logs

        lines: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        closed = threading.Event()
        opts = LogOptions(follow, tail, replica, all_replicas, timestamps, container, closed.is_set)
        access, ns = self.connection.access(), self._ns(namespace)

        def run() -> None:
            try:
                read_logs(access, ns, name, opts, _QueueSink(lines.put))
                lines.put(("end", None))
            except BaseException as exc:  # handed to the reader of the iterator
                lines.put(("error", exc))

        threading.Thread(target=run, name=f"gryvia-logs-{name}", daemon=True).start()
        try:
            while True:
                kind, value = lines.get()
                if kind == "line":
                    yield value
                elif kind == "error":
                    raise value
                else:
                    return
        finally:
            closed.set()

    def cancel(self, name: str, *, namespace: str | None = None) -> CancelResult:
        """Ask the operator to stop a job (`gryvia cancel`); `requested` is False when it
        had already ended. Raises NotFoundError when there is no such job."""
        from gryvia.jobs import cancel_job

        return cancel_job(self.connection.access(), self._ns(namespace), name)

    def delete(self, name: str, *, namespace: str | None = None) -> None:
        """Delete a job and what it owns (`gryvia delete job`). Raises NotFoundError."""
        from gryvia_cli.kube import resources as r

        self.connection.access().delete(r.AIJOB, name, self._ns(namespace))

    def queue(
        self,
        *,
        namespace: str | None = None,
        all_namespaces: bool = False,
        gpu_type: str | None = None,
    ) -> list[QueueEntry]:
        """The waiting jobs, oldest first per GPU type, each with its place, wait, reason,
        blocker and start estimate (`gryvia queue`; `as_dict()` is one `-o json` item)."""
        from gryvia_cli.views.queue import read_queue

        ns = self._ns(namespace)
        return read_queue(self.connection, None if all_namespaces else ns, gpu_type, ns)

    def capacity(self, *, gpu_type: str | None = None) -> CapacityReport:
        """GPUs per type: total, allocated, free, reserved, pending (`gryvia capacity`;
        `as_dict()` is its `-o json` document without the envelope)."""
        from gryvia_cli.views.capacity import read_capacity

        report, notes = read_capacity(self.connection, gpu_type)
        for text in notes:
            log.warning(text)
        return report

    def cost(self, team: str | None = None, *, period: str = "month") -> TeamCostReport:
        """Spend per team in the current day, week or month (`gryvia cost`; `as_dict()` is
        its `-o json` document). Raises NotFoundError when `team` has no quota or tenant,
        UsageError for another period."""
        from gryvia_cli.views.cost import read_team_costs

        if period not in ("day", "week", "month"):
            from gryvia_cli.errors import UsageError

            raise UsageError(f"period: expected day, week or month, not {period!r}")
        return read_team_costs(self.connection, team, period)  # type: ignore[arg-type]

    def usage(
        self,
        *,
        tenant: str | None = None,
        group_by: str = "tenant",
        start: str | None = None,
        end: str | None = None,
    ) -> UsageResult:
        """Metered GPU-hours and estimated cost per group (`gryvia usage`): `group_by` tenant,
        sku, day, job, user, project or label:KEY; `start`/`end` dates as `--from`/`--to`
        take them (YYYY-MM-DD, UTC; a date alone as `end` includes it). Raises UsageError
        naming the option a value does not fit."""
        from gryvia.usage import read_usage_result

        return read_usage_result(self.connection, tenant, group_by, start, end)


class _QueueSink:
    """The log sink of `Client.logs`: lines to the iterator's queue, notes to the log."""

    def __init__(self, put: Callable[[tuple[str, Any]], None]) -> None:
        self._put = put

    def line(self, text: str) -> None:
        self._put(("line", text))

    def note(self, text: str) -> None:
        log.info(text)

    def warning(self, text: str) -> None:
        log.warning(text)

    def progress(self, text: str) -> AbstractContextManager[Callable[[str], None]]:
        log.debug(text)
        return nullcontext(log.debug)
