"""A tenant's Kueue queues (`--enable-kueue`, docs/kueue.md): its ResourceFlavors, ClusterQueue
and LocalQueue, built by `reconcile.kueue` and applied here; the tenant handler keeps them in
step with the tenant."""

from __future__ import annotations

from typing import Any

from gryvia_operator.api import GryviaQuota, GryviaTenant
from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.names import LABEL_GPU, LABEL_TENANT
from gryvia_operator.controller import policies
from gryvia_operator.controller.kubeapi import KubeApi, create_or_patch
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import NODES
from gryvia_operator.reconcile.kueue import (
    LABEL_MANAGED_BY,
    MANAGED_BY,
    build_tenant_objects,
    plan_tenant_queue,
)


def _gpu_types(rt: Runtime) -> list[str]:
    """The GPU types of the cluster's nodes (label gryvia.io/gpu)."""
    return sorted(
        {n.labels[LABEL_GPU] for n in rt.indices.all_values(NODES) if n.labels.get(LABEL_GPU)}
    )


def _quota_for(rt: Runtime, namespace: str) -> GryviaQuota | None:
    """The first GryviaQuota (by name) whose namespaces include `namespace`, from the quota
    index (never a LIST)."""
    covering = [q for q in policies.quotas(rt) if namespace in q.spec.namespaces]
    return min(covering, key=lambda q: q.name, default=None)


def tenant_queue_objects(rt: Runtime, tenant: GryviaTenant) -> list[dict[str, Any]]:
    """The tenant's flavors, ClusterQueue and LocalQueue as they should be, from the indexes
    (its quota, the nodes' GPU types)."""
    quota = _quota_for(rt, tenant_namespace(tenant.name))
    gpu_quota = quota.spec.gpu_quota if quota else None
    limits = tenant.spec.quotas
    plan = plan_tenant_queue(
        limits.concurrent_gpus if limits else None,
        gpu_quota.max_gpus if gpu_quota else None,
        gpu_quota.per_type if gpu_quota else None,
    )
    return build_tenant_objects(tenant.name, plan, _gpu_types(rt))


async def ensure_tenant_queues(
    rt: Runtime, tenant: GryviaTenant, applied: dict[str, list[dict[str, Any]]] | None = None
) -> bool:
    """Apply the tenant's flavors, ClusterQueue and LocalQueue (docs/kueue.md); return
    whether anything was sent. With `applied` (what this process applied last, by tenant),
    nothing is sent when the objects are the same as last time: a periodic refresh then costs
    no API call. Raises KubeError (e.g. Kueue's CRDs are not installed: 404)."""
    bodies = tenant_queue_objects(rt, tenant)
    if applied is not None and applied.get(tenant.name) == bodies:
        return False
    for body in bodies:
        await create_or_patch(rt.api, body)
    if applied is not None:
        applied[tenant.name] = bodies
    return True


async def remove_tenant_queues(api: KubeApi, tenant: str) -> None:
    """Delete the tenant's ClusterQueue and LocalQueue (flavors are shared and stay)."""
    selector = f"{LABEL_TENANT}={tenant},{LABEL_MANAGED_BY}={MANAGED_BY}"
    for local in await api.list("LocalQueue", tenant_namespace(tenant), label_selector=selector):
        await api.delete("LocalQueue", local["metadata"]["name"], tenant_namespace(tenant))
    for cluster in await api.list("ClusterQueue", label_selector=selector):
        await api.delete("ClusterQueue", cluster["metadata"]["name"])
