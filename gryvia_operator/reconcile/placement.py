"""Advisory node selection for a GryviaAIJob: filter, score, pick, and explain a miss; and
where CPU-only jobs go (nodes without GPUs first, `cpu_only_affinity`)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.api.gputype import gpu_type_matches
from gryvia_operator.api.maintenance import maintenance_text
from gryvia_operator.api.mig import parent_type, parse_profile, slot_key
from gryvia_operator.api.names import (
    ANNOTATION_PLACEMENT_STRATEGY,
    LABEL_GPU,
    LABEL_GPU_MEMORY,
    LABEL_INTERCONNECT,
    LABEL_RDMA,
    LABEL_SRIOV,
)
from gryvia_operator.api.reservation import TAINT_RESERVED, reserved_problem
from gryvia_operator.api.taints import Taint, untolerated
from gryvia_operator.reconcile.names import Msg
from gryvia_operator.reconcile.registration import GFD_PRESENT
from gryvia_operator.reconcile.views import NodeView, PodView, _int


@dataclass(frozen=True)
class Requirements:
    """What one pod of a job needs from a node, and how many such nodes the job needs."""

    gpu_type: str
    """Required gryvia.io/gpu label value; "" means any type."""
    gpus: int
    """GPUs per pod."""
    network: str
    """"", standard, rdma or sriov."""
    node_selector: Mapping[str, str]
    nodes: int
    """Distinct nodes needed (one pod per node)."""
    pack: bool = False
    """Prefer the fewest free GPUs that fit (gryvia.io/placement-strategy: pack)."""
    shown_gpu_type: str = ""
    """gpuType as the user wrote it (for messages)."""
    tolerations: tuple[Mapping[str, Any], ...] = ()
    """The pods' tolerations (wire names), matched against node taints (`api.taints`)."""

    @classmethod
    def of(cls, job: GryviaAIJob) -> Requirements:
        """The requirements of a job's spec and annotations."""
        spec = job.spec
        annotations = job.metadata.annotations or {}
        return cls(
            gpu_type=spec.gpu_type_key,
            gpus=spec.gpus_per_pod(),
            network=spec.network or "",
            node_selector=dict(spec.node_selector or {}),
            nodes=spec.pod_count(),
            pack=annotations.get(ANNOTATION_PLACEMENT_STRATEGY) == "pack",
            shown_gpu_type=spec.gpu_type or "",
            tolerations=tuple(
                t.model_dump(mode="json", by_alias=True, exclude_none=True)
                for t in spec.tolerations or []
            ),
        )


@dataclass(frozen=True)
class NodeFit:
    """How one node measures up: free GPUs, score, and what it lacks (empty when it fits)."""

    node: str
    free: int
    total: int
    score: float
    problems: tuple[str, ...]
    type_ok: bool = True
    """The node carries the wanted GPU type (or any type is fine)."""

    @property
    def fits(self) -> bool:
        """True when the node passes every filter."""
        return not self.problems


@dataclass(frozen=True)
class Placement:
    """The outcome of node selection: chosen nodes, or an explanation of why none fit."""

    nodes: tuple[str, ...]
    gpus_per_pod: int
    evaluated: int
    message: str = ""

    @property
    def ok(self) -> bool:
        """True when enough nodes were chosen."""
        return not self.message


def gpu_usage(pods: Iterable[PodView]) -> dict[str, int]:
    """GPUs requested per node by bound, non-terminal pods; MIG slices per `node/profile`
    (`api.mig.slot_key`)."""
    used: dict[str, int] = {}
    for pod in pods:
        if not pod.node_name or pod.terminal:
            continue
        if pod.gpus > 0:
            used[pod.node_name] = used.get(pod.node_name, 0) + pod.gpus
        for profile, count in pod.slices.items():
            key = slot_key(pod.node_name, profile)
            used[key] = used.get(key, 0) + count
    return used


