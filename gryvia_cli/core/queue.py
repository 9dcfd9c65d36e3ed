"""The queue: jobs not running yet, their place per GPU type, wait time, reason and tenant.

Oldest first; one line says why each job waits. The tenant of a job is the one the operator
meters and bills it to (`gryvia_operator.api.attribution`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from gryvia_cli.core import timefmt
from gryvia_cli.core.cells import plural
from gryvia_cli.core.jobs import JobSummary, job_of_pod
from gryvia_cli.core.nodes import GpuNode, free_gpus
from gryvia_cli.core.phases import Bucket, bucket
from gryvia_operator.api.attribution import namespace_tenant, tenant_of_object
from gryvia_operator.api.mig import type_serves
from gryvia_operator.api.names import LABEL_TEAM
from gryvia_operator.api.pendingtext import start_cell, waiting_line
from gryvia_operator.api.submitter import UNKNOWN

if TYPE_CHECKING:
    from gryvia_operator.api.pending import EstimatedStart, PendingStatus

WAITING_PHASES = ("Pending", "Queued", "Scheduling")


@dataclass(frozen=True)
class QueueEntry:
    """One waiting job."""

    position: int
    """1-based place among waiting jobs of the same GPU type (oldest first); for a job in a
    Kueue queue, among the waiting jobs of that LocalQueue in Kueue's BestEffortFIFO order
    (higher priority first, then oldest)."""
    job: JobSummary
    waited: float | None
    """Seconds since the job was created."""
    reason: str
    tenant: str = ""
    """The tenant the job belongs to (see `with_tenants`); "" when not attributed."""

    def as_dict(self) -> dict[str, Any]:
        """The documented JSON shape of one `gryvia queue -o json` item."""
        return {
            "position": self.position,
            "namespace": self.job.namespace,
            "name": self.job.name,
            "user": self.job.submitter or None,
            "tenant": self.tenant or None,
            "gpuType": self.job.type_key,
            "gpus": self.job.total_gpus,
            "gpusPerPod": self.job.gpus_per_pod,
            "pods": self.job.pods,
            "phase": self.job.phase,
            "createdAt": self.job.created.isoformat() if self.job.created else None,
            "waitingSeconds": None if self.waited is None else int(self.waited),
            "reason": self.reason,
            "blocker": pending_json(self.job.pending),
            "estimatedStart": pending_json(self.job.estimated_start),
            "start": start_cell(self.job.estimated_start, self.job.pending) or None,
            "kueueQueue": self.job.kueue_queue or None,
            "flavor": self.job.kueue_flavor or None,
            "borrowedGPUs": self.job.kueue_borrowed,
        }


def pending_json(model: PendingStatus | EstimatedStart | None) -> dict[str, Any] | None:
    """The operator's `status.pending` / `status.estimatedStart` as stored (camelCase)."""
    if model is None:
        return None
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def is_waiting(job: JobSummary) -> bool:
    """True for jobs that are not running yet: Pending, Queued, or Scheduling without any
    ready replica."""
    if job.phase == "Scheduling":
        return job.replicas_ready == 0
    return bucket(job.phase) is Bucket.WAITING


def scheduling_events(
    events: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]]
) -> dict[tuple[str, str], str]:
    """The newest FailedScheduling message per (namespace, job), from its pods' events."""
    job_by_pod = {}
    for pod in pods:
        meta = pod.get("metadata") or {}
        job = job_of_pod(pod)
        if job:
            job_by_pod[(meta.get("namespace"), meta.get("name"))] = job
    newest: dict[tuple[str, str], tuple[str, str]] = {}
    for event in events:
        if event.get("reason") != "FailedScheduling":
            continue
        target = event.get("involvedObject") or event.get("regarding") or {}
        key = (target.get("namespace"), target.get("name"))
        job = job_by_pod.get(key)
        if job is None:
            continue
        when = str(event.get("lastTimestamp") or event.get("eventTime") or "")
        message = f"pod {target.get('name')}: {str(event.get('message') or '').strip()}"
        slot = (str(key[0]), job)
        if slot not in newest or when >= newest[slot][0]:
            newest[slot] = (when, message)
    return {slot: message for slot, (_, message) in newest.items()}


def _condition_message(job: JobSummary, kind: str, status: str = "False") -> str | None:
    cond = job.condition(kind)
    if cond and cond.get("status") == status:
        reason, message = cond.get("reason") or "", cond.get("message") or ""
        return f"{reason}: {message}".strip(": ") or None
    return None


