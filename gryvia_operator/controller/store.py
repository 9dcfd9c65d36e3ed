"""What the watches know (kopf indexes) and what this operator just wrote (read-your-writes).

A quick second reconcile sees its own writes before the watches show them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

V = TypeVar("V")
K = TypeVar("K", bound=Hashable)


# kopf index ids (also the keyword names kopf passes the indexes by).
def slim_body(body: Any) -> dict[str, Any]:
    """An object's body without metadata.managedFields (what the indexes keep)."""
    out = {k: v for k, v in body.items() if k != "metadata"}
    out["metadata"] = {k: v for k, v in body["metadata"].items() if k != "managedFields"}
    return out


AIJOBS = "gryvia_aijobs"
JOB_FACTS = "gryvia_job_facts"
"""Every GryviaAIJob's (resourceVersion, `api.jobfacts.JobFacts`) by (namespace, name):
projected once per change by the job informer, not once per waiting job's reconcile (issue 42:
a burst of N waiting jobs cost N^2 projections, a third of the operator's CPU in a Kueue
burst)."""
CHILDREN = {
    "Job": "gryvia_child_jobs",
    "StatefulSet": "gryvia_child_statefulsets",
    "Service": "gryvia_child_services",
    "PersistentVolumeClaim": "gryvia_child_pvcs",
}
"""Index id of each child kind (key: (namespace, owner job name))."""
PODS_BY_NODE = "gryvia_pods_by_node"
PODS_BY_JOB = "gryvia_pods_by_job"
NODES = "gryvia_nodes"
GPUNODES = "gryvia_gpunodes"
QUOTAS = "gryvia_quotas"
TENANTS = "gryvia_tenants"
SKUS = "gryvia_skus"
USAGE = "gryvia_usage_records"
NAMESPACE_LABELS = "gryvia_namespace_labels"
BUDGETS = "gryvia_budgets"
"""GryviaBudgets with their status by ("", name) (the budget controller and enforcement)."""
RESERVATIONS = "gryvia_reservations"
"""GryviaReservations with their status (indexed only with --enable-reservations)."""
GATE_BUDGETS = "gryvia_gate_budgets"
"""GryviaBudgets the admission gate reads (indexed only while the gate is on)."""
PRIORITIES = "gryvia_priorities"
"""GryviaPriorities (indexed only with priorities enabled): name -> body."""
CHECKPOINT_GUARDS = "gryvia_checkpoint_guards"
"""GryviaCheckpointGuards by (namespace, name) (indexed only with --enable-checkpoint-guards)."""
WORKFLOWS = "gryvia_workflows"
"""GryviaWorkflows by (namespace, name) (indexed only with --enable-workflows)."""
AUTOTUNERS = "gryvia_autotuners"
"""GryviaAutoTuners by (namespace, name) (indexed only with --enable-autotuners)."""
MODEL_REGISTRIES = "gryvia_model_registries"
"""GryviaModelRegistries by (namespace, name) (indexed only with --enable-model-registry)."""
MODEL_SERVICES = "gryvia_model_services"
"""GryviaInferenceServices by (namespace, name), for the model registries' autoServe."""
INFERENCE_SERVICES = "gryvia_inference_services"
"""GryviaInferenceServices by (namespace, name) (indexed only with --enable-inference)."""
INFERENCE_DEPLOYMENTS = "gryvia_inference_deployments"
INFERENCE_HPAS = "gryvia_inference_hpas"
"""An inference service's Deployments and HPA by (namespace, service name)."""
WORKSPACES = "gryvia_workspaces"
"""GryviaWorkspaces by (namespace, name)."""
WORKSPACE_PODS = "gryvia_workspace_pods"
"""A workspace's pod by (namespace, workspace name)."""
IDLE_POLICIES = "gryvia_idle_policies"
"""GryviaIdlePolicies by (namespace, name)."""
CHARGEBACKS = "gryvia_chargebacks"
STORAGES = "gryvia_storages"
"""GryviaStorages by ("", name)."""
STORAGE_CLASSES = "gryvia_storage_classes"
"""StorageClasses by name -> provisioner (the webhook checks a job's spec.storage)."""
DATASETS = "gryvia_datasets"
"""GryviaChargebacks by ("", name)."""
SHARING_POLICIES = "gryvia_sharing_policies"
SHARING_NODES = "gryvia_sharing_nodes"
EXPORTER_PODS = "gryvia_exporter_pods"
"""dcgm-exporter pods (label app=nvidia-dcgm-exporter) by (namespace, name), for the GPU
sampler (`--enable-gpu-metrics`): a slim view, never a LIST per pass."""
"""GryviaGPUSharingPolicies by name, and nodes by name as GPU sharing reads them (indexed only
with --enable-gpu-sharing)."""
TENANCY_INDEX_IDS = (QUOTAS, TENANTS, SKUS, USAGE, NAMESPACE_LABELS)
INDEX_IDS = (
    AIJOBS,
    JOB_FACTS,
    *CHILDREN.values(),
    PODS_BY_NODE,
    PODS_BY_JOB,
    NODES,
    GPUNODES,
    *TENANCY_INDEX_IDS,
    BUDGETS,
    GATE_BUDGETS,
    RESERVATIONS,
    PRIORITIES,
    CHECKPOINT_GUARDS,
    WORKFLOWS,
    AUTOTUNERS,
    MODEL_REGISTRIES,
    MODEL_SERVICES,
    INFERENCE_SERVICES,
    INFERENCE_DEPLOYMENTS,
    INFERENCE_HPAS,
    WORKSPACES,
    WORKSPACE_PODS,
    IDLE_POLICIES,
    CHARGEBACKS,
    STORAGES,
    DATASETS,
    STORAGE_CLASSES,
    SHARING_POLICIES,
    SHARING_NODES,
    EXPORTER_PODS,
)


