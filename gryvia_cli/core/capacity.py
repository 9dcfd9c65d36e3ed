"""GPU capacity per type: total, allocated, free, pending demand, shortfall, headroom.

Supply comes from `core.nodes` (GryviaGpuNodes, else GPU labels on Nodes). Allocation is what
bound, unfinished pods hold on those nodes (any workload, not only Gryvia's). Pending demand is
the GPUs of jobs still waiting (Pending, Queued) plus the unplaced pods of jobs already placed
(Scheduling or Running), so a job is never counted both as allocated and as pending.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gryvia_cli.core.cells import Marked, plural
from gryvia_cli.core.jobs import JobSummary, job_of_pod
from gryvia_cli.core.nodes import (
    GpuNode,
    free_gpus,
    physical_in_use,
    pod_gpus,
    pod_holds_node,
    pod_slices,
)
from gryvia_cli.core.phases import Bucket, bucket
from gryvia_operator.api.gputype import gpu_type_matches
from gryvia_operator.api.mig import slot_key


@dataclass
class TypeCapacity:
    """Capacity of one GPU type (or the totals row)."""

    gpu_type: str
    nodes: int = 0
    total: int = 0
    allocated: int = 0
    free: int = 0
    pending: int = 0
    unavailable: int = 0
    """GPUs on nodes that are not Ready, cordoned or missing."""
    suspended: int = 0
    """GPUs of suspended jobs (not part of pending)."""
    reserved: int = 0
    """Unallocated GPUs on usable nodes a GryviaReservation holds (not part of free)."""
    notes: list[str] = field(default_factory=list)
    maintenance: list[str] = field(default_factory=list)
    """`node gpu-3 in maintenance: <reason>` for each node of this type in maintenance (their
    GPUs count as unavailable, never free)."""
    shared_nodes: list[str] = field(default_factory=list)
    """Time-sliced nodes of this type as `<node> x<replicas>` (their GPUs count once)."""
    parts: list[TypeCapacity] | None = field(default=None, repr=False, compare=False)
    """For the totals row: the per-type rows whose shortfall and headroom it adds up (one
    type's free GPUs do not serve another type's demand)."""

    @property
    def shortfall(self) -> int:
        """GPUs the pending demand lacks: max(pending - free, 0); the per-type sum for the
        totals row."""
        if self.parts is not None:
            return sum(t.shortfall for t in self.parts)
        return max(self.pending - self.free, 0)

    @property
    def headroom(self) -> int:
        """Free GPUs left after the pending demand: max(free - pending, 0); the per-type sum
        for the totals row."""
        if self.parts is not None:
            return sum(t.headroom for t in self.parts)
        return max(self.free - self.pending, 0)

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of a row."""
        return {
            "gpuType": self.gpu_type,
            "nodes": self.nodes,
            "total": self.total,
            "allocated": self.allocated,
            "free": self.free,
            "pending": self.pending,
            "shortfall": self.shortfall,
            "headroom": self.headroom,
            "unavailable": self.unavailable,
            "suspended": self.suspended,
            "reserved": self.reserved,
            "sharedNodes": list(self.shared_nodes),
            "maintenance": list(self.maintenance),
            "notes": list(self.notes),
        }


