"""Slim, immutable projections of the Kubernetes objects the operator observes.

The watches keep these instead of whole bodies (memory), and every pure function reads them.
Each `from_*` takes a raw object as the API server returns it and never raises for missing
fields.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gryvia_operator.api.maintenance import active_reason
from gryvia_operator.api.mig import parent_type, parse_profile, slice_type, slices_in
from gryvia_operator.api.names import GPU_RESOURCE, LABEL_GPU, LABEL_GPU_COUNT, LABEL_JOB
from gryvia_operator.api.quantity import parse_quantity
from gryvia_operator.api.taints import Taint, hard_taints
from gryvia_operator.reconcile.savedlogs import pod_replica

AIJOB_KIND = "GryviaAIJob"
TERMINAL_POD_PHASES = frozenset({"Succeeded", "Failed"})


def _map(obj: Any, *path: str) -> Mapping[str, Any]:
    for key in path:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj if isinstance(obj, Mapping) else {}


def _int(value: Any, default: int = 0) -> int:
    """An integer from an int, a numeric string or a quantity; `default` when unreadable."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    try:
        return int(parse_quantity(str(value)))
    except (ValueError, ArithmeticError):
        return default


def _decimal(value: Any) -> Decimal:
    try:
        return parse_quantity(value) if value is not None else Decimal(0)
    except (ValueError, ArithmeticError):
        return Decimal(0)


@dataclass(frozen=True)
class NodeView:
    """A Node as placement and registration see it."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    ready: bool = True
    unschedulable: bool = False
    allocatable_gpus: int = 0
    allocatable_cpu: float = 0.0
    allocatable_memory_gib: float = 0.0
    uid: str = ""
    mig_slices: Mapping[str, int] = field(default_factory=dict)
    """Allocatable MIG slices per profile (`{"3g.40gb": 2}` from `nvidia.com/mig-3g.40gb`)."""
    taints: tuple[Taint, ...] = ()
    """The NoSchedule/NoExecute taints (`api.taints.hard_taints`)."""
    maintenance: str | None = None
    """The reason of a node in maintenance (cordoned with gryvia.io/maintenance; "" without a
    reason: `api.maintenance.active_reason`), None when it is not in maintenance."""

    @classmethod
    def from_node(cls, obj: Mapping[str, Any]) -> NodeView:
        """Project a Node object."""
        meta, status = _map(obj, "metadata"), _map(obj, "status")
        allocatable = _map(status, "allocatable")
        conditions = status.get("conditions") or []
        ready = any(
            isinstance(c, Mapping) and c.get("type") == "Ready" and c.get("status") == "True"
            for c in conditions
        )
        return cls(
            name=str(meta.get("name", "")),
            labels=dict(_map(meta, "labels")),
            ready=ready,
            unschedulable=bool(_map(obj, "spec").get("unschedulable", False)),
            allocatable_gpus=_int(allocatable.get(GPU_RESOURCE)),
            allocatable_cpu=float(_decimal(allocatable.get("cpu"))),
            allocatable_memory_gib=float(_decimal(allocatable.get("memory")) / 2**30),
            uid=str(meta.get("uid", "")),
            mig_slices=slices_in(allocatable),
            taints=hard_taints(obj),
            maintenance=active_reason(obj),
        )

    @property
    def total_gpus(self) -> int:
        """GPUs on the node: label gryvia.io/gpu-count when readable and > 0, else allocatable;
        on a MIG node (slices advertised) only the allocatable whole GPUs."""
        if self.mig_slices:
            return self.allocatable_gpus
        labelled = _int(self.labels.get(LABEL_GPU_COUNT), 0)
        return labelled if labelled > 0 else self.allocatable_gpus


def _container_times(statuses: Any) -> dict[str, Any]:
    """started_at / finished_at / running / exit_code of the app containers' states (RFC 3339
    strings compare in time order: Kubernetes writes them in UTC with whole seconds); the exit
    code is the first container's current terminated state's."""
    starts, ends, running = [], [], False
    code = None
    for ctr in statuses if isinstance(statuses, list) else []:
        running |= bool(_map(ctr, "state", "running"))
        done = _map(ctr, "state", "terminated")
        if code is None and isinstance(done.get("exitCode"), int):
            code = int(done["exitCode"])
        for state in (_map(ctr, "state"), _map(ctr, "lastState")):
            run, ended = _map(state, "running"), _map(state, "terminated")
            starts += [str(t) for t in (run.get("startedAt"), ended.get("startedAt")) if t]
            ends += [str(ended["finishedAt"])] if ended.get("finishedAt") else []
    return {
        "started_at": min(starts, default=""),
        "finished_at": max(ends, default=""),
        "running": running,
        "exit_code": code,
    }


VOLUME_WORDS = ("persistentvolume", "persistent volume", "free storage", "volumebinding")
"""Words of kube-scheduler's VolumeBinding messages (lower case): "pod has unbound immediate
PersistentVolumeClaims", "didn't find available persistent volumes to bind", "did not have
enough free storage", "running PreBind plugin "VolumeBinding"..."."""
SELECTED_NODE = "volume.kubernetes.io/selected-node"
"""The annotation the scheduler sets on a WaitForFirstConsumer claim once it picked a node:
from then on the claim's provisioner alone keeps the pod waiting."""