def wait_reason(
    job: JobSummary,
    nodes: Sequence[GpuNode],
    allocated: Mapping[str, int],
    event_message: str | None,
) -> str:
    """Why `job` is not running, in one line. First match wins: suspended, quota hold,
    no node of the type, pods too big for any node, the operator's SchedulingFailed
    condition, Kueue, the pods' FailedScheduling event, not enough free GPUs (naming the nodes
    of the type in maintenance, with their reasons), not yet seen by
    the operator, else the status message. The operator's structured blocker
    (`status.pending`), when there is one, wins: the same words `gryvia status` prints."""
    if job.pending is not None:
        return waiting_line(job.pending, None).removeprefix("waiting: ")
    if job.suspended:
        return "suspended (spec.suspend is true): clear it to let the job start"
    if job.phase == "Queued":
        held = _condition_message(job, "KueueAdmitted") or job.message
        if not held:
            return "queued by the quota or Kueue admission"
        return held if held.startswith("waiting for quota") else f"queued: {held}"
    rejected = _condition_message(job, "Rejected", "True")
    if rejected:
        return f"quota: {rejected}"
    if not job.cpu_only:
        usable = [n for n in nodes if type_serves(n.gpu_type, job.gpu_type)]
        if job.gpu_type and not usable:
            types = sorted({n.gpu_type for n in nodes})
            have = f" (this cluster has: {', '.join(types)})" if types else " (no GPU nodes)"
            return f'no node has GPU type "{job.gpu_type}"{have}'
        largest = max((n.gpus for n in usable), default=0)
        if usable and job.gpus_per_pod > largest:
            kind = job.gpu_type or "GPU"
            return (
                f"needs {plural(job.gpus_per_pod, 'GPU')} per pod but the largest {kind} node "
                f"has {largest}:"
                " lower spec.gpus or use distributed.nodes"
            )
    failed = _condition_message(job, "Scheduled")
    if failed:
        return failed
    if event_message:
        return event_message
    if not job.cpu_only:
        fitting_type = [n for n in nodes if type_serves(n.gpu_type, job.gpu_type)]
        free = [free_gpus(n, allocated) for n in fitting_type]
        fitting = sum(f // job.gpus_per_pod for f in free if job.gpus_per_pod)
        if fitting < job.pods:
            label = job.gpu_type or "GPUs of any type"
            away = sorted(
                {n.in_maintenance_text for n in fitting_type if n.maintenance is not None}
            )
            return (
                f"waiting for GPUs: needs {job.pods} x {job.gpus_per_pod} {label}, "
                f"{sum(free)} free now (largest free on one node: {max(free, default=0)})"
                + "".join(f"; {text}" for text in away)
            )
    if not job.conditions and not job.message:
        return "not picked up by the operator yet (is it running? see `gryvia status`)"
    return job.message or f"phase {job.phase}"


def build_queue(
    jobs: Iterable[JobSummary],
    nodes: Sequence[GpuNode],
    allocated: Mapping[str, int],
    events_by_job: Mapping[tuple[str, str], str],
    now: datetime,
) -> list[QueueEntry]:
    """Waiting jobs oldest first (ties by namespace/name), numbered per GPU type; jobs in a
    Kueue queue numbered per LocalQueue, higher priority first (`kueue_positions`)."""
    waiting = [j for j in jobs if is_waiting(j)]
    waiting.sort(key=lambda j: (j.created or now, j.namespace, j.name))
    in_kueue = kueue_positions(waiting, now)
    positions: dict[str, int] = {}
    out = []
    for job in waiting:
        position = in_kueue.get((job.namespace, job.name))
        if position is None:
            key = job.type_key.lower()
            positions[key] = positions.get(key, 0) + 1
            position = positions[key]
        reason = wait_reason(job, nodes, allocated, events_by_job.get((job.namespace, job.name)))
        waited = timefmt.seconds_between(job.created, now)
        out.append(QueueEntry(position, job, waited, reason))
    return out


def kueue_positions(waiting: Iterable[JobSummary], now: datetime) -> dict[tuple[str, str], int]:
    """(namespace, name) -> 1-based place of each job with a Kueue queue among the waiting
    jobs of the same LocalQueue (namespace, `status.kueue.queueName`), in the order Kueue's
    BestEffortFIFO queues take them: higher `spec.priority` first, then older (Kueue's
    visibility API, which would give its own positions, is not assumed)."""
    queues: dict[tuple[str, str], list[JobSummary]] = {}
    for job in waiting:
        if job.kueue_queue:
            queues.setdefault((job.namespace, job.kueue_queue), []).append(job)
    out: dict[tuple[str, str], int] = {}
    for members in queues.values():
        members.sort(key=lambda j: (-j.priority, j.created or now, j.name))
        for index, job in enumerate(members, 1):
            out[(job.namespace, job.name)] = index
    return out


def job_key(obj: Mapping[str, Any]) -> tuple[str, str]:
    """(namespace, name) of an API object ("" for a missing field)."""
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def namespace_labels_needed(jobs: Iterable[Mapping[str, Any]], tenants: Collection[str]) -> bool:
    """True when the tenant of some job in `jobs` (GryviaAIJob objects) depends on its
    namespace's labels: it has no `gryvia.io/team` label and is not in the namespace of an
    existing tenant (`tenants`: their names)."""
    for obj in jobs:
        namespace, _ = job_key(obj)
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if namespace_tenant(namespace, tenants) is None and not labels.get(LABEL_TEAM):
            return True
    return False


def with_tenants(
    entries: Iterable[QueueEntry],
    jobs: Iterable[Mapping[str, Any]],
    tenants: Collection[str],
    namespace_labels: Mapping[str, Mapping[str, str]] | None = None,
) -> list[QueueEntry]:
    """`entries` with `tenant` set from their GryviaAIJob objects in `jobs` by
    `api.attribution.tenant_of_object`, the rule the operator meters by: the namespace
    `tenant-<x>` of an existing tenant first, then the job's team label, then the namespace's
    labels (`namespace_labels`: name -> labels; None or a missing name: no labels), then the
    namespace. `tenants` are the names of the existing GryviaTenants. An entry whose job is
    not in `jobs` keeps its tenant."""
    by_key = {job_key(obj): obj for obj in jobs}
    labels = namespace_labels or {}
    out = []
    for entry in entries:
        obj = by_key.get((entry.job.namespace, entry.job.name))
        if obj is None:
            out.append(entry)
            continue
        tenant = tenant_of_object(obj, tenants, labels.get(entry.job.namespace))
        out.append(replace(entry, tenant=tenant))
    return out


QUEUE_COLUMNS = ("#", "name", "user", "gpu type", "gpus", "phase", "waiting", "start", "reason")
QUEUE_WIDE_COLUMNS = (
    "#",
    "name",
    "user",
    "tenant",
    "gpu type",
    "gpus",
    "phase",
    "waiting",
    "start",
    "flavor",
    "borrowed",
    "reason",
)
"""Columns of `queue -o wide`: the table's with TENANT after USER (NAMESPACE goes after #),
and Kueue's FLAVOR and BORROWED GPUs before REASON (`-` where the job's status has none)."""


def queue_row(entry: QueueEntry, *, all_namespaces: bool, wide: bool = False) -> list[Any]:
    """One table row: position, [namespace,] name, user (the submitter, `-` when not
    recorded), [tenant when `wide`,] type, GPUs, phase, wait, start, [Kueue flavor and
    borrowed GPUs when `wide`,] reason."""
    job = entry.job
    gpus = job.total_gpus if job.pods == 1 else f"{job.pods}x{job.gpus_per_pod}"
    row: list[Any] = [entry.position]
    if all_namespaces:
        row.append(job.namespace)
    row += [job.name, job.submitter or UNKNOWN]
    if wide:
        row.append(entry.tenant or "-")
    row += [
        job.type_key,
        gpus,
        job.phase,
        timefmt.human_duration(entry.waited or 0),
        start_cell(job.estimated_start, job.pending) or "-",
    ]
    if wide:
        borrowed = job.kueue_borrowed
        row += [job.kueue_flavor or "-", "-" if borrowed is None else str(borrowed)]
    row.append(entry.reason)
    return row


START_COLUMNS = ("#", "name", "gpu type", "gpus", "earliest", "likely", "waits for")
"""Columns of `queue --start` (like `squeue --start`): the estimate range in UTC."""


def start_order(entries: Iterable[QueueEntry]) -> list[QueueEntry]:
    """Entries by likely start, soonest first; unknown and never last (oldest first)."""

    def key(entry: QueueEntry) -> tuple[bool, str, int]:
        likely = entry.job.estimated_start.likely if entry.job.estimated_start else None
        return (likely is None, likely.isoformat() if likely else "", entry.position)

    return sorted(entries, key=key)


def start_row(entry: QueueEntry, *, all_namespaces: bool) -> list[Any]:
    """One `queue --start` row: the earliest and likely start (UTC, `YYYY-MM-DD HH:MM`),
    `unknown`/`never`, and what the start waits for (the holders' ends, or the reason)."""
    job = entry.job
    estimate, pending = job.estimated_start, job.pending
    row: list[Any] = [entry.position]
    if all_namespaces:
        row.append(job.namespace)
    gpus = job.total_gpus if job.pods == 1 else f"{job.pods}x{job.gpus_per_pod}"
    cell = start_cell(estimate, pending)
    earliest = _stamp(estimate.earliest) if estimate and estimate.earliest else cell or "-"
    likely = _stamp(estimate.likely) if estimate and estimate.likely else cell or "-"
    holders = [h for h in (pending.holders if pending else None) or [] if h.expected_end]
    if estimate is not None and estimate.likely is None:
        because = estimate.unknown_reason or "-"
    elif holders:
        because = ", ".join(f"{h.name} (ends {_stamp(h.expected_end)})" for h in holders)
    else:
        because = entry.reason
    return [*row, job.name, job.type_key, gpus, earliest, likely, because]


def _stamp(when: datetime | None) -> str:
    return when.strftime("%Y-%m-%d %H:%M") if when else "-"
