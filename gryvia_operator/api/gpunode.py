"""GryviaGpuNode: a GPU node's registration (type, count, fabric) and its observed readiness."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StrictBool, StringConstraints

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    Conditions,
    GryviaModel,
    GryviaResource,
    Int32,
    KindInfo,
    NonNegativeInt32,
    PrinterColumn,
    Str253,
)

GpuNodePhase = Literal["Ready", "Degraded", "WaitingForDrivers", "NotReady"]
GpuHealth = Literal["Healthy", "Degraded", "Failed", "Unknown"]


class GryviaGpuNodeSpec(GryviaModel):
    """What the node offers; auto-registration overwrites only nodeName, gpuType, gpuCount,
    memoryGB, rdma and sriov."""

    node_name: Annotated[str, StringConstraints(min_length=1, max_length=253)]
    """The Kubernetes Node this object describes."""
    gpu_type: Annotated[str, StringConstraints(min_length=1, max_length=63)]
    """Normalised GPU type (H100, A100-80G, ...); written to the node label gryvia.io/gpu."""
    gpu_count: NonNegativeInt32
    """GPUs on the node; written to the node label gryvia.io/gpu-count."""
    memory_gb: NonNegativeInt32 | None = Field(default=None, alias="memoryGB")
    """Memory per GPU in GB (rounded from the nvidia.com/gpu.memory MiB label)."""
    rdma: StrictBool | None = None
    """RDMA-capable NIC present (node label gryvia.io/rdma)."""
    sriov: StrictBool | None = None
    """SR-IOV-capable NIC present (node label gryvia.io/sriov)."""
    interconnect: Str253 | None = None
    """GPU interconnect, e.g. NVLink or NVSwitch (node label gryvia.io/interconnect)."""
    labels: dict[str, str] | None = None
    """Extra node labels; only keys with the gryvia.io/ prefix are applied."""


class GpuStatus(GryviaModel):
    """Health of one GPU as reported by the node's DCGM exporter."""

    index: Int32
    """GPU index on the node."""
    uuid: Str253 | None = None
    """GPU UUID."""
    health: GpuHealth | None = None
    """Healthy, Degraded (> 85 C), Failed (> 95 C, or an XID or double-bit ECC error its
    exporter reports) or Unknown (no temperature)."""
    temperature: float | None = None
    """Degrees Celsius."""
    power_usage: float | None = None
    """Watts."""
    memory_used: float | None = None
    """MiB in use."""
    memory_total: float | None = None
    """MiB in total."""
    utilization: float | None = None
    """Percent busy, 0..100."""
    xid: Int32 | None = None
    """The last XID error its exporter reports (`DCGM_FI_DEV_XID_ERRORS`); unset: none."""
    ecc_double_bit: Int32 | None = Field(default=None, alias="eccDoubleBit")
    """Double-bit ECC errors its exporter reports (`DCGM_FI_DEV_ECC_DBE_VOL_TOTAL`)."""


class GryviaGpuNodeStatus(GryviaModel):
    """Readiness from the node's allocatable GPUs and per-GPU health."""

    phase: GpuNodePhase | None = None
    """Ready (all GPUs allocatable, or MIG slices), Degraded (some), WaitingForDrivers (none),
    or NotReady (the Node's Ready condition is not True)."""
    message: str | None = None
    """Detail of the phase, e.g. "8 GPU(s) allocatable, driver 550.54"."""
    conditions: Conditions | None = None
    """Standard conditions."""
    gpu_status: list[GpuStatus] | None = None
    """Per-GPU health."""
    driver_version: Str253 | None = None
    """NVIDIA driver version M.m.r."""
    cuda_version: Str253 | None = None
    """CUDA runtime version M.m."""
    last_health_check: datetime | None = None
    """When health was last read."""


class GryviaGpuNode(GryviaResource):
    """A GPU node known to Gryvia; the operator mirrors it onto the Node's gryvia.io/ labels."""

    kind: Literal["GryviaGpuNode"] = "GryviaGpuNode"
    spec: GryviaGpuNodeSpec
    status: GryviaGpuNodeStatus | None = None


GPUNODE_KIND = KindInfo(
    resource=resources.GPUNODE,
    model=GryviaGpuNode,
    description=GryviaGpuNode.__doc__ or "",
    printer_columns=(
        PrinterColumn("Node", ".spec.nodeName"),
        PrinterColumn("GPU-Type", ".spec.gpuType"),
        PrinterColumn("GPU-Count", ".spec.gpuCount", "integer"),
        PrinterColumn("RDMA", ".spec.rdma", "boolean"),
        PrinterColumn("Phase", ".status.phase"),
        AGE_COLUMN,
    ),
    omitted=(
        "spec.bandwidth, spec.computeCapability, spec.drivers: informational, nothing reads them",
        "spec.healthCheck: readiness is derived from allocatable GPUs, there is no interval knob",
    ),
)
GryviaGpuNode.kind_info = GPUNODE_KIND
