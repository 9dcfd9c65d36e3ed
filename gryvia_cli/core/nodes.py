"""GPU supply: GPU nodes and the GPUs their pods hold.

Nodes come from GryviaGpuNodes, or from GPU feature labels on Nodes not registered yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from gryvia_cli.core.cells import Marked
from gryvia_operator.api.gputype import normalize_gpu_type
from gryvia_operator.api.maintenance import active_reason, maintenance_text
from gryvia_operator.api.mig import parent_type, parse_profile, slice_type, slices_in, slot_key
from gryvia_operator.api.names import LABEL_GPU
from gryvia_operator.api.timeslicing import replicas_of as replicas_in

GPU_RESOURCE = "nvidia.com/gpu"
PRODUCT_LABEL = "nvidia.com/gpu.product"
READY_PHASES = ("Ready",)


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> int:
    try:
        return max(int(str(value).strip()), 0)
    except (TypeError, ValueError):
        return 0


@dataclass(frozen=True)
class GpuNode:
    """One GPU node as the CLI shows it."""

    name: str
    gpu_type: str
    gpus: int
    memory_gb: int | None
    driver: str
    cuda: str
    rdma: bool
    phase: str
    """GryviaGpuNode phase (Ready, Degraded, WaitingForDrivers, NotReady), else NotReady/Ready
    from the Node, `Unregistered`... see `gpu_nodes`."""
    message: str
    source: str
    """`GryviaGpuNode` or `Node` (labels only, no GryviaGpuNode yet)."""
    node_ready: bool
    schedulable: bool
    node_exists: bool
    reserved_for: str = ""
    """The GryviaReservation holding the node (Node label gryvia.io/reserved-for), or ""."""
    reserved_by: str = ""
    """The owner of that reservation (Node label gryvia.io/reserved-by), or ""."""
    replicas: int = 1
    """Shared units per physical GPU (`nvidia.com/gpu.replicas`, time-slicing); `gpus` stays
    the physical count, what capacity and cost count."""
    gpu_faults: tuple[str, ...] = ()
    """Its failed GPUs as the operator's sampler recorded them (`status.gpuStatus`), e.g.
    `GPU 1: XID 79`."""
    maintenance: str | None = None
    """The reason of a node in maintenance ("" without one; `api.maintenance.active_reason`),
    None when it is not in maintenance."""

    @property
    def in_maintenance_text(self) -> str:
        """`node gpu-3 in maintenance: <reason>` ("" when it is not in maintenance)."""
        if self.maintenance is None:
            return ""
        return f"node {self.name} {maintenance_text(self.maintenance)}"

    @property
    def slot(self) -> str:
        """The key of this row's GPUs in an allocation map: the node name for whole GPUs,
        `<node>/<profile>` for a row of MIG slices (see `slot_key`)."""
        return slot_key(self.name, self.gpu_type)

    @property
    def usable(self) -> bool:
        """True when new pods can land here: the Node exists, is Ready and not cordoned."""
        return self.node_exists and self.node_ready and self.schedulable

    @property
    def healthy(self) -> bool:
        """True when usable, the phase is Ready and no GPU failed."""
        return self.usable and self.phase in READY_PHASES and not self.gpu_faults


def with_slices(row: GpuNode, node: Mapping[str, Any] | None) -> list[GpuNode]:
    """A node row plus one row per MIG profile its Node advertises in allocatable
    (`nvidia.com/mig-3g.40gb: 2` -> an `H100-MIG-3G.40GB` row of 2, counted as slices). On a
    MIG node the whole-GPU row keeps only the unpartitioned GPUs (allocatable
    `nvidia.com/gpu`), and is left out when there are none."""
    allocatable = _map(_map((node or {}).get("status")).get("allocatable"))
    slices = slices_in(allocatable)
    if not slices:
        return [row]
    parent = parent_type(row.gpu_type) or row.gpu_type
    whole = replace(row, gpu_type=parent, gpus=_count(allocatable.get(GPU_RESOURCE)))
    extra = [
        replace(row, gpu_type=slice_type(parent, profile), gpus=count, replicas=1)
        for name, count in sorted(slices.items())
        if (profile := parse_profile(name)) is not None
    ]
    return [whole, *extra] if whole.gpus else extra


def node_ready(node: Mapping[str, Any]) -> bool:
    """True when the Node's Ready condition is True."""
    conditions = _map(node.get("status")).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _from_labels(node: Mapping[str, Any]) -> dict[str, Any] | None:
    labels = _map(_map(node.get("metadata")).get("labels"))
    allocatable = _map(_map(node.get("status")).get("allocatable"))
    product = labels.get(PRODUCT_LABEL) or labels.get(LABEL_GPU)
    count = _count(labels.get("nvidia.com/gpu.count")) or _count(allocatable.get(GPU_RESOURCE))
    if not product and not count:
        return None
    memory_mib = _count(labels.get("nvidia.com/gpu.memory"))
    major, minor = (
        labels.get("nvidia.com/cuda.driver.major"),
        labels.get("nvidia.com/cuda.driver.minor"),
    )
    rev = labels.get("nvidia.com/cuda.driver.rev")
    driver = ".".join(str(p) for p in (major, minor, rev) if p) if major else ""
    cuda_major = labels.get("nvidia.com/cuda.runtime.major")
    cuda_minor = labels.get("nvidia.com/cuda.runtime.minor")
    return {
        "gpu_type": normalize_gpu_type(str(product)) if product else "unknown",
        "gpus": count,
        "memory_gb": round(memory_mib / 1024) if memory_mib else None,
        "driver": driver,
        "cuda": f"{cuda_major}.{cuda_minor}" if cuda_major else "",
        "rdma": str(labels.get("feature.node.kubernetes.io/rdma.capable", "")).lower() == "true",
    }


