"""Tenants: the namespace and policy objects a GryviaTenant owns, and the tenant's status.

Pure builders. Names and labels: namespace `tenant-<name>`, ResourceQuota `<name>-quota` with
`requests.nvidia.com/gpu` (and the `limits.` form, since extended resources are requested
through limits) from `quotas.concurrentGPUs`, LimitRange `<name>-limits`, NetworkPolicy
`<name>-isolation`, and RoleBindings `gryvia-tenant-<role>` to the chart's ClusterRoles
`gryvia-tenant-viewer|member|admin`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gryvia_operator.api import GryviaTenant
from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.controlled import owner_reference
from gryvia_operator.api.names import (
    LABEL_DATA_CLASSIFICATION,
    LABEL_DISPLAY_NAME,
    LABEL_TENANT,
    LABEL_TENANT_MANAGED_BY,
)

MANAGED_BY = "gryvia-tenant-controller"
ROLES = ("viewer", "member", "admin")
WARNING_PERCENT = 80.0


def _label_value(text: str) -> str:
    """Return `text` made a valid label value (63 chars, alphanumerics at both ends)."""
    value = re.sub(r"[^A-Za-z0-9._-]+", "-", text)[:63]
    return value.strip("._-")


def build_namespace(tenant: GryviaTenant) -> dict[str, Any]:
    """Return the tenant's Namespace."""
    labels = {LABEL_TENANT: tenant.name, LABEL_TENANT_MANAGED_BY: MANAGED_BY}
    if tenant.spec.display_name:
        labels[LABEL_DISPLAY_NAME] = _label_value(tenant.spec.display_name)
    if tenant.spec.governance and tenant.spec.governance.data_classification:
        labels[LABEL_DATA_CLASSIFICATION] = _label_value(tenant.spec.governance.data_classification)
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": tenant_namespace(tenant.name), "labels": labels},
    }


def _meta(tenant: GryviaTenant, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": tenant_namespace(tenant.name),
        "labels": {LABEL_TENANT: tenant.name, LABEL_TENANT_MANAGED_BY: MANAGED_BY},
    }


def build_resource_quota(tenant: GryviaTenant) -> dict[str, Any] | None:
    """Return the ResourceQuota capping GPUs at `quotas.concurrentGPUs`, or None if unset."""
    quotas = tenant.spec.quotas
    if not quotas or not quotas.concurrent_gpus:
        return None
    gpus = str(quotas.concurrent_gpus)
    hard = {"requests.nvidia.com/gpu": gpus}
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": _meta(tenant, f"{tenant.name}-quota"),
        "spec": {"hard": hard},
    }


def build_limit_range(tenant: GryviaTenant) -> dict[str, Any]:
    """Return the LimitRange giving containers default requests (1 CPU, 2 GiB).

    No default limits: a default limit below a container's explicit request makes every pod
    of that job invalid (an imported sbatch job asking 8 CPUs under a 4-CPU default limit
    would never start).
    """
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": _meta(tenant, f"{tenant.name}-limits"),
        "spec": {
            "limits": [
                {
                    "type": "Container",
                    "defaultRequest": {"cpu": "1", "memory": "2Gi"},
                }
            ]
        },
    }


def build_network_policy(tenant: GryviaTenant) -> dict[str, Any] | None:
    """Return the NetworkPolicy isolating the namespace when `networkPolicy.isolated`, else None.

    Ingress only from the same namespace and from namespaces of `allowedTenants`; all egress.
    """
    policy = tenant.spec.network_policy
    if not policy or not policy.isolated:
        return None
    sources: list[dict[str, Any]] = [{"podSelector": {}}]
    if policy.allowed_tenants:
        sources.append(
            {
                "namespaceSelector": {
                    "matchExpressions": [
                        {
                            "key": LABEL_TENANT,
                            "operator": "In",
                            "values": sorted(policy.allowed_tenants),
                        }
                    ]
                }
            }
        )
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": _meta(tenant, f"{tenant.name}-isolation"),
        "spec": {
            "podSelector": {},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [{"from": sources}],
            "egress": [{}],
        },
    }


def _owner(tenant: GryviaTenant) -> list[dict[str, Any]]:
    """The tenant as owner (no blockOwnerDeletion, which would need the tenant's finalizers
    subresource), or nothing while its uid is unknown."""
    if not tenant.metadata.uid:
        return []
    return [owner_reference(tenant, block_deletion=False)]