@dataclass(frozen=True)
class PodView:
    """A Pod as GPU accounting and StatefulSet status see it."""

    namespace: str
    name: str
    node_name: str = ""
    phase: str = "Pending"
    gpus: int = 0
    job: str = ""
    ready: bool = False
    deleting: bool = False
    started_at: str = ""
    """Earliest start (RFC 3339) of any app container, from its current or last state; ""
    while none has run (init containers and image pulls do not count)."""
    finished_at: str = ""
    """Latest `finishedAt` of any app container's current or last state; "" when none ended."""
    running: bool = False
    """True while an app container's current state is running."""
    slices: Mapping[str, int] = field(default_factory=dict)
    """MIG slices requested per profile (`nvidia.com/mig-*` requests, else limits)."""
    unschedulable: bool = False
    """The scheduler found no node for it (condition PodScheduled=False, Unschedulable)."""
    volume_wait: bool = False
    """The scheduler's PodScheduled=False message blames its volumes (an unbound claim, no
    persistent volume to bind, not enough free storage: kube-scheduler's VolumeBinding)."""
    priority: int = 0
    """`spec.priority` (from its PriorityClass): the scheduler may preempt it for higher ones."""
    uid: str = ""
    preempted_at: str = ""
    """When the kube-scheduler preempted it (lastTransitionTime of condition DisruptionTarget
    with reason PreemptionByScheduler); "" when it did not."""
    exit_code: int | None = None
    """The exit code of its first app container that terminated (current state); None while
    none has (sacct's ExitCode, `reconcile.jobrecords`)."""
    replica: int | None = None
    """Its replica number (completion index or StatefulSet ordinal), None when it has none."""

    @classmethod
    def from_pod(cls, obj: Mapping[str, Any]) -> PodView:
        """Project a Pod; `gpus` sums the containers' nvidia.com/gpu requests (else limits);
        the container times come from `status.containerStatuses` (not init containers)."""
        meta, spec, status = _map(obj, "metadata"), _map(obj, "spec"), _map(obj, "status")
        gpus = 0
        slices: dict[str, int] = {}
        for container in spec.get("containers") or []:
            resources = _map(container, "resources")
            asked = slices_in(_map(resources, "requests")) or slices_in(_map(resources, "limits"))
            for profile, count in asked.items():
                slices[profile] = slices.get(profile, 0) + count
            value = _map(resources, "requests").get(GPU_RESOURCE)
            if value is None:
                value = _map(resources, "limits").get(GPU_RESOURCE)
            gpus += _int(value)
        ready = any(
            isinstance(c, Mapping) and c.get("type") == "Ready" and c.get("status") == "True"
            for c in status.get("conditions") or []
        )
        return cls(
            namespace=str(meta.get("namespace", "")),
            name=str(meta.get("name", "")),
            node_name=str(spec.get("nodeName") or ""),
            phase=str(status.get("phase") or "Pending"),
            gpus=gpus,
            job=str(_map(meta, "labels").get(LABEL_JOB, "")),
            ready=ready,
            deleting=meta.get("deletionTimestamp") is not None,
            slices=slices,
            unschedulable=any(
                isinstance(c, Mapping)
                and c.get("type") == "PodScheduled"
                and c.get("status") == "False"
                and c.get("reason") == "Unschedulable"
                for c in status.get("conditions") or []
            ),
            volume_wait=any(
                isinstance(c, Mapping)
                and c.get("type") == "PodScheduled"
                and c.get("status") == "False"
                and any(w in str(c.get("message") or "").lower() for w in VOLUME_WORDS)
                for c in status.get("conditions") or []
            ),
            priority=_int(spec.get("priority")),
            uid=str(meta.get("uid") or ""),
            preempted_at=next(
                (
                    str(c.get("lastTransitionTime") or "")
                    for c in status.get("conditions") or []
                    if isinstance(c, Mapping)
                    and c.get("type") == "DisruptionTarget"
                    and c.get("status") == "True"
                    and c.get("reason") == "PreemptionByScheduler"
                ),
                "",
            ),
            replica=pod_replica(obj),
            **_container_times(status.get("containerStatuses")),
        )

    @property
    def terminal(self) -> bool:
        """True once the pod has Succeeded or Failed."""
        return self.phase in TERMINAL_POD_PHASES

    @property
    def holds_gpus(self) -> bool:
        """True when the pod is bound to a node, not terminal and requests GPUs."""
        return bool(self.node_name) and not self.terminal and self.gpus > 0


