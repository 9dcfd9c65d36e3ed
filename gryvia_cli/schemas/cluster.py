"""The documents about the cluster and the CLI: `gryvia health` (HealthReport), `gryvia quota
--fair-share` (FairShareList) and `gryvia version` (Version)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from gryvia_cli.schemas.base import CliModel, Document


class HealthNode(CliModel):
    """One GPU node as `gryvia nodes` shows it (field names as printed since before v1)."""

    name: str
    gpu_type: str
    gpus: int
    """Physical GPUs."""
    memory_gb: int | None
    driver: str
    cuda: str
    rdma: bool
    phase: str
    """GryviaGpuNode phase (Ready, Degraded, WaitingForDrivers, NotReady), else from the Node."""
    message: str
    source: str
    """`GryviaGpuNode`, or `Node` when labels only."""
    node_ready: bool
    schedulable: bool
    node_exists: bool
    reserved_for: str
    """The GryviaReservation holding the node, or ""."""
    reserved_by: str
    replicas: int
    """Shared units per physical GPU (time-slicing)."""
    gpu_faults: list[str]
    """Failed GPUs as the operator recorded them, e.g. `GPU 1: XID 79`."""
    maintenance: str | None
    """The maintenance reason ("" without one); null when not in maintenance."""
    healthy: bool


class GpuFault(CliModel):
    """A GPU reporting an XID or double-bit ECC errors, with the pod holding it."""

    node: str
    gpu: int
    uuid: str
    error: str
    """e.g. `XID 79`, `2 double-bit ECC`."""
    namespace: str | None
    pod: str | None
    job: str | None
    """The GryviaAIJob of the pod; null when none."""


class StorageBackendHealth(CliModel):
    """One storage backend (GryviaStorage) as `gryvia health storage` shows it."""

    name: str
    backend: str
    """local-path, nfs, csi or existing."""
    storageClass: str
    """The StorageClass jobs get."""
    capacity: int | str | None
    """Declared capacity (a quantity); null when not declared."""
    used: str | None
    """What the claims of the class request together (a quantity)."""
    free: str | None
    rdma: bool
    provisioner: str | None
    provisionerAnswering: bool | None
    """Whether the last finished probe bound; null before the first."""
    phase: str
    """Ready, NotReady, Invalid, or Unknown before the operator's first pass."""
    message: str | None
    probe: dict[str, Any] | None
    """The status's last probe: claim, startedAt, finishedAt, result, bindSeconds, message."""
    probeTimedOut: bool
    """The probe asked for did not finish within --timeout."""
    healthy: bool
    """Ready and, when a probe was asked for, answered in time."""


class HealthReport(Document):
    """`gryvia health -o json`: the GPU nodes, the GPUs reporting errors and the storage
    backends (exit 1 when a node is unhealthy, a GPU faulty or a backend not healthy)."""

    kind: Literal["HealthReport"]
    items: list[HealthNode] = Field(default_factory=list)
    """GPU nodes (absent for `gryvia health storage`)."""
    gpuFaults: list[GpuFault] = Field(default_factory=list)
    """Absent for `gryvia health storage`."""
    gpusRead: int = 0
    """How many GPUs dcgm-exporter reported (absent for `gryvia health storage`)."""
    storage: list[StorageBackendHealth] = Field(default_factory=list)
    """Storage backends (absent for `gryvia health gpu`)."""


class FairShare(CliModel):
    """One team's GPUs of one flavor in its Kueue ClusterQueue (docs/kueue.md)."""

    cohort: str | None
    team: str
    clusterQueue: str
    gpuType: str
    flavor: str
    nominal: int
    used: int
    borrowed: int
    lent: int
    """The share of the cohort's borrowed GPUs counted against it."""
    lendable: int
    """The part of the unused nominal quota other teams may borrow."""


class FairShareList(Document):
    """`gryvia quota --fair-share -o json`: per team and flavor, nominal, used, borrowed and
    lent GPUs."""

    kind: Literal["FairShareList"]
    items: list[FairShare]
    notes: list[str]
    """Who borrows from whom."""


class ClientVersion(CliModel):
    """The CLI's version."""

    gryvia: str
    python: str


class ServerVersion(CliModel):
    """The cluster's versions."""

    server: str
    """The API server's URL."""
    platformNamespace: str
    kubernetes: str | None
    gryviaApi: str | None
    """The served Gryvia API version (gryvia.io/v1alpha1); null when not installed."""
    operatorImages: list[str]


class Version(Document):
    """`gryvia version -o json`: client and server versions."""

    kind: Literal["Version"]
    client: ClientVersion
    server: ServerVersion | None = None
    """Absent with --client, or when the cluster cannot be reached."""
