"""The documents about one job: `gryvia status JOB` (JobStatus), `gryvia seff JOB`
(SeffReport), `gryvia gpu training` (GpuTraining) and `gryvia gpu nccl` (NcclReport)."""

from __future__ import annotations

from typing import Any, Literal

from gryvia_cli.schemas.base import CliModel, Document


class GpuUse(CliModel):
    """One GPU a job's pod holds, read now from dcgm-exporter (docs/gpu-metrics.md)."""

    pod: str
    replica: int | None
    """The pod's replica index; null when the pod has none."""
    node: str
    gpu: int
    """The GPU's index on its node."""
    activityPercent: float | None
    """0..100; null where the exporter serves no activity field."""
    field: str
    """The DCGM field the activity was read from."""
    tensorActivityPercent: float | None
    memoryUsedMiB: float | None
    powerWatts: float | None


class JobCostSoFar(CliModel):
    """The job's cost so far and its hourly burn (docs/billing.md)."""

    soFar: float
    perHour: float
    currency: str
    metered: bool
    """True when metered by the operator's usage records, false when estimated from the
    catalog rate."""


class JobStatus(Document):
    """`gryvia status JOB -o json` (and the `gryvia mcp` status tool): the job, its pods and
    events as the API server returned them, with the nodes, GPU use and cost so far."""

    kind: Literal["JobStatus"]
    job: dict[str, Any]
    """The GryviaAIJob object as the API server returned it (gryvia.io/v1alpha1;
    docs/reference/crds.md)."""
    pods: list[dict[str, Any]]
    """The job's Pods (Kubernetes core/v1 Pod objects, as returned)."""
    events: list[dict[str, Any]]
    """The Events about the job and its pods (Kubernetes core/v1 Event objects)."""
    nodes: list[str]
    """The nodes the job's pods are bound to, in replica order."""
    gpus: list[GpuUse] | None
    """Its GPUs' use; null when not read (no pod runs)."""
    gpusSource: str | None
    """Where the GPU use was read; null when it was not."""
    cost: JobCostSoFar | None
    """Null when unknown (no price, no usage record)."""
    checkpoints: dict[str, str] | None = None
    """A guarded job's checkpoint record, the data of its ConfigMap `<job>-checkpoint`:
    `resumeStep`, `committedSteps` (comma-separated), `lastCommitTime`, `restores`,
    `directory`, `claim`, `storage` (docs/checkpoints.md); null when it has none."""


class SeffReport(Document):
    """`gryvia seff JOB -o json`: one job's GPU efficiency, as Slurm's seff reports it."""

    kind: Literal["SeffReport"]
    namespace: str
    job: str
    user: str | None
    """The submitter; null when unknown."""
    state: str
    """The job's phase."""
    nodes: list[str]
    gpus: int
    gpuType: str | None
    wallSeconds: int
    gpuEfficiencyPercent: float | None
    """Mean GPU activity; null when the job was never sampled."""
    p95ActivityPercent: float | None
    field: str | None
    """The DCGM field sampled; null when never sampled."""
    samples: int
    gpuMemoryEfficiencyPercent: float | None
    peakMemoryUsedBytes: float | None
    gpuMemoryMiB: int | None
    """The memory of one GPU (node label); null when unknown."""
    gpuHours: float
    activeGpuHours: float | None
    idleCost: float | None
    """The cost of the idle GPU-hours; null without samples or price."""
    currency: str


class Rank(GpuUse):
    """One rank's GPU, numbered as torchrun numbers them."""

    rank: int


class Straggler(CliModel):
    """The slowest replica or rank, and why it counts as one."""

    replica: int | None
    rank: int | None
    reason: str


class GpuTraining(Document):
    """`gryvia gpu training --job JOB -o json`: each rank's GPU use and the straggler."""

    kind: Literal["GpuTraining"]
    job: str
    """`namespace/name`."""
    ranks: list[Rank]
    stepRates: dict[str, float]
    """Steps per second per replica index, from the step lines of its log."""
    straggler: Straggler | None
    advice: list[str]


class NcclReport(Document):
    """`gryvia gpu nccl --job JOB -o json`: what the job's NCCL_DEBUG=INFO lines said."""

    kind: Literal["NcclReport"]
    job: str
    """`namespace/name`."""
    version: str | None
    networks: list[str]
    """The networks NCCL chose (IB, Socket, ...)."""
    transports: dict[str, int]
    """Connections per transport (P2P, SHM, IB, Socket), only those seen."""
    gpuDirectRDMA: int
    """Connections over the network through GPUDirect RDMA."""
    rings: dict[str, list[int]]
    """Each channel's ring of ranks, by channel number."""
    trees: list[str]
    nranks: int | None
    warnings: list[str]
    askedRDMA: bool
    """Whether the job asked for `network: rdma`."""
    socketFallback: bool
    """True when a job that asked for rdma went over sockets (the command exits 1)."""