@dataclass(frozen=True)
class ChildView:
    """A child of a GryviaAIJob (batch Job, StatefulSet, Service or PVC).

    `spec` and `status` keep only the fields the operator compares or summarises (a PVC's
    status also `selectedNode`, from its SELECTED_NODE annotation).
    """

    kind: str
    namespace: str
    name: str
    uid: str = ""
    resource_version: str = ""
    owner_name: str = ""
    owner_uid: str = ""
    deleting: bool = False
    spec: Mapping[str, Any] = field(default_factory=dict)
    status: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_object(cls, obj: Mapping[str, Any], kind: str | None = None) -> ChildView:
        """Project a child object; the owner is its controller reference to a GryviaAIJob.

        `kind` overrides the object's own `kind` (list items may lack it).
        """
        meta = _map(obj, "metadata")
        kind = kind or str(obj.get("kind", ""))
        owner_name, owner_uid = "", ""
        for ref in meta.get("ownerReferences") or []:
            if isinstance(ref, Mapping) and ref.get("kind") == AIJOB_KIND and ref.get("controller"):
                owner_name, owner_uid = str(ref.get("name", "")), str(ref.get("uid", ""))
        return cls(
            kind=kind,
            namespace=str(meta.get("namespace", "")),
            name=str(meta.get("name", "")),
            uid=str(meta.get("uid", "")),
            resource_version=str(meta.get("resourceVersion", "")),
            owner_name=owner_name,
            owner_uid=owner_uid,
            deleting=meta.get("deletionTimestamp") is not None,
            spec=_slim_spec(kind, _map(obj, "spec")),
            status=_slim_status(kind, _map(obj, "status"), _map(meta, "annotations")),
        )


_JOB_STATUS_KEYS = (
    "active",
    "ready",
    "succeeded",
    "failed",
    "startTime",
    "completionTime",
    "completedIndexes",
    "conditions",
)


def _slim_spec(kind: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    if kind == "Job":
        keys: tuple[str, ...] = ("suspend", "completions", "parallelism")
    elif kind == "StatefulSet":
        keys = ("replicas", "template")
    elif kind == "Service":
        keys = ("ports", "selector", "publishNotReadyAddresses", "clusterIP")
    elif kind == "PersistentVolumeClaim":
        keys = ("storageClassName",)
    else:
        keys = ()
    return {k: spec[k] for k in keys if k in spec}


def _slim_status(
    kind: str, status: Mapping[str, Any], annotations: Mapping[str, Any]
) -> dict[str, Any]:
    if kind == "Job":
        out = {k: status[k] for k in _JOB_STATUS_KEYS if k in status}
        if "conditions" in out:  # keep what summaries read, drop probe times
            out["conditions"] = [
                {k: c.get(k) for k in ("type", "status", "reason", "message", "lastTransitionTime")}
                for c in out["conditions"]
                if isinstance(c, Mapping)
            ]
        return out
    if kind == "StatefulSet":
        return {k: status[k] for k in ("replicas", "readyReplicas") if k in status}
    if kind == "PersistentVolumeClaim":  # whether it bound, or waits for its provisioner
        out = {k: status[k] for k in ("phase",) if k in status}
        if annotations.get(SELECTED_NODE):
            out["selectedNode"] = str(annotations[SELECTED_NODE])
        return out
    return {}


def node_inventory(nodes: Iterable[NodeView]) -> list[tuple[str, int]]:
    """(gpuType, GPUs) of every node labelled gryvia.io/gpu; GPUs = max(allocatable, label);
    plus (`<type>-MIG-<PROFILE>`, slices) per MIG profile the node advertises."""
    out = []
    for node in nodes:
        gpu_type = node.labels.get(LABEL_GPU)
        if gpu_type:
            out.append((gpu_type, max(node.allocatable_gpus, node.total_gpus)))
        for name, count in sorted(node.mig_slices.items()):
            profile = parse_profile(name)
            if profile is not None:
                out.append((slice_type(parent_type(gpu_type) or gpu_type or "", profile), count))
    return out