def _newer_or_same(seen: str, written: str) -> bool:
    """True when the watch has caught up with a write (same version, or a later numeric one)."""
    if seen == written:
        return True
    if seen.isdigit() and written.isdigit():
        return int(seen) > int(written)
    return False


@dataclass
class Recent(Generic[K, V]):
    """Values this operator wrote, per key, until the watch delivers that version or later.

    Entries also expire after `ttl` seconds in case the watch never shows that exact version
    (a relist can skip it).
    """

    ttl: float = 30.0
    clock: Callable[[], float] = time.monotonic
    _items: dict[K, tuple[str, V, float]] = field(default_factory=dict)

    def note(self, key: K, resource_version: str, value: V) -> None:
        """Remember `value` written at `resource_version`."""
        self._items[key] = (resource_version, value, self.clock() + self.ttl)

    def seen(self, key: K, resource_version: str) -> None:
        """The watch delivered `resource_version` of `key`: drop the entry once caught up."""
        entry = self._items.get(key)
        if entry is not None and _newer_or_same(resource_version, entry[0]):
            del self._items[key]

    def forget(self, key: K) -> None:
        """Drop the entry of `key` (the object was deleted)."""
        self._items.pop(key, None)

    def get(self, key: K) -> V | None:
        """The value written last, or None when the watch has caught up or it expired."""
        entry = self._items.get(key)
        if entry is None:
            return None
        if entry[2] < self.clock():
            del self._items[key]
            return None
        return entry[1]

    def __len__(self) -> int:
        return len(self._items)


class Indices:
    """The kopf indexes by id, set once at startup (empty mappings until then)."""

    def __init__(self) -> None:
        self._by_id: dict[str, Mapping[Any, Iterable[Any]]] = {i: {} for i in INDEX_IDS}

    def attach(self, found: Mapping[str, Any]) -> None:
        """Take the indexes kopf passes to a startup handler (keyword arguments by id)."""
        for index_id in INDEX_IDS:
            if index_id in found:
                self._by_id[index_id] = found[index_id]

    def values(self, index_id: str, key: Any) -> list[Any]:
        """Every value stored under `key` in index `index_id`."""
        index = self._by_id[index_id]
        return list(index[key]) if key in index else []

    def first(self, index_id: str, key: Any) -> Any:
        """The first value under `key`, or None."""
        values = self.values(index_id, key)
        return values[0] if values else None

    def keys(self, index_id: str) -> list[Any]:
        """Every key of index `index_id`."""
        return list(self._by_id[index_id])

    def all_values(self, index_id: str) -> list[Any]:
        """Every value of every key."""
        index = self._by_id[index_id]
        return [value for key in list(index) for value in index[key]]

    def size(self, index_id: str) -> int:
        """Number of keys in an index."""
        return len(self._by_id[index_id])