@dataclass
class NodeCapacity:
    """One node's share (the `-o wide` breakdown)."""

    name: str
    gpu_type: str
    total: int
    allocated: int
    free: int
    phase: str
    usable: bool
    reserved_for: str = ""
    """The reservation holding the node ("" when none): its free GPUs count as reserved."""
    maintenance: str | None = None
    """Its maintenance reason when in maintenance ("" without one), else None."""

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of a node, camelCase like every other key of the report."""
        return {
            "name": self.name,
            "gpuType": self.gpu_type,
            "total": self.total,
            "allocated": self.allocated,
            "free": self.free,
            "phase": self.phase,
            "usable": self.usable,
            "reservedFor": self.reserved_for,
            "maintenance": self.maintenance,
        }


@dataclass
class CapacityReport:
    """Per-type rows, totals, demand without a GPU type, and the per-node breakdown."""

    types: list[TypeCapacity]
    totals: TypeCapacity
    unspecified_pending: int
    nodes: list[NodeCapacity]

    def as_dict(self) -> dict[str, Any]:
        """The documented JSON shape of `gryvia capacity -o json`."""
        return {
            "types": [t.as_dict() for t in self.types],
            "totals": self.totals.as_dict(),
            "unspecifiedPending": self.unspecified_pending,
            "nodes": [n.as_dict() for n in self.nodes],
        }


def pending_demand(
    jobs: Iterable[JobSummary], pods: Sequence[Mapping[str, Any]] | None
) -> dict[str, int]:
    """GPUs still wanted per GPU type ("" = no type): waiting jobs' totals plus the unbound
    pods of placed jobs (a placed job without pods yet counts in full). Suspended jobs ask
    for nothing until resumed (see `suspended_demand`)."""
    by_job: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for pod in pods or []:
        owner = job_of_pod(pod)
        if owner:
            ns = str((pod.get("metadata") or {}).get("namespace") or "")
            by_job.setdefault((ns, owner), []).append(pod)
    demand: dict[str, int] = {}
    for job in jobs:
        if job.cpu_only or job.suspended:
            continue
        group = bucket(job.phase)
        if group is Bucket.WAITING:
            wanted = job.total_gpus
        elif group is Bucket.ACTIVE and pods is not None:
            own = by_job.get((job.namespace, job.name), [])
            live = [
                p
                for p in own
                if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            ]
            if not own and job.phase == "Scheduling" and not job.suspended:
                wanted = job.total_gpus
            else:
                wanted = sum(
                    pod_gpus(p) + sum(pod_slices(p).values()) for p in live if not pod_holds_node(p)
                )
        else:
            continue
        if wanted:
            demand[job.gpu_type] = demand.get(job.gpu_type, 0) + wanted
    return demand


def suspended_demand(jobs: Iterable[JobSummary]) -> dict[str, int]:
    """GPUs per GPU type of suspended jobs that have not ended (not counted as pending)."""
    out: dict[str, int] = {}
    for job in jobs:
        if job.suspended and not job.cpu_only and not job.terminal:
            out[job.gpu_type] = out.get(job.gpu_type, 0) + job.total_gpus
    return out


def allocated_from_jobs(jobs: Iterable[JobSummary]) -> dict[str, int]:
    """Fallback when pods cannot be read: GPUs per node from placed jobs' `nodesAllocated`
    (one pod per allocated node)."""
    out: dict[str, int] = {}
    for job in jobs:
        if bucket(job.phase) is Bucket.ACTIVE and not job.cpu_only:
            for node in job.nodes_allocated:
                key = slot_key(node, job.gpu_type)
                out[key] = out.get(key, 0) + job.gpus_per_pod
    return out


def _match(gpu_type: str, wanted: str | None) -> bool:
    return wanted is None or gpu_type_matches(wanted, gpu_type)


def compute_capacity(
    nodes: Sequence[GpuNode],
    allocated: Mapping[str, int],
    jobs: Iterable[JobSummary],
    pods: Sequence[Mapping[str, Any]] | None,
    *,
    gpu_type: str | None = None,
) -> CapacityReport:
    """Build the capacity report; `gpu_type` (case-insensitive) keeps only that type and
    leaves out jobs without a type."""
    rows: dict[str, TypeCapacity] = {}
    breakdown: list[NodeCapacity] = []
    for node in nodes:
        if not _match(node.gpu_type, gpu_type):
            continue
        row = rows.setdefault(node.gpu_type, TypeCapacity(node.gpu_type))
        used = physical_in_use(node, allocated)
        free = free_gpus(node, allocated)
        if node.reserved_for and node.usable:  # held for its owner: not free for others
            row.reserved += free
            free = 0
        if node.replicas > 1:
            row.shared_nodes.append(f"{node.name} x{node.replicas}")
        row.nodes += 1
        row.total += node.gpus
        row.allocated += used
        row.free += free
        if not node.usable:
            row.unavailable += node.gpus
        if node.maintenance is not None:
            row.maintenance.append(node.in_maintenance_text)
        breakdown.append(
            NodeCapacity(
                node.name,
                node.gpu_type,
                node.gpus,
                used,
                free,
                node.phase,
                node.usable,
                node.reserved_for,
                node.maintenance,
            )
        )
    jobs = list(jobs)
    demand = pending_demand(jobs, pods)
    for wanted_type, gpus in suspended_demand(jobs).items():
        if wanted_type and _match(wanted_type, gpu_type):
            key = next((k for k in rows if k.lower() == wanted_type.lower()), wanted_type)
            rows.setdefault(key, TypeCapacity(key)).suspended += gpus
    unspecified = 0 if gpu_type else demand.pop("", 0)
    demand.pop("", None)
    by_lower = {key.lower(): key for key in rows}
    for wanted_type, gpus in demand.items():
        if not _match(wanted_type, gpu_type):
            continue
        key = by_lower.get(wanted_type.lower(), wanted_type)
        rows.setdefault(key, TypeCapacity(key)).pending += gpus
    for row in rows.values():
        if row.total == 0 and row.pending:
            row.notes.append("no node registers this type")
        if row.allocated > row.total:
            row.notes.append(f"allocated exceeds total by {row.allocated - row.total}")
        if row.unavailable:
            row.notes.append(f"{plural(row.unavailable, 'GPU')} on unavailable nodes")
        row.notes.extend(row.maintenance)
        if row.suspended:
            row.notes.append(f"{plural(row.suspended, 'GPU')} of suspended jobs not counted")
        if row.shared_nodes:
            row.notes.append(f"time-sliced, physical GPUs counted: {', '.join(row.shared_nodes)}")
    types = sorted(rows.values(), key=lambda t: t.gpu_type.lower())
    totals = TypeCapacity("total", parts=types)
    for row in types:
        totals.nodes += row.nodes
        totals.total += row.total
        totals.allocated += row.allocated
        totals.free += row.free
        totals.pending += row.pending
        totals.unavailable += row.unavailable
        totals.suspended += row.suspended
        totals.reserved += row.reserved
        totals.maintenance += row.maintenance
    totals.pending += unspecified
    return CapacityReport(types, totals, unspecified, breakdown)


CAPACITY_COLUMNS = (
    "gpu type",
    "nodes",
    "total",
    "allocated",
    "free",
    "reserved",
    "pending",
    "shortfall",
    "headroom",
    "note",
)


def capacity_rows(report: CapacityReport) -> list[list[Any]]:
    """Table rows for the per-type view, shortfalls and notes marked."""
    rows: list[list[Any]] = []
    for t in report.types:
        rows.append(
            [
                t.gpu_type,
                t.nodes,
                t.total,
                t.allocated,
                Marked(str(t.free), "warn" if t.total and not t.free else "ok"),
                t.reserved,
                t.pending,
                Marked(str(t.shortfall), "error") if t.shortfall else 0,
                t.headroom,
                Marked("; ".join(t.notes), "warn") if t.notes else "",
            ]
        )
    return rows
