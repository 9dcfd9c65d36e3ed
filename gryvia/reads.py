"""The cluster's reads behind `gryvia queue`, `capacity` and `cost`, shared by the CLI and
`gryvia.Client`: typed results (`core.queue.QueueEntry`, `core.capacity.CapacityReport`,
`CostResult`), whose `as_dict()` is the CLI's `-o json` item. Nothing here prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from gryvia_cli.kube import resources as r

if TYPE_CHECKING:
    from gryvia_cli.connection import Connection
    from gryvia_cli.core.capacity import CapacityReport
    from gryvia_cli.core.cost import TeamCost
    from gryvia_cli.core.queue import QueueEntry
    from gryvia_operator.api import GryviaBudget


def read_queue(
    state: Connection,
    show_ns: str | None,
    gpu_type: str | None,
    fallback: str,
    users: frozenset[str] | None = None,
) -> list[QueueEntry]:
    """Read jobs, pods, scheduling events, GPU supply, tenants and namespace labels across
    namespaces, all at once; return the QueueEntries to show (positions count every visible
    waiting job of a type; `users`, when given, keeps the jobs those users submitted), each
    with the tenant the operator bills it to."""
    from gryvia_cli.core.jobs import summarize_job
    from gryvia_cli.core.queue import (
        build_queue,
        job_key,
        scheduling_events,
        with_tenants,
    )
    from gryvia_cli.views.reads import (
        concurrently,
        read_jobs,
        read_namespace_labels,
        read_supply,
        read_supply_from_jobs,
        read_tenant_names,
        try_read,
    )

    access = state.access()

    def failed_scheduling(namespace: str | None) -> Any:
        return try_read(
            lambda: access.items(r.EVENT, namespace, field_selector="reason=FailedScheduling"),
            "events",
        )

    (raw, read_ns), supply, events, tenants, namespace_labels = concurrently(
        lambda: read_jobs(access, None, fallback),  # independent round trips, at once
        lambda: read_supply(access),
        lambda: failed_scheduling(None),
        lambda: read_tenant_names(access),
        lambda: read_namespace_labels(access),  # most queues need them (see with_tenants)
    )
    jobs = [summarize_job(j) for j in raw]
    if read_ns is not None:  # all namespaces were not readable: the events of the one that is
        events = failed_scheduling(read_ns)
    supply = read_supply_from_jobs(supply, jobs)  # unreadable pods: GPUs held per the jobs
    reasons = scheduling_events(events or [], supply.pods or [])
    entries = build_queue(jobs, supply.nodes, supply.allocated, reasons, state.now())
    if show_ns is not None:
        entries = [e for e in entries if e.job.namespace == show_ns]
    if gpu_type is not None:
        entries = [e for e in entries if e.job.type_key.lower() == gpu_type.lower()]
    if users is not None:
        entries = [e for e in entries if e.job.submitter in users]
    if not entries:
        return entries
    shown = {(e.job.namespace, e.job.name) for e in entries}
    waiting = [j for j in raw if job_key(j) in shown]
    return with_tenants(entries, waiting, tenants, namespace_labels)  # labels: the last rule


def read_capacity(conn: Connection, gpu_type: str | None, notes: list[str]) -> CapacityReport:
    """GPUs per type now: total, allocated, free, reserved and pending demand
    (`core.capacity.compute_capacity`), of `gpu_type` only when given; unreadable inputs
    become `notes`."""
    from gryvia_cli.core.capacity import compute_capacity
    from gryvia_cli.core.jobs import summarize_job
    from gryvia_cli.views.reads import read_jobs, read_supply

    access = conn.access()
    raw, _ = read_jobs(access, None, conn.resolve_namespace(None))
    jobs = [summarize_job(j) for j in raw]
    supply = read_supply(access, jobs, notes)
    return compute_capacity(supply.nodes, supply.allocated, jobs, supply.pods, gpu_type=gpu_type)


@dataclass(frozen=True)
class CostResult:
    """Spend per team over a period (`core.cost.team_costs`): `items` one per team, `budgets`
    the GryviaBudgets that cover them, the period `window` (day, week, month) from `start` to
    `end` (UTC), and `warnings` about objects skipped as invalid."""

    items: list[TeamCost]
    budgets: list[GryviaBudget]
    window: str
    start: datetime
    end: datetime
    warnings: list[str] = field(default_factory=list)


def read_costs(conn: Connection, team: str | None, window: str) -> CostResult:
    """Each team's spend in the current `window` (day, week or month), of `team` only when
    given. Raises NotFoundError when `team` has no quota or tenant."""
    from gryvia_cli.core.budgets import budgets_for
    from gryvia_cli.core.cost import team_costs, team_scopes
    from gryvia_cli.errors import NotFoundError
    from gryvia_cli.views.reads import read_optional, read_usage_records
    from gryvia_operator.api import GryviaBudget, GryviaQuota, GryviaTenant
    from gryvia_operator.api.parse import parse_all, parse_valid
    from gryvia_operator.api.periods import period_window

    access = conn.access()
    quotas, bad_quotas = parse_all(GryviaQuota, read_optional(access, r.QUOTA))
    tenants, bad_tenants = parse_all(GryviaTenant, read_optional(access, r.TENANT))
    warnings = [f"skipped an invalid object: {p}" for p in (*bad_quotas, *bad_tenants)]
    scopes = team_scopes(quotas, tenants)
    if team is not None:
        scopes = [s for s in scopes if s.team == team]
        if not scopes:
            raise NotFoundError(
                f"no quota or tenant for team {team}",
                hint="see 'gryvia quota' and 'gryvia tenant list'",
            )
    now = conn.now()
    start, end = period_window(window, now)  # type: ignore[arg-type]
    records = read_usage_records(access, team) if scopes else []
    items = team_costs(scopes, records, window, now)  # type: ignore[arg-type]
    all_budgets = parse_valid(GryviaBudget, read_optional(access, r.BUDGET))
    chosen = budgets_for(all_budgets, None if team is None else [team])
    return CostResult(items, chosen, window, start, end, warnings)