def build_role_bindings(tenant: GryviaTenant) -> list[dict[str, Any]]:
    """Return one RoleBinding `gryvia-tenant-<role>` per role that has subjects, to the
    chart's ClusterRole of that name: members as Users, `oidcGroups` as Groups with
    `oidcGroupRole` (default viewer); subjects in spec order, a user listed twice once.

    A role nobody holds has no binding (the handler deletes one left from earlier: removing
    the last member of a role removes its binding). The bindings are owned by the tenant, so
    deleting the tenant revokes them whatever its deletionPolicy. Unknown roles cannot occur:
    the CRD's enum refuses them (the original fell back to viewer).
    """
    subjects: dict[str, list[dict[str, str]]] = {role: [] for role in ROLES}
    seen: set[tuple[str, str]] = set()
    for member in tenant.spec.members or []:
        if (member.role, member.username) in seen:
            continue
        seen.add((member.role, member.username))
        subjects[member.role].append(
            {"kind": "User", "name": member.username, "apiGroup": "rbac.authorization.k8s.io"}
        )
    group_role = tenant.spec.oidc_group_role or "viewer"
    for group in dict.fromkeys(tenant.spec.oidc_groups or []):
        subjects[group_role].append(
            {"kind": "Group", "name": group, "apiGroup": "rbac.authorization.k8s.io"}
        )
    owner = {"ownerReferences": _owner(tenant)} if tenant.metadata.uid else {}
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {**_meta(tenant, f"gryvia-tenant-{role}"), **owner},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": f"gryvia-tenant-{role}",
            },
            "subjects": subs,
        }
        for role, subs in subjects.items()
        if subs
    ]


def build_children(tenant: GryviaTenant) -> list[dict[str, Any]]:
    """Return every namespaced object the tenant owns (not the Namespace itself)."""
    children = [
        build_resource_quota(tenant),
        build_limit_range(tenant),
        build_network_policy(tenant),
        *build_role_bindings(tenant),
    ]
    return [c for c in children if c is not None]


def stale_children(
    tenant: GryviaTenant, existing: Iterable[tuple[str, str]]
) -> list[tuple[str, str]]:
    """Return (kind, name) of managed objects that exist but are no longer desired."""
    wanted = {(c["kind"], c["metadata"]["name"]) for c in build_children(tenant)}
    return [item for item in existing if item not in wanted]


def tenant_status(
    tenant: GryviaTenant,
    *,
    gpu_hours: float,
    cost: float,
    running_jobs: int,
    used_gpus: int,
) -> dict[str, Any]:
    """Return the tenant's status: month-to-date usage (GPU-hours, USD), utilisation of its
    monthly GPU-hour, cost and concurrent-job quotas in percent, and health (`warning` at 80 %,
    `quota-exceeded` at 100 % of any quota, also when GPUs in use reach `concurrentGPUs`)."""
    quotas = tenant.spec.quotas
    percents: dict[str, float] = {}
    if quotas:
        pairs = [
            ("gpuHoursPercent", gpu_hours, quotas.gpu_hours.monthly if quotas.gpu_hours else None),
            ("costPercent", cost, quotas.cost_usd.monthly if quotas.cost_usd else None),
            ("jobsPercent", float(running_jobs), quotas.concurrent_jobs),
        ]
        percents = {k: round(100.0 * used / limit, 1) for k, used, limit in pairs if limit}
        if quotas.concurrent_gpus:
            percents["gpusPercent"] = round(100.0 * used_gpus / quotas.concurrent_gpus, 1)
    worst = max(percents.values(), default=0.0)
    health = (
        "quota-exceeded" if worst >= 100.0 else "warning" if worst >= WARNING_PERCENT else "healthy"
    )
    utilization = {k: v for k, v in percents.items() if k != "gpusPercent"}
    return {
        "memberCount": len(tenant.spec.members or []),
        "currentUsage": {
            "gpuHours": round(gpu_hours, 4),
            "costUSD": round(cost, 2),
            "runningJobs": running_jobs,
            "usedGPUs": used_gpus,
        },
        "quotaUtilization": utilization,
        "health": health,
        "namespacesManaged": [tenant_namespace(tenant.name)],
    }