def _mig_supply(node: NodeView, gpu_type: str) -> tuple[int, bool, str]:
    """(slices of the wanted profile on the node, type ok, problem when not) for a MIG job:
    the node must advertise `nvidia.com/mig-<profile>` and, when the job names a parent
    GPU, carry that parent's gryvia.io/gpu label."""
    profile = parse_profile(gpu_type)
    total = node.mig_slices.get(profile.name, 0) if profile else 0
    parent, actual = parent_type(gpu_type), node.labels.get(LABEL_GPU, "")
    if parent and actual and parent_type(actual) != parent and actual != parent:
        return total, False, f"is {actual}, not {parent}"
    if not total and profile is not None:
        return 0, False, f"has no MIG {profile.name} slices ({profile.resource})"
    return total, True, ""


TAINT_PROBLEM = "has taint {taint} the job does not tolerate"
"""A node's problem for a taint the job's pods do not tolerate."""
NOT_READY_PROBLEM = "is not Ready"
CORDONED_PROBLEM = "is cordoned"
MAINTENANCE_PROBLEM = maintenance_text("").split(":", 1)[0]
"""How the problem of a node in maintenance starts (`in maintenance: <reason>`)."""


def out_of_service(problems: Iterable[str]) -> bool:
    """True when every one of a node's `problems` is one that keeps it from every pod like
    this job's for now (not Ready, cordoned or in maintenance, an untolerated taint), not a
    mismatch of the node itself (type, labels, size)."""
    prefix = TAINT_PROBLEM.split("{", 1)[0]
    found = list(problems)
    return bool(found) and all(
        p in (NOT_READY_PROBLEM, CORDONED_PROBLEM)
        or p.startswith(prefix)
        or p.startswith(MAINTENANCE_PROBLEM)
        for p in found
    )


def taints_in_the_way(node: NodeView, req: Requirements) -> list[Taint]:
    """The node's NoSchedule/NoExecute taints the job does not tolerate (a reservation's own
    taint is left to `reserved_problem`, which says whose it is)."""
    taints = [t for t in node.taints if t.key != TAINT_RESERVED]
    return untolerated(taints, req.tolerations)


def evaluate_node(node: NodeView, req: Requirements, used: int) -> NodeFit:
    """Check one node against the filters and score it (behaviour reference section 4).
    A MIG job (`gpuType` naming a profile) counts the node's slices of that profile, not its
    whole GPUs."""
    problems: list[str] = []
    mig = parse_profile(req.gpu_type) is not None
    slices, mig_ok, mig_problem = _mig_supply(node, req.gpu_type) if mig else (0, True, "")
    total = slices if mig else node.total_gpus
    free = max(total - used, 0)
    labels = node.labels
    if not node.ready:
        problems.append(NOT_READY_PROBLEM)
    if node.unschedulable:  # cordoned; on purpose, with a reason, when in maintenance
        maintenance = node.maintenance
        problems.append(CORDONED_PROBLEM if maintenance is None else maintenance_text(maintenance))
    actual_type = labels.get(LABEL_GPU, "")
    type_ok = gpu_type_matches(req.gpu_type, actual_type)
    if mig:
        type_ok = mig_ok
        problems += [mig_problem] if mig_problem else []
    elif not type_ok:
        problems.append(
            f"is {actual_type}, not {req.gpu_type}"
            if actual_type
            else f"has no {LABEL_GPU} label (wanted {req.gpu_type})"
        )
    if req.network == "rdma" and labels.get(LABEL_RDMA) != "true":
        problems.append(f"lacks {LABEL_RDMA}=true")
    if req.network == "sriov" and labels.get(LABEL_SRIOV) != "true":
        problems.append(f"lacks {LABEL_SRIOV}=true")
    for key, value in sorted(req.node_selector.items()):
        if labels.get(key) != value:
            problems.append(f"does not match nodeSelector {key}={value}")
    problems += [p] if (p := reserved_problem(labels, req.node_selector)) else []
    problems += [TAINT_PROBLEM.format(taint=t) for t in taints_in_the_way(node, req)]
    if free < req.gpus:
        kind = req.gpu_type or actual_type or "GPUs"
        problems.append(f"has {free}/{total} free {kind}")
    return NodeFit(node.name, free, total, _score(node, req, free), tuple(problems), type_ok)


