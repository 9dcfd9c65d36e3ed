"""The documents about GPU nodes: `gryvia capacity` (Capacity) and `gryvia maintenance`
(MaintenanceList, MaintenanceReport)."""

from __future__ import annotations

from typing import Literal

from gryvia_cli.schemas.base import CliModel, Document


class TypeCapacity(CliModel):
    """The GPUs of one GPU type (or, as `totals`, of every type)."""

    gpuType: str
    """The GPU type ("" for the totals row)."""
    nodes: int
    total: int
    allocated: int
    free: int
    """Unallocated GPUs on usable nodes, not reserved."""
    pending: int
    """GPUs the waiting jobs (and unbound pods of placed jobs) still want."""
    shortfall: int
    """GPUs the pending demand lacks: max(pending - free, 0), per type."""
    headroom: int
    """Free GPUs left after the pending demand: max(free - pending, 0), per type."""
    unavailable: int
    """GPUs on nodes that are not Ready, cordoned, in maintenance or missing."""
    suspended: int
    """GPUs of suspended jobs (not part of pending)."""
    reserved: int
    """Unallocated GPUs on usable nodes a GryviaReservation holds (not part of free)."""
    sharedNodes: list[str]
    """Time-sliced nodes as `<node> x<replicas>` (their GPUs count once)."""
    maintenance: list[str]
    """`node gpu-3 in maintenance: <reason>` for each node of the type in maintenance."""
    notes: list[str]


class NodeCapacity(CliModel):
    """One node's share (the `-o wide` breakdown)."""

    name: str
    gpuType: str
    total: int
    allocated: int
    free: int
    phase: str
    """The node's state (Ready, NotReady, Cordoned, ...)."""
    usable: bool
    reservedFor: str
    """The reservation holding the node ("" when none)."""
    maintenance: str | None
    """Its maintenance reason when in maintenance ("" without one), else null."""


class Capacity(Document):
    """`gryvia capacity -o json`: GPUs per type and per node, and the demand for them."""

    kind: Literal["Capacity"]
    types: list[TypeCapacity]
    totals: TypeCapacity
    unspecifiedPending: int
    """GPUs pending without a GPU type (any node fits)."""
    nodes: list[NodeCapacity]
    warnings: list[str]
    """Kinds that could not be read (the report is partial)."""


class MarkedNode(CliModel):
    """A node carrying maintenance marks."""

    node: str
    since: str
    """When maintenance started (RFC 3339)."""
    ageSeconds: int | None
    reason: str
    cordoned: bool
    gpuType: str
    gpus: str
    """The node's allocatable GPUs as the Node reports them (a quantity string, e.g. `8`);
    `-` when it reports none."""


class MaintenanceList(Document):
    """`gryvia maintenance list -o json`: the nodes in maintenance."""

    kind: Literal["MaintenanceList"]
    items: list[MarkedNode]


class PodRef(CliModel):
    """A pod on the node."""

    namespace: str
    name: str


class RefusedPod(PodRef):
    """A pod no PodDisruptionBudget let go."""

    budget: str
    """The PodDisruptionBudget that refused (or "")."""
    reason: str


class SkippedPod(PodRef):
    """A pod left alone (DaemonSet, mirror or finished pod)."""

    reason: str


class MaintenanceReport(Document):
    """`gryvia maintenance start NODE -o json`: the node's marks and what the drain did."""

    kind: Literal["MaintenanceReport"]
    node: str
    since: str
    reason: str
    cordoned: bool
    drained: bool
    """True when --drain asked for the pods to be evicted."""
    evicted: list[PodRef]
    notEvicted: list[RefusedPod]
    skipped: list[SkippedPod]
    terminating: list[PodRef]
    """Evicted pods still terminating when the timeout ended."""
