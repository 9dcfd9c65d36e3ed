"""GPU node registration: a Node's NVIDIA GFD labels -> GryviaGpuNode, node labels, readiness.

Behaviour reference section 5. Hand-made GryviaGpuNodes (without gryvia.io/auto-registered)
are never written; when one exists, the node's gryvia.io/ labels follow its spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gryvia_operator.api import API_VERSION
from gryvia_operator.api.gputype import gpu_family, normalize_gpu_type
from gryvia_operator.api.maintenance import maintenance_text
from gryvia_operator.api.names import (
    LABEL_AUTO_REGISTERED,
    LABEL_GPU,
    LABEL_GPU_COUNT,
    LABEL_GPU_FAMILY,
    LABEL_GPU_MEMORY,
    LABEL_INTERCONNECT,
    LABEL_RDMA,
    LABEL_SRIOV,
    NODE_LABELS,
)
from gryvia_operator.reconcile.views import NodeView, _int

GFD_PRESENT = "nvidia.com/gpu.present"
GFD_PRODUCT = "nvidia.com/gpu.product"
GFD_COUNT = "nvidia.com/gpu.count"
GFD_MEMORY = "nvidia.com/gpu.memory"
GFD_DRIVER = (
    "nvidia.com/cuda.driver.major",
    "nvidia.com/cuda.driver.minor",
    "nvidia.com/cuda.driver.rev",
)
GFD_RUNTIME = ("nvidia.com/cuda.runtime.major", "nvidia.com/cuda.runtime.minor")
NFD_RDMA = "feature.node.kubernetes.io/rdma.capable"
NFD_SRIOV = "feature.node.kubernetes.io/network-sriov.capable"
SPEC_KEYS = ("nodeName", "gpuType", "gpuCount", "memoryGB", "rdma", "sriov")
"""Spec keys auto-registration owns; everything else an admin sets is kept."""
STATUS_KEYS = ("phase", "message", "driverVersion", "cudaVersion")

WAITING_MESSAGE = (
    "no GPUs are allocatable yet: the NVIDIA driver and device plugin are managed by the NVIDIA "
    "GPU Operator (chart value nvidia.enabled=true) or must be installed on the host"
)
DEGRADED_MESSAGE = (
    "only {allocatable} of {count} GPUs are allocatable: check the NVIDIA device plugin and "
    "driver on the node"
)
READY_MESSAGE = "{count} GPU(s) allocatable, driver {driver}"
OVERCOMMITTED_MESSAGE = (
    "over-committed: its pods hold {held} GPUs, only {allocatable} are allocatable now; "
    "check the NVIDIA device plugin and the GPUs (nvidia-smi) on the node"
)
NOT_READY_MESSAGE = "the node is not Ready (its Ready condition): its GPUs take no new pods"
CORDONED_MESSAGE = "cordoned (SchedulingDisabled): its GPUs take no new pods"


@dataclass(frozen=True)
class GpuNodeView:
    """A GryviaGpuNode as registration sees it."""

    name: str
    auto_registered: bool
    spec: Mapping[str, Any] = field(default_factory=dict)
    status: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> GpuNodeView:
        """Project a GryviaGpuNode object."""
        meta = obj.get("metadata") or {}
        labels = meta.get("labels") or {}
        return cls(
            name=str(meta.get("name", "")),
            auto_registered=labels.get(LABEL_AUTO_REGISTERED) == "true",
            spec=dict(obj.get("spec") or {}),
            status=dict(obj.get("status") or {}),
        )


@dataclass(frozen=True)
class NodeRegistration:
    """What to write for one Node: the GryviaGpuNode (create, patch or delete) and labels."""

    create: dict[str, Any] | None = None
    """A new auto-registered GryviaGpuNode to create."""
    spec_patch: dict[str, Any] | None = None
    """Merge patch of an existing auto-registered GryviaGpuNode's spec."""
    status: dict[str, Any] | None = None
    """Merge patch of the GryviaGpuNode's status (None: nothing to change)."""
    delete: bool = False
    """Delete the auto-registered GryviaGpuNode (the node is no GPU node any more)."""
    node_labels: dict[str, str | None] = field(default_factory=dict)
    """Merge patch of the Node's labels (None removes a label)."""

    @property
    def empty(self) -> bool:
        """True when nothing needs writing."""
        return not (
            self.create or self.spec_patch or self.status or self.delete or self.node_labels
        )