def gpu_nodes(
    registrations: Iterable[Mapping[str, Any]], nodes: Iterable[Mapping[str, Any]] | None
) -> list[GpuNode]:
    """Join GryviaGpuNodes with Nodes; Nodes with GPU labels but no registration are included
    from their labels. With `nodes` None (Nodes not readable) registrations are trusted: a
    node counts as Ready when its GryviaGpuNode phase is Ready. Sorted by type then name."""
    trusted = nodes is None
    by_name = {str(_map(n.get("metadata")).get("name")): n for n in nodes or []}
    out: list[GpuNode] = []
    covered: set[str] = set()
    for reg in registrations:
        spec, status = _map(reg.get("spec")), _map(reg.get("status"))
        node_name = str(spec.get("nodeName") or _map(reg.get("metadata")).get("name") or "")
        covered.add(node_name)
        node = by_name.get(node_name)
        facts = _from_labels(node) if node else None
        phase = str(status.get("phase") or "")
        ready = node_ready(node) if node else (trusted and phase == "Ready")
        if trusted:
            message = str(status.get("message") or "")
        elif node is None:
            phase, message = "Missing", "no such Node"
        else:
            message = str(status.get("message") or "")
            phase = phase or ("Ready" if ready else "NotReady")
            if not ready:
                phase = "NotReady"
        memory = spec.get("memoryGB")
        row = GpuNode(
            name=node_name,
            gpu_type=normalize_gpu_type(str(spec.get("gpuType") or "")) or "unknown",
            gpus=_count(spec.get("gpuCount")),
            memory_gb=memory if isinstance(memory, int) else (facts or {}).get("memory_gb"),
            driver=str(status.get("driverVersion") or (facts or {}).get("driver") or ""),
            cuda=str(status.get("cudaVersion") or (facts or {}).get("cuda") or ""),
            rdma=spec.get("rdma") is True,
            phase=phase,
            message=message,
            source="GryviaGpuNode",
            node_ready=ready,
            schedulable=_map((node or {}).get("spec")).get("unschedulable") is not True,
            node_exists=node is not None or trusted,
            replicas=replicas_of(node),
            gpu_faults=failed_gpus(status),
        )
        out.extend(with_slices(row, node))
    for name, node in by_name.items():
        if name in covered:
            continue
        facts = _from_labels(node)
        if facts is None:
            continue
        ready = node_ready(node)
        row = GpuNode(
            name=name,
            phase="Ready" if ready else "NotReady",
            message="not registered as a GryviaGpuNode",
            source="Node",
            node_ready=ready,
            schedulable=_map(node.get("spec")).get("unschedulable") is not True,
            node_exists=True,
            replicas=replicas_of(node),
            **facts,
        )
        out.extend(with_slices(row, node))
    out = [
        replace(
            n,
            reserved_for=reserved_for(by_name.get(n.name)),
            reserved_by=reserved_for(by_name.get(n.name), by=True),
            maintenance=active_reason(by_name.get(n.name)),
        )
        for n in out
    ]
    return sorted(out, key=lambda n: (n.gpu_type, n.name))


def reserved_for(node: Mapping[str, Any] | None, *, by: bool = False) -> str:
    """The reservation a Node is held for (label gryvia.io/reserved-for), or its owner with
    `by` (label gryvia.io/reserved-by); "" when not reserved."""
    from gryvia_operator.api.names import LABEL_RESERVED_BY, LABEL_RESERVED_FOR

    labels = _map(_map((node or {}).get("metadata")).get("labels"))
    return str(labels.get(LABEL_RESERVED_BY if by else LABEL_RESERVED_FOR, ""))


def pod_gpus(pod: Mapping[str, Any]) -> int:
    """GPUs a pod asks for: the sum over its containers of the `nvidia.com/gpu` request (or
    limit), or the largest init container's, whichever is bigger."""

    def of(container: Mapping[str, Any]) -> int:
        res = _map(container.get("resources"))
        return _count(_map(res.get("requests")).get(GPU_RESOURCE)) or _count(
            _map(res.get("limits")).get(GPU_RESOURCE)
        )

    spec = _map(pod.get("spec"))
    main = sum(of(c) for c in spec.get("containers") or [] if isinstance(c, Mapping))
    init = max(
        (of(c) for c in spec.get("initContainers") or [] if isinstance(c, Mapping)), default=0
    )
    return max(main, init)


