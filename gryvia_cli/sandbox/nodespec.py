"""The sandbox's simulated nodes: the `--nodes` spec and the Node objects built from it.

Labels follow what NVIDIA GPU feature discovery (GFD) and Node Feature Discovery put on real
GPU nodes: `nvidia.com/gpu.present`, `nvidia.com/gpu.product`, `nvidia.com/gpu.count`,
`nvidia.com/gpu.memory` (MiB), `nvidia.com/cuda.driver.{major,minor,rev}`,
`nvidia.com/cuda.runtime.{major,minor}` and `feature.node.kubernetes.io/rdma.capable`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gryvia_cli.errors import GryviaError
from gryvia_operator.api.mig import DEFAULT_COMPUTE_SLICES, parse_profile
from gryvia_operator.api.names import ANNOTATION_SANDBOX_NODE

#: The default cluster: a small mixed fleet.
DEFAULT_NODES = "2xH100:8,2xA100-80G:8,2xL40:4,1xcpu"


@dataclass(frozen=True)
class GpuModel:
    """What one simulated GPU model looks like to Kubernetes."""

    product: str  # GFD's nvidia.com/gpu.product
    memory_mib: int  # per GPU
    rdma: bool  # nodes of this model carry an RDMA-capable NIC
    cpu: int  # node CPUs
    memory_gib: int  # node memory


#: Models the sandbox can simulate, by Gryvia GPU type (the `gpuType` of a GryviaAIJob).
GPU_MODELS: dict[str, GpuModel] = {
    "H100": GpuModel("NVIDIA-H100-80GB-HBM3", 81559, True, 192, 2048),
    "H200": GpuModel("NVIDIA-H200", 143771, True, 192, 2048),
    "A100-80G": GpuModel("NVIDIA-A100-SXM4-80GB", 81920, True, 128, 1024),
    "A100-40G": GpuModel("NVIDIA-A100-SXM4-40GB", 40960, True, 96, 1024),
    "L40S": GpuModel("NVIDIA-L40S", 46068, False, 64, 512),
    "L40": GpuModel("NVIDIA-L40", 46068, False, 64, 512),
    "A10": GpuModel("NVIDIA-A10", 23028, False, 32, 256),
    "T4": GpuModel("Tesla-T4", 15360, False, 16, 128),
    "V100": GpuModel("Tesla-V100-SXM2-32GB", 32768, False, 64, 512),
}
CPU_NODE = ("cpu", 32, 128)  # name, CPUs, GiB
DRIVER = ("550", "127", "08")  # CUDA driver major, minor, rev
CUDA_RUNTIME = ("12", "4")

_GROUP = re.compile(r"^(?P<count>\d+)x(?P<kind>[A-Za-z0-9.-]+?)(?::(?P<gpus>\d+))?$")
_MIG_KIND = re.compile(r"^(?P<parent>[A-Za-z0-9-]+?)-MIG-(?P<profile>\d+g\.\d+gb)$", re.IGNORECASE)


@dataclass(frozen=True)
class NodeGroup:
    """`count` identical nodes of `gpu_type` with `gpus` GPUs each (gpu_type None: CPU only);
    with `mig` (a profile such as `3g.40gb`) the node's GPUs are partitioned and it offers
    `gpus` slices of that profile instead (`nvidia.com/mig-<profile>`)."""

    count: int
    gpu_type: str | None
    gpus: int
    mig: str | None = None


class NodeSpecError(GryviaError, ValueError):
    """Raised for a malformed `--nodes` value; the message names the bad part and the fix."""


def parse_node_spec(spec: str) -> list[NodeGroup]:
    """Parse `2xH100:8,2xA100-80G:8,2xL40:4,1xcpu` into node groups.

    Each comma-separated part is `<count>x<type>[:<gpus per node>]`; the type is one of
    GPU_MODELS (case-insensitive) or `cpu`. GPU groups need `:<gpus>` between 1 and 16.
    `<type>-MIG-<profile>:<slices>` (`1xH100-MIG-3g.40gb:2`) is a node whose GPUs are
    partitioned into that many MIG slices of the profile (1..56).
    Raises NodeSpecError naming the offending part.
    """
    groups: list[NodeGroup] = []
    known = ", ".join([*GPU_MODELS, "cpu"])
    for raw in spec.split(","):
        part = raw.strip()
        match = _GROUP.match(part)
        if not match:
            raise NodeSpecError(
                f"--nodes: cannot read {part!r}: expected <count>x<type>[:<gpus>], "
                "e.g. 2xH100:8 or 1xcpu"
            )
        count, kind, gpus = int(match["count"]), match["kind"], match["gpus"]
        if count < 1 or count > 1000:
            raise NodeSpecError(f"--nodes: {part!r}: node count must be 1..1000")
        if kind.lower() == "cpu":
            if gpus not in (None, "0"):
                raise NodeSpecError(f"--nodes: {part!r}: cpu nodes have no GPUs (drop ':{gpus}')")
            groups.append(NodeGroup(count, None, 0))
            continue
        mig = _MIG_KIND.match(kind)
        if mig:
            groups.append(_mig_group(part, count, mig["parent"], mig["profile"], gpus))
            continue
        gpu_type = next((t for t in GPU_MODELS if t.lower() == kind.lower()), None)
        if gpu_type is None:
            raise NodeSpecError(f"--nodes: {part!r}: unknown type {kind!r} (known: {known})")
        if gpus is None or not 1 <= int(gpus) <= 16:
            raise NodeSpecError(f"--nodes: {part!r}: give 1..16 GPUs per node, e.g. {kind}:8")
        groups.append(NodeGroup(count, gpu_type, int(gpus)))
    return groups


def _mig_group(part: str, count: int, parent: str, profile: str, slices: str | None) -> NodeGroup:
    """The node group of a `<type>-MIG-<profile>:<slices>` part; raises NodeSpecError."""
    gpu_type = next((t for t in GPU_MODELS if t.lower() == parent.lower()), None)
    mig = parse_profile(profile)
    if gpu_type is None or mig is None or mig.compute > DEFAULT_COMPUTE_SLICES:
        raise NodeSpecError(
            f"--nodes: {part!r}: expected <type>-MIG-<profile> with a known type and a profile "
            "of at most 7 compute slices, e.g. 1xH100-MIG-3g.40gb:2"
        )
    if slices is None or not 1 <= int(slices) <= 56:
        raise NodeSpecError(f"--nodes: {part!r}: give 1..56 MIG slices per node, e.g. :2")
    return NodeGroup(count, gpu_type, int(slices), mig.name)


def build_nodes(groups: list[NodeGroup], *, taken: set[str] | None = None) -> list[dict[str, Any]]:
    """Return the Node manifests for all groups; names are numbered per type from 0,
    skipping the names in `taken` (nodes that exist already)."""
    taken = set(taken or ())
    nodes = []
    for group in groups:
        index = 0
        for _ in range(group.count):
            while (node := build_node(group, index))["metadata"]["name"] in taken:
                index += 1
            taken.add(node["metadata"]["name"])
            nodes.append(node)
    return nodes


def build_node(group: NodeGroup, index: int) -> dict[str, Any]:
    """Return one Node manifest: labels, capacity and allocatable of a simulated node."""
    labels = {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"}
    if group.gpu_type is None:
        name, cpu, mem_gib = f"{CPU_NODE[0]}-{index}", CPU_NODE[1], CPU_NODE[2]
        gpu_capacity: dict[str, str] = {}
    else:
        model = GPU_MODELS[group.gpu_type]
        name = f"gpu-{group.gpu_type.lower()}-{index}"
        cpu, mem_gib = model.cpu, model.memory_gib
        gpu_capacity = {"nvidia.com/gpu": str(group.gpus)}
        physical = group.gpus
        mig = parse_profile(group.mig)
        if mig is not None:
            name = f"gpu-{group.gpu_type.lower()}-mig-{mig.name}-{index}"
            gpu_capacity = {mig.resource: str(group.gpus)}
            physical = -(-group.gpus // (DEFAULT_COMPUTE_SLICES // mig.compute))
            labels |= {"nvidia.com/mig.strategy": "mixed", "nvidia.com/mig.capable": "true"}
        labels |= {
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": model.product,
            "nvidia.com/gpu.count": str(physical),
            "nvidia.com/gpu.memory": str(model.memory_mib),
            "nvidia.com/gpu.family": "simulated",
            "nvidia.com/cuda.driver.major": DRIVER[0],
            "nvidia.com/cuda.driver.minor": DRIVER[1],
            "nvidia.com/cuda.driver.rev": DRIVER[2],
            "nvidia.com/cuda.runtime.major": CUDA_RUNTIME[0],
            "nvidia.com/cuda.runtime.minor": CUDA_RUNTIME[1],
        }
        if model.rdma:
            labels["feature.node.kubernetes.io/rdma.capable"] = "true"
    labels["kubernetes.io/hostname"] = name
    resources = {"cpu": str(cpu), "memory": f"{mem_gib}Gi", "pods": "110", **gpu_capacity}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {"kwok.x-k8s.io/node": "fake", ANNOTATION_SANDBOX_NODE: "true"},
        },
        "spec": {},
        "status": {"capacity": resources, "allocatable": dict(resources)},
    }