def versions(labels: Mapping[str, str]) -> tuple[str, str]:
    """(driver `M.m.r`, CUDA `M.m`) from GFD labels; "" for whatever is missing."""
    driver = ".".join(labels[k] for k in GFD_DRIVER if labels.get(k))
    cuda = ".".join(labels[k] for k in GFD_RUNTIME if labels.get(k))
    return driver, cuda


def gpu_node_spec(node: NodeView) -> dict[str, Any] | None:
    """The auto-registered spec for a node, or None when it is not a registrable GPU node
    (`nvidia.com/gpu.present` is not "true" or the product label is missing)."""
    labels = node.labels
    product = labels.get(GFD_PRODUCT, "")
    if labels.get(GFD_PRESENT) != "true" or not product:
        return None
    count = _int(labels.get(GFD_COUNT), 0) or node.allocatable_gpus
    spec: dict[str, Any] = {
        "nodeName": node.name,
        "gpuType": normalize_gpu_type(product),
        "gpuCount": count,
        "rdma": labels.get(NFD_RDMA) == "true",
        "sriov": labels.get(NFD_SRIOV) == "true",
    }
    memory_mib = _int(labels.get(GFD_MEMORY), 0)
    if memory_mib > 0:
        spec["memoryGB"] = round(memory_mib / 1024)
    return spec


def gpu_node_status(spec: Mapping[str, Any], node: NodeView, held: int = 0) -> dict[str, Any]:
    """Readiness: NotReady while the Node's Ready condition is not True; else from
    allocatable GPUs: Ready, Degraded or WaitingForDrivers. A node whose GPUs are all
    MIG-partitioned is Ready when it advertises slices; one in MIG mixed mode (some whole
    GPUs, the rest as slices) is Ready with both counted, not Degraded. A node whose running
    pods hold more whole GPUs (`held`) than it now has allocatable is Degraded, over-committed
    (its allocatable shrank under them: a GPU fell off the bus, the device plugin restarted).
    A cordoned node keeps its phase (its GPUs' state) and its message starts with
    `scheduling_note`."""
    count = int(spec.get("gpuCount") or 0)
    allocatable = node.allocatable_gpus
    driver, cuda = versions(node.labels)
    slices = sum(node.mig_slices.values())
    profiles = ", ".join(f"{n}x {p}" for p, n in sorted(node.mig_slices.items()))
    if not node.ready:
        phase, message = "NotReady", NOT_READY_MESSAGE
    elif held > allocatable:
        phase = "Degraded"
        message = OVERCOMMITTED_MESSAGE.format(held=held, allocatable=allocatable)
    elif allocatable == 0 and slices > 0:
        phase = "Ready"
        message = f"{slices} MIG slice(s) allocatable ({profiles}), driver {driver or 'unknown'}"
    elif slices > 0:  # MIG mixed mode: the partitioned GPUs show as slices, not as GPUs
        phase = "Ready"
        message = (
            f"MIG mixed mode: {allocatable} whole GPU(s) and {slices} MIG slice(s) allocatable "
            f"({profiles}), driver {driver or 'unknown'}"
        )
    elif allocatable > 0 and allocatable >= count:
        phase = "Ready"
        message = READY_MESSAGE.format(count=allocatable, driver=driver or "unknown")
    elif allocatable > 0:
        phase = "Degraded"
        message = DEGRADED_MESSAGE.format(allocatable=allocatable, count=count)
    else:
        phase, message = "WaitingForDrivers", WAITING_MESSAGE
    note = scheduling_note(node)
    status: dict[str, Any] = {"phase": phase, "message": f"{note}; {message}" if note else message}
    if driver:
        status["driverVersion"] = driver
    if cuda:
        status["cudaVersion"] = cuda
    return status


