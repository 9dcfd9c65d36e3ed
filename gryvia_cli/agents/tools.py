"""The tools of `gryvia mcp`: one method per tool over the CLI's own reads and documents
(`gryvia_cli.views`), with typed parameters the MCP server turns into each tool's input
schema. Every call uses the Session of `gryvia mcp` (its kubeconfig, context and namespace),
so the API server's RBAC decides what a tool may read or change."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Annotated, Any, Literal

from pydantic import Field

from gryvia_cli.agents.documents import (
    CancelDocument,
    CapacityDocument,
    CostDocument,
    CreatedDocument,
    ExplainDocument,
    JobStatusDocument,
    LogDocument,
    QueueDocument,
    SacctDocument,
    UsageDocument,
)
from gryvia_cli.cli.session import Session
from gryvia_cli.errors import InvalidInputError, NeverRunsError

READ_TOOLS = ("status", "queue", "explain", "capacity", "cost", "usage", "logs", "sacct")
"""Tools that only read: served always."""
WRITE_TOOLS = ("submit", "cancel")
"""Tools that change the cluster: served only with `gryvia mcp --allow-writes`."""

Namespace = Annotated[
    str | None,
    Field(description="Namespace [default: gryvia mcp's -n, else the context's, else default]."),
]
JobName = Annotated[str, Field(description="The GryviaAIJob's name.", min_length=1)]
Manifest = Annotated[
    str,
    Field(
        description="GryviaAIJob manifest(s) as YAML or JSON (several documents allowed).",
        min_length=1,
    ),
]


def _api_version() -> str:
    from gryvia_operator.api.names import CLI_API_VERSION

    return CLI_API_VERSION


class GryviaTools:
    """The tools over one Session (the global options of `gryvia mcp`)."""

    def __init__(self, state: Session) -> None:
        self.state = state

    def status(self, job: JobName, namespace: Namespace = None) -> JobStatusDocument:
        """One job's state as `gryvia status JOB -o json`: the job with its status (phase,
        message, status.pending: why it waits, status.estimatedStart), its pods, the events
        about them, the nodes its pods are bound to, GPU use and the cost so far."""
        from gryvia_cli.views.job import job_snapshot

        ns = self.state.resolve_namespace(namespace)
        return JobStatusDocument(**job_snapshot(self.state, job, ns).as_dict())

    def queue(
        self,
        namespace: Namespace = None,
        all_namespaces: Annotated[
            bool, Field(description="Every namespace you may read (gryvia queue -A).")
        ] = False,
        gpu_type: Annotated[str | None, Field(description="Only jobs of this GPU type.")] = None,
        mine: Annotated[bool, Field(description="Only the jobs you submitted.")] = False,
        user: Annotated[
            list[str] | None, Field(description="Only the jobs these users submitted.")
        ] = None,
    ) -> QueueDocument:
        """Waiting jobs as `gryvia queue -o json`, oldest first: each job's place among the
        jobs waiting for its GPU type, why it waits (reason, and blocker: the operator's
        structured status.pending) and the start estimate (earliest, likely, or unknown or
        never)."""
        from gryvia_cli.views.queue import queue_document, read_queue
        from gryvia_cli.views.submitters import wanted_users

        current = self.state.resolve_namespace(namespace)
        users = wanted_users(self.state, mine, user)
        show = None if all_namespaces else current
        entries = read_queue(self.state, show, gpu_type, current, users)
        return QueueDocument(**queue_document(entries))

    def explain(self, manifest: Manifest, namespace: Namespace = None) -> ExplainDocument:
        """What `gryvia submit --explain -o json` says of a manifest, creating nothing: the
        admission rules and the API server's dry run, the nodes that could take it now, quota
        and budget after it, the blocker and start estimate the operator would write, and
        the cost per hour and for its timeout; exitCode 0 start now, 3 never, 4 would wait."""
        from gryvia_cli.core.explain import explain_document
        from gryvia_cli.views.explain import explain_manifests

        jobs = _jobs_of(manifest)
        ns = _target_namespace(self.state, jobs, namespace)
        return ExplainDocument(**explain_document(explain_manifests(self.state, jobs, ns)))

    def capacity(
        self,
        gpu_type: Annotated[
            str | None, Field(description="Only this GPU type (case-insensitive).")
        ] = None,
    ) -> CapacityDocument:
        """GPUs per type as `gryvia capacity -o json`: total, allocated, free, reserved,
        pending and shortfall per type and per node, with notes (nodes in maintenance,
        demand for a type no node has)."""
        from gryvia_cli.views.capacity import capacity_document, read_capacity

        report, notes = read_capacity(self.state, gpu_type)
        return CapacityDocument(**capacity_document(report, notes))

    def cost(
        self,
        team: Annotated[str | None, Field(description="Only this team (tenant).")] = None,
        period: Annotated[
            Literal["day", "week", "month"],
            Field(description="day = today, week = since Monday, month = since the 1st (UTC)."),
        ] = "month",
        group_by: Annotated[
            str | None,
            Field(description="user, project or label:KEY instead of per team."),
        ] = None,
    ) -> CostDocument:
        """Spend as `gryvia cost -o json`: per team (or user, project, label value) in the
        period, against its budget, with the GryviaBudgets' state and forecast."""
        from gryvia_cli.views.cost import read_group_costs, read_team_costs

        if group_by is not None:
            return CostDocument(**read_group_costs(self.state, group_by, team, period).as_dict())
        return CostDocument(**read_team_costs(self.state, team, period).as_dict())

    def usage(
        self,
        tenant: Annotated[str | None, Field(description="Only this tenant.")] = None,
        from_date: Annotated[
            str | None, Field(description="Usage at or after this date (YYYY-MM-DD, UTC).")
        ] = None,
        to_date: Annotated[
            str | None, Field(description="Usage before this date; a date alone includes it.")
        ] = None,
        group_by: Annotated[
            str, Field(description="tenant, sku, day, job, user, project or label:KEY.")
        ] = "tenant",
    ) -> UsageDocument:
        """Metered GPU-hours and estimated cost as `gryvia usage -o json`, per group."""
        from gryvia_cli.views.usage import read_usage, usage_document, usage_window

        key, start, end = usage_window(group_by, from_date, to_date)
        rows, total = read_usage(self.state, tenant, key, start, end)
        return UsageDocument(**usage_document(rows, total, key, start, end, tenant))

    def logs(
        self,
        job: JobName,
        namespace: Namespace = None,
        tail: Annotated[int, Field(description="Lines from the end.", ge=1, le=5000)] = 100,
        replica: Annotated[
            int | None, Field(description="Replica number [default: 0].", ge=0)
        ] = None,
        all_replicas: Annotated[
            bool, Field(description="Every replica, each line prefixed [replica].")
        ] = False,
        container: Annotated[str | None, Field(description="Container name.")] = None,
    ) -> LogDocument:
        """The last lines of a job's log as `gryvia logs JOB --tail N` prints them (live
        pods, else the log the operator saved for a deleted pod); notes say when no pod
        exists yet or another replica is shown."""
        from gryvia.logs import LogOptions, read_logs

        ns = self.state.resolve_namespace(namespace)
        sink = _Collected()
        opts = LogOptions(
            tail=tail, replica=replica, all_replicas=all_replicas, container=container
        )
        read_logs(self.state.access(), ns, job, opts, sink)  # as gryvia logs and Client.logs
        lines, notes = sink.lines, sink.notes
        return LogDocument(
            apiVersion=_api_version(),
            kind="JobLog",
            namespace=ns,
            job=job,
            lines=lines,
            notes=notes,
        )

    def sacct(
        self,
        users: Annotated[
            list[str] | None,
            Field(description="Only jobs these users submitted (sacct -u; a tenant picks its)."),
        ] = None,
        all_users: Annotated[bool, Field(description="Jobs of every tenant (sacct -a).")] = False,
        start_time: Annotated[
            str | None, Field(description="Window start (YYYY-MM-DD[THH:MM[:SS]], UTC; sacct -S).")
        ] = None,
        end_time: Annotated[
            str | None, Field(description="Window end (UTC, or now; sacct -E).")
        ] = None,
        accounts: Annotated[
            list[str] | None, Field(description="Only jobs of these tenants (sacct -A).")
        ] = None,
        states: Annotated[
            list[str] | None, Field(description="Only these states (CD, F, R, PD, CA, ...).")
        ] = None,
        fields: Annotated[
            str | None, Field(description="sacct -o fields, e.g. JobID,State,Elapsed,GPUHours.")
        ] = None,
    ) -> SacctDocument:
        """Jobs in Slurm's sacct layout, the lines `gryvia sacct` prints, deleted jobs included
        (default: the current namespace's tenant, eligible or running since midnight UTC)."""
        from gryvia_cli.views.slurm import sacct_report

        lines, _ = sacct_report(
            self.state, users, all_users, start_time, states, fields, False,
            endtime=end_time, accounts=accounts,
        )  # fmt: skip
        return SacctDocument(apiVersion=_api_version(), kind="Sacct", lines=lines)

    def submit(
        self,
        manifest: Manifest,
        namespace: Namespace = None,
        force: Annotated[
            bool, Field(description="Create jobs that can never fit anyway (they wait).")
        ] = False,
    ) -> CreatedDocument:
        """Create GryviaAIJobs as `gryvia submit -f` does: every document checked with the
        admission rules first, jobs that can never fit refused unless force; returns the
        created objects. Only served with `gryvia mcp --allow-writes`."""
        from gryvia.jobs import create_jobs, plan_jobs

        jobs = _jobs_of(manifest)
        ns = _target_namespace(self.state, jobs, namespace)
        never = [p.never for p in plan_jobs(self.state, jobs, ns, []) if p.never]
        if never and not force:
            raise NeverRunsError(
                f"{len(never)} job(s) can never fit this cluster; nothing was submitted: "
                + "; ".join(never),
                hint="fix the GPU type or size, or pass force=true to create them anyway",
            )
        created = [ref.object for ref in create_jobs(self.state.access(), jobs, ns)]
        return CreatedDocument(apiVersion="v1", kind="List", items=created)

    def cancel(
        self,
        jobs: Annotated[list[str], Field(description="Job names.", min_length=1)],
        namespace: Namespace = None,
    ) -> CancelDocument:
        """Ask the operator to stop jobs as `gryvia cancel` does (annotation
        gryvia.io/cancel); jobs already ended are left alone and listed in skipped. Only
        served with `gryvia mcp --allow-writes`."""
        from gryvia.jobs import cancel_job
        from gryvia_cli.core.jobs import nothing_to_cancel

        ns = self.state.resolve_namespace(namespace)
        access = self.state.access()
        cancelled: list[str] = []
        skipped: list[dict[str, str]] = []
        for name in jobs:
            result = cancel_job(access, ns, name)  # as gryvia cancel and Client.cancel
            if result.requested:
                cancelled.append(name)
            else:
                skipped.append({"name": name, "reason": nothing_to_cancel(name, result.phase)})
        return CancelDocument(
            apiVersion=_api_version(), kind="Cancel", cancelled=cancelled, skipped=skipped
        )


