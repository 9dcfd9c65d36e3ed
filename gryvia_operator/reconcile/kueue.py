"""Kueue integration, pure: queue choice, Job labels, WorkloadPriorityClasses, a tenant's
ResourceFlavors, ClusterQueue and LocalQueue, and a GryviaAIJob's view of its Workload.

Rules from behaviour.md section 6 "Kueue integration" (the original ships it opt-in), with a
quota per GPU type (`GryviaQuota.spec.gpuQuota.perType`, issue 19). Kueue objects are
`kueue.x-k8s.io/v1beta2` (Kueue v0.17). No I/O: the handlers read and apply.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.gputype import gpu_family
from gryvia_operator.api.names import (
    ANNOTATION_QUEUE_NAME,
    ANNOTATION_QUOTA_SOURCE,
    LABEL_GPU,
    LABEL_GPU_FAMILY,
    LABEL_TENANT,
    TENANT_NAMESPACE_PREFIX,
)

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_API = f"{KUEUE_GROUP}/v1beta2"
LABEL_QUEUE_NAME = "kueue.x-k8s.io/queue-name"
LABEL_PRIORITY_CLASS = "kueue.x-k8s.io/priority-class"
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY = "gryvia-operator"
COHORT = "gryvia"
DEFAULT_QUEUE = "gryvia"
DEFAULT_FLAVOR = "gryvia-default"
GPU_RESOURCE = "nvidia.com/gpu"
UNLIMITED_GPUS = 1_000_000
"""Nominal GPU quota of a tenant with no limit (the original's value)."""
UNLIMITED_CPU = "100000"
UNLIMITED_MEMORY = "1000Ti"
"""CPU and memory are covered (a resource no group covers makes a workload inadmissible) but
not limited: Gryvia queues on GPUs only (behaviour.md section 6)."""


@dataclass(frozen=True)
class KueueSettings:
    """The operator's Kueue flags: `enabled` (aiOperator.kueue.enabled), the tenant's default
    LocalQueue name, and strict mode (every tenant job goes through the default queue)."""

    enabled: bool = False
    default_queue: str = DEFAULT_QUEUE
    strict: bool = False


def resolve_queue(
    settings: KueueSettings,
    *,
    spec_queue: str | None,
    annotations: Mapping[str, str],
    labels: Mapping[str, str],
    namespace: str,
    default_queue_exists: bool,
) -> str | None:
    """The LocalQueue a job goes to, or None (Gryvia's own gate admits it).

    First wins (behaviour.md section 6): `spec.queueName`, annotation `gryvia.io/queue-name`,
    label `kueue.x-k8s.io/queue-name`, then in a `tenant-*` namespace the default queue if that
    LocalQueue exists (strict mode: always). None whenever the integration is off.
    """
    if not settings.enabled:
        return None
    for choice in (
        spec_queue,
        annotations.get(ANNOTATION_QUEUE_NAME),
        labels.get(LABEL_QUEUE_NAME),
    ):
        if choice:
            return choice
    if namespace.startswith(TENANT_NAMESPACE_PREFIX) and (default_queue_exists or settings.strict):
        return settings.default_queue
    return None


def priority_class_name(priority: int | None) -> str | None:
    """`gryvia-priority-<n>` with n = priority // 10 * 10 (a band of ten), None for 0-9 or
    unset (behaviour.md section 6)."""
    if not priority or priority < 10:
        return None
    return f"gryvia-priority-{priority // 10 * 10}"


def build_workload_priority_class(name: str) -> dict[str, Any]:
    """The WorkloadPriorityClass `gryvia-priority-<n>` with value n. Raises ValueError for a
    name not made by `priority_class_name`."""
    match = re.fullmatch(r"gryvia-priority-(\d+)", name)
    if not match:
        raise ValueError(f"not a Gryvia priority class name: {name!r}")
    value = int(match.group(1))
    return {
        "apiVersion": KUEUE_API,
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": name, "labels": {LABEL_MANAGED_BY: MANAGED_BY}},
        "value": value,
        "description": f"Gryvia priority {value}-{value + 9}",
    }


def job_labels(queue: str, priority: int | None) -> dict[str, str]:
    """Labels of a batch Job Kueue manages: the queue, and the priority class when the job's
    priority has one. The Job is created suspended; Kueue unsuspends it on admission."""
    labels = {LABEL_QUEUE_NAME: queue}
    priority_class = priority_class_name(priority)
    if priority_class:
        labels[LABEL_PRIORITY_CLASS] = priority_class
    return labels


def flavor_name(gpu_type: str) -> str:
    """ResourceFlavor of a GPU type: `gryvia-` + the type lowercased, other characters as '-'
    (e.g. `A100-80G` -> `gryvia-a100-80g`)."""
    slug = re.sub(r"[^a-z0-9]+", "-", gpu_type.lower()).strip("-")
    return f"gryvia-{slug}"[:63].rstrip("-")


def build_resource_flavor(gpu_type: str | None) -> dict[str, Any]:
    """The flavor of one GPU type (node labels `gryvia.io/gpu=<type>` and
    `gryvia.io/gpu-family=<family>`, so that a job naming only the family is admitted to the
    flavors of its variants and no other), or with None the default flavor without node
    labels."""
    spec: dict[str, Any] = {}
    name = DEFAULT_FLAVOR
    if gpu_type is not None:
        name = flavor_name(gpu_type)
        spec["nodeLabels"] = {LABEL_GPU: gpu_type, LABEL_GPU_FAMILY: gpu_family(gpu_type)}
    return {
        "apiVersion": KUEUE_API,
        "kind": "ResourceFlavor",
        "metadata": {"name": name, "labels": {LABEL_MANAGED_BY: MANAGED_BY}},
        "spec": spec,
    }


@dataclass(frozen=True)
class TenantQueuePlan:
    """What a tenant's ClusterQueue admits: a general GPU limit, limits per GPU type, where the
    general limit came from (`tenant`, `quota` or `unlimited`), and optional borrowing and
    lending limits in GPUs per flavor (None: Kueue's default, unlimited)."""

    general_gpus: int
    source: str
    per_type: Mapping[str, int]
    borrowing_limit: int | None = None
    lending_limit: int | None = None


def plan_tenant_queue(
    concurrent_gpus: int | None,
    quota_max_gpus: int | None,
    quota_per_type: Mapping[str, int] | None,
    *,
    borrowing_limit: int | None = None,
    lending_limit: int | None = None,
) -> TenantQueuePlan:
    """The plan of a tenant's ClusterQueue: nominal = the tenant's concurrentGPUs, else the
    maxGPUs of a GryviaQuota covering its namespace, else unlimited (0 counts as unset,
    behaviour.md section 6); per-type limits from that quota's `gpuQuota.perType`."""
    if concurrent_gpus:
        general, source = concurrent_gpus, "tenant"
    elif quota_max_gpus:
        general, source = quota_max_gpus, "quota"
    else:
        general, source = UNLIMITED_GPUS, "unlimited"
    return TenantQueuePlan(
        general, source, dict(quota_per_type or {}), borrowing_limit, lending_limit
    )


def tenant_flavors(plan: TenantQueuePlan, gpu_types: Iterable[str]) -> list[tuple[str | None, int]]:
    """(GPU type or None for the default flavor, nominal GPUs) in Kueue's trial order.

    Without per-type limits: the default flavor alone with the general limit. With them: a
    flavor per GPU type (the per-type ones and every type in `gpu_types`, those without a
    per-type limit getting the general one), then the default flavor with 0 GPUs for CPU-only
    jobs: a default flavor with GPUs would take the overflow of a type's limit, since a flavor
    without node labels fits every pod.
    """
    if not plan.per_type:
        return [(None, plan.general_gpus)]
    types = sorted(set(plan.per_type) | set(gpu_types), key=str.lower)
    return [(t, plan.per_type.get(t, plan.general_gpus)) for t in types] + [(None, 0)]


def build_cluster_queue(
    tenant: str, plan: TenantQueuePlan, gpu_types: Iterable[str]
) -> dict[str, Any]:
    """ClusterQueue `gryvia-<tenant>`: cohort `gryvia`, only namespace `tenant-<tenant>`,
    BestEffortFIFO, preemption LowerPriority within the queue, reclaim Any within the cohort,
    borrow-within-cohort LowerPriority (behaviour.md section 6); GPU nominal quota per flavor
    from `plan`, CPU and memory covered but unlimited."""
    flavors = []
    for gpu_type, gpus in tenant_flavors(plan, gpu_types):
        gpu: dict[str, Any] = {"name": GPU_RESOURCE, "nominalQuota": gpus}
        if plan.borrowing_limit is not None:
            gpu["borrowingLimit"] = plan.borrowing_limit
        if plan.lending_limit is not None:
            gpu["lendingLimit"] = min(plan.lending_limit, gpus)
        flavors.append(
            {
                "name": DEFAULT_FLAVOR if gpu_type is None else flavor_name(gpu_type),
                "resources": [
                    gpu,
                    {"name": "cpu", "nominalQuota": UNLIMITED_CPU},
                    {"name": "memory", "nominalQuota": UNLIMITED_MEMORY},
                ],
            }
        )
    return {
        "apiVersion": KUEUE_API,
        "kind": "ClusterQueue",
        "metadata": {
            "name": f"gryvia-{tenant}",
            "labels": {LABEL_MANAGED_BY: MANAGED_BY, LABEL_TENANT: tenant},
            "annotations": {ANNOTATION_QUOTA_SOURCE: plan.source},
        },
        "spec": {
            "cohortName": COHORT,
            "namespaceSelector": {
                "matchLabels": {"kubernetes.io/metadata.name": tenant_namespace(tenant)}
            },
            "queueingStrategy": "BestEffortFIFO",
            "preemption": {
                "withinClusterQueue": "LowerPriority",
                "reclaimWithinCohort": "Any",
                "borrowWithinCohort": {"policy": "LowerPriority"},
            },
            "resourceGroups": [
                {"coveredResources": [GPU_RESOURCE, "cpu", "memory"], "flavors": flavors}
            ],
        },
    }


def build_local_queue(tenant: str, name: str = DEFAULT_QUEUE) -> dict[str, Any]:
    """LocalQueue `tenant-<tenant>/<name>` pointing at ClusterQueue `gryvia-<tenant>`."""
    return {
        "apiVersion": KUEUE_API,
        "kind": "LocalQueue",
        "metadata": {
            "name": name,
            "namespace": tenant_namespace(tenant),
            "labels": {LABEL_MANAGED_BY: MANAGED_BY, LABEL_TENANT: tenant},
        },
        "spec": {"clusterQueue": f"gryvia-{tenant}"},
    }


def build_tenant_objects(
    tenant: str, plan: TenantQueuePlan, gpu_types: Iterable[str]
) -> list[dict[str, Any]]:
    """Everything Kueue needs for one tenant, in apply order: the flavors (cluster-scoped,
    shared by tenants), the ClusterQueue, the LocalQueue."""
    types = list(gpu_types)
    flavors = [build_resource_flavor(t) for t, _ in tenant_flavors(plan, types)]
    return [*flavors, build_cluster_queue(tenant, plan, types), build_local_queue(tenant)]