def pod_holds_node(pod: Mapping[str, Any]) -> bool:
    """True when the pod is bound to a node and not finished (it holds its resources)."""
    phase = _map(pod.get("status")).get("phase")
    return bool(_map(pod.get("spec")).get("nodeName")) and phase not in ("Succeeded", "Failed")


def pod_slices(pod: Mapping[str, Any]) -> dict[str, int]:
    """MIG slices per profile a pod asks for: its containers' `nvidia.com/mig-*` requests
    (else limits), summed."""
    out: dict[str, int] = {}
    for container in _map(pod.get("spec")).get("containers") or []:
        res = _map(_map(container).get("resources"))
        asked = slices_in(_map(res.get("requests"))) or slices_in(_map(res.get("limits")))
        for profile, count in asked.items():
            out[profile] = out.get(profile, 0) + count
    return out


def allocated_by_node(pods: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """GPUs held per node name by bound, unfinished pods; MIG slices per `node/profile`
    (see `slot_key`)."""
    out: dict[str, int] = {}
    for pod in pods:
        if not pod_holds_node(pod):
            continue
        node = str(_map(pod.get("spec")).get("nodeName"))
        held = {node: pod_gpus(pod)} | {
            slot_key(node, profile): count for profile, count in pod_slices(pod).items()
        }
        for key, count in held.items():
            if count:
                out[key] = out.get(key, 0) + count
    return out


def free_gpus(node: GpuNode, allocated: Mapping[str, int]) -> int:
    """GPUs (or, on a MIG row, slices) a new pod could get on `node` now (0 when the node
    is not usable)."""
    if not node.usable:
        return 0
    return max(node.gpus - physical_in_use(node, allocated), 0)


def physical_in_use(node: GpuNode, allocated: Mapping[str, int]) -> int:
    """Physical GPUs the pods on `node` hold: the shared units they request divided by the
    node's time-slicing replicas, rounded up (a pod on a shared GPU holds part of one)."""
    units = allocated.get(node.slot, 0)
    return -(-units // node.replicas) if node.replicas > 1 else units


def replicas_of(node: Mapping[str, Any] | None) -> int:
    """Time-slicing replicas from GPU feature discovery's `nvidia.com/gpu.replicas` (1: none)."""
    return replicas_in(_map(_map((node or {}).get("metadata")).get("labels")))


def phase_cell(node: GpuNode) -> Marked:
    """The node's phase, coloured: Ready green, Degraded/cordoned yellow (in maintenance: with
    its reason), others red; a node with a failed GPU says which, red."""
    if node.gpu_faults:
        return Marked(f"{node.phase} ({'; '.join(node.gpu_faults)})", "error")
    if node.maintenance is not None and node.node_exists:
        return Marked(f"{node.phase},{maintenance_text(node.maintenance)}", "warn")
    if not node.schedulable and node.node_exists:
        return Marked(f"{node.phase},SchedulingDisabled", "warn")
    if node.phase == "Ready":
        return Marked(node.phase, "ok")
    if node.phase == "Degraded":
        return Marked(node.phase, "warn")
    return Marked(node.phase or "Unknown", "error")


NODE_COLUMNS = ("node", "gpu type", "gpus", "memory", "driver", "rdma", "status")
NODE_WIDE_COLUMNS = (*NODE_COLUMNS, "allocated", "free", "source", "message")


def node_row(node: GpuNode, allocated: Mapping[str, int] | None, *, wide: bool) -> list[Any]:
    """One `list nodes` row (+ allocated/free/source/message with `wide`)."""
    driver = node.driver + (f" / CUDA {node.cuda}" if node.cuda else "") if node.driver else "-"
    row: list[Any] = [
        node.name,
        node.gpu_type,
        node.gpus,
        f"{node.memory_gb} GB" if node.memory_gb else "-",
        driver,
        Marked("✓", "ok") if node.rdma else Marked("-", "disabled"),
        phase_cell(node),
    ]
    if wide:
        used = (allocated or {}).get(node.slot, 0) if allocated is not None else None
        row += [
            "-" if used is None else used,
            "-" if allocated is None else free_gpus(node, allocated),
            node.source,
            node.message or "-",
        ]
    return row


def failed_gpus(status: Mapping[str, Any]) -> tuple[str, ...]:
    """`GPU N: XID X, M double-bit ECC` for each GPU of a GryviaGpuNode's `status.gpuStatus`
    whose health is Failed."""
    out = []
    for gpu in status.get("gpuStatus") or []:
        if not isinstance(gpu, Mapping) or gpu.get("health") != "Failed":
            continue
        errors = [f"XID {gpu['xid']}"] if gpu.get("xid") else []
        errors += [f"{gpu['eccDoubleBit']} double-bit ECC"] if gpu.get("eccDoubleBit") else []
        out.append(f"GPU {gpu.get('index')}: {', '.join(errors) or 'failed'}")
    return tuple(out)