def scheduling_note(node: NodeView) -> str:
    """Why a cordoned Node (`spec.unschedulable`, kubectl's SchedulingDisabled) takes no new
    pods: `in maintenance: <reason> (cordoned, SchedulingDisabled)` in maintenance
    (`api.maintenance.active_reason`), else `CORDONED_MESSAGE`; "" when it is schedulable."""
    if node.maintenance is not None:
        return f"{maintenance_text(node.maintenance)} (cordoned, SchedulingDisabled)"
    return CORDONED_MESSAGE if node.unschedulable else ""


def node_labels_for(spec: Mapping[str, Any]) -> dict[str, str]:
    """The gryvia.io/ node labels a GryviaGpuNode spec stands for."""
    labels = {
        LABEL_GPU: str(spec.get("gpuType", "")),
        LABEL_GPU_COUNT: str(spec.get("gpuCount", 0)),
        LABEL_RDMA: "true" if spec.get("rdma") else "false",
        LABEL_SRIOV: "true" if spec.get("sriov") else "false",
    }
    if spec.get("gpuType"):
        labels[LABEL_GPU_FAMILY] = gpu_family(str(spec["gpuType"]))
    if spec.get("memoryGB"):
        labels[LABEL_GPU_MEMORY] = str(spec["memoryGB"])
    if spec.get("interconnect"):
        labels[LABEL_INTERCONNECT] = str(spec["interconnect"])
    for key, value in (spec.get("labels") or {}).items():
        if str(key).startswith("gryvia.io/"):
            labels[str(key)] = str(value)
    return labels


def _label_patch(current: Mapping[str, str], desired: Mapping[str, str]) -> dict[str, str | None]:
    patch: dict[str, str | None] = {k: v for k, v in desired.items() if current.get(k) != v}
    for key in (*NODE_LABELS, LABEL_INTERCONNECT):
        if key in current and key not in desired:
            patch[key] = None
    return patch


def build_gpu_node(node: NodeView, spec: Mapping[str, Any]) -> dict[str, Any]:
    """A new auto-registered GryviaGpuNode named after the Node, owned by it (deleted with it)."""
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaGpuNode",
        "metadata": {
            "name": node.name,
            "labels": {LABEL_AUTO_REGISTERED: "true"},
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": node.name, "uid": node.uid}
            ]
            if node.uid
            else [],
        },
        "spec": dict(spec),
    }


def registration_for_node(
    node: NodeView, existing: GpuNodeView | None, held: int = 0
) -> NodeRegistration:
    """Everything registration should write for `node`, given its GryviaGpuNode (if any) and
    the whole GPUs its unfinished pods hold (`held`).

    GPU node: create or update the auto-registered GryviaGpuNode (only SPEC_KEYS), its status,
    and the node labels. Hand-made GryviaGpuNode: only node labels, from its spec. Not a GPU
    node: delete the auto-registered object and remove the gryvia.io/ labels.
    """
    derived = gpu_node_spec(node)
    if existing is not None and not existing.auto_registered:
        return NodeRegistration(
            node_labels=_label_patch(node.labels, node_labels_for(existing.spec))
        )
    if derived is None:
        return NodeRegistration(
            delete=existing is not None, node_labels=_label_patch(node.labels, {})
        )
    merged = {**(existing.spec if existing else {}), **derived}  # admin extras + owned keys
    labels = _label_patch(node.labels, node_labels_for(merged))
    status = gpu_node_status(derived, node, held)
    status_patch = {
        k: status.get(k)
        for k in STATUS_KEYS
        if (existing.status if existing else {}).get(k) != status.get(k)
    }
    if existing is None:
        return NodeRegistration(
            create=build_gpu_node(node, derived), status=status, node_labels=labels
        )
    spec_patch = {k: derived.get(k) for k in SPEC_KEYS if existing.spec.get(k) != derived.get(k)}
    return NodeRegistration(
        spec_patch={"spec": spec_patch} if spec_patch else None,
        status=status_patch or None,
        node_labels=labels,
    )