def _score(node: NodeView, req: Requirements, free: int) -> float:
    labels = node.labels
    score = 0.0
    if req.gpu_type and gpu_type_matches(req.gpu_type, labels.get(LABEL_GPU)):
        score += 50
    if req.network == "rdma" and labels.get(LABEL_RDMA) == "true":
        score += 30
    if req.gpus > 1:
        interconnect = labels.get(LABEL_INTERCONNECT, "")
        score += 40 if interconnect == "NVSwitch" else 30 if interconnect == "NVLink" else 0
    score += 5 * free
    score += _int(labels.get(LABEL_GPU_MEMORY), 0) / 10
    score += node.allocatable_memory_gib / 100
    score += node.allocatable_cpu / 10
    score += 3 * node.allocatable_gpus
    return score


def select_nodes(
    job: GryviaAIJob | Requirements, nodes: Iterable[NodeView], pods: Iterable[PodView]
) -> Placement:
    """Choose the nodes for a job's pods; all-or-nothing.

    Filters (all must pass): Ready and not cordoned, gryvia.io/gpu serves gpuType
    (`api.gputype.gpu_type_matches`: the same type, or a variant of the family it names),
    gryvia.io/rdma / gryvia.io/sriov for those networks, every nodeSelector pair, every
    NoSchedule/NoExecute taint tolerated (`api.taints`), and enough free GPUs (total from
    gryvia.io/gpu-count or allocatable, minus the GPU requests of bound non-terminal pods).
    Ranks by score, most free GPUs first (pack: fewest). On a miss the message names the
    closest node and what it lacks.
    """
    req = job if isinstance(job, Requirements) else Requirements.of(job)
    node_list = list(nodes)
    used = gpu_usage(pods)
    fits = [evaluate_node(n, req, used.get(slot_key(n.name, req.gpu_type), 0)) for n in node_list]
    good = [f for f in fits if f.fits]
    if req.pack:
        good.sort(key=lambda f: (f.free, -f.score, f.node))
    else:
        good.sort(key=lambda f: (-f.score, f.node))
    if len(good) >= req.nodes:
        chosen = tuple(f.node for f in good[: req.nodes])
        return Placement(chosen, req.gpus, len(node_list))
    if not good:
        message = Msg.NO_NODES.format(
            gpu_type=req.shown_gpu_type,
            gpus=req.gpus,
            network=req.network,
            evaluated=len(node_list),
        )
    else:
        message = Msg.NOT_ENOUGH_NODES.format(need=req.nodes, found=len(good))
    best = closest_miss(fits)
    if best is not None:
        message += "; " + Msg.BEST_NODE.format(node=best.node, problems=", ".join(best.problems))
    return Placement((), req.gpus, len(node_list), message)


def closest_miss(fits: Iterable[NodeFit]) -> NodeFit | None:
    """The non-fitting node with the fewest problems (then the right GPU type, then most free
    GPUs, then name)."""
    misses = [f for f in fits if not f.fits]
    if not misses:
        return None
    return min(misses, key=lambda f: (len(f.problems), not f.type_ok, -f.free, f.node))


CPU_NODE_WEIGHT = 100
"""Weight of the CPU-node preference of CPU-only pods (the highest the scheduler takes)."""


def cpu_node_preference() -> dict[str, Any]:
    """The preferred node-affinity term of CPU-only pods: nodes with neither the
    gryvia.io/gpu label nor NVIDIA GPU feature discovery's nvidia.com/gpu.present label."""
    return {
        "weight": CPU_NODE_WEIGHT,
        "preference": {
            "matchExpressions": [
                {"key": LABEL_GPU, "operator": "DoesNotExist"},
                {"key": GFD_PRESENT, "operator": "DoesNotExist"},
            ]
        },
    }


def cpu_only_affinity(affinity: Mapping[str, Any] | None) -> dict[str, Any]:
    """The pod affinity of a CPU-only job (`gpus: 0`): the job's own `spec.affinity` with
    `cpu_node_preference` appended to its preferred node-affinity terms.

    A preference, not a requirement: a CPU-only job still runs on a GPU node when no CPU node
    has room, but the scheduler puts it on a node without GPUs whenever one fits, so it does
    not take CPU and memory from GPU jobs. The job's required terms are kept as they are.
    """
    out = copy.deepcopy(dict(affinity or {}))
    node = out.setdefault("nodeAffinity", {})
    terms = node.setdefault("preferredDuringSchedulingIgnoredDuringExecution", [])
    if cpu_node_preference() not in terms:
        terms.append(cpu_node_preference())
    return out