def _jobs_of(manifest: str) -> list[dict[str, Any]]:
    """The GryviaAIJobs of a manifest text (YAML or JSON), checked as `gryvia submit` checks
    them (`gryvia.jobs.load_jobs`). Raises InvalidInputError listing every problem
    (document, object, field) when one is invalid or not a GryviaAIJob."""
    from gryvia.jobs import InvalidManifestError, load_jobs

    text = manifest if "\n" in manifest else manifest + "\n"  # text, never a file path
    try:
        return load_jobs([text], lambda _: None)
    except InvalidManifestError as exc:
        raise InvalidInputError(
            f"{len(exc.problems)} problem(s) in the manifest: " + "; ".join(exc.problems),
            hint="fix them and call again; each problem names the field",
        ) from None


class _Collected:
    """The log sink of the `logs` tool: lines and notes kept for the reply."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.notes: list[str] = []

    def line(self, text: str) -> None:
        self.lines.append(text)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def warning(self, text: str) -> None:
        self.notes.append(text)

    def progress(self, text: str) -> AbstractContextManager[Callable[[str], None]]:
        return nullcontext(self.notes.append)


def _target_namespace(state: Session, jobs: list[dict[str, Any]], namespace: str | None) -> str:
    """Where jobs without a namespace of their own go (`namespace`, else the session's).
    Raises UsageError when a job's own namespace and an explicit one disagree."""
    for job in jobs:
        state.manifest_namespace(job, namespace)
    return state.resolve_namespace(namespace)
