"""The queue as `gryvia queue` reads it: waiting jobs, their place, reason and start estimate;
`queue_document` is its `-o json` document (also what the `queue` tool of `gryvia mcp` returns)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gryvia_cli.kube import resources as r

if TYPE_CHECKING:
    from gryvia_cli.connection import Connection
    from gryvia_cli.core.queue import QueueEntry


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


def queue_document(entries: list[QueueEntry]) -> dict[str, Any]:
    """`gryvia queue -o json`: {apiVersion: cli.gryvia.io/v1, kind: Queue, items: [QueueEntry
    as_dict]} (the shape the queue command's help documents)."""
    from gryvia_operator.api.names import CLI_API_VERSION

    return {"apiVersion": CLI_API_VERSION, "kind": "Queue", "items": [e.as_dict() for e in entries]}
