"""Tenant children and status."""

from __future__ import annotations

from gryvia_operator.api import GryviaTenant
from gryvia_operator.reconcile.tenancy import (
    build_children,
    build_namespace,
    build_role_bindings,
    stale_children,
    tenant_status,
)


def _tenant(**spec: object) -> GryviaTenant:
    return GryviaTenant.model_validate({"metadata": {"name": "acme"}, "spec": spec})


def test_namespace_labels() -> None:
    ns = build_namespace(
        _tenant(displayName="Acme Research!", governance={"dataClassification": "confidential"})
    )
    assert ns["metadata"]["name"] == "tenant-acme"
    assert ns["metadata"]["labels"] == {
        "gryvia.io/tenant": "acme",
        "gryvia.io/managed-by": "gryvia-tenant-controller",
        "gryvia.io/display-name": "Acme-Research",
        "gryvia.io/data-classification": "confidential",
    }


def test_children_follow_the_spec() -> None:
    plain = {(c["kind"], c["metadata"]["name"]) for c in build_children(_tenant())}
    assert plain == {("LimitRange", "acme-limits")}
    full = _tenant(
        quotas={"concurrentGPUs": 16},
        networkPolicy={"isolated": True, "allowedTenants": ["partner"]},
        members=[{"username": "ann", "role": "admin"}, {"username": "bob", "role": "viewer"}],
        oidcGroups=["acme-ml"],
        oidcGroupRole="member",
    )
    children = {c["metadata"]["name"]: c for c in build_children(full)}
    assert children["acme-quota"]["spec"]["hard"] == {"requests.nvidia.com/gpu": "16"}
    policy = children["acme-isolation"]["spec"]
    assert policy["ingress"][0]["from"][1]["namespaceSelector"]["matchExpressions"][0][
        "values"
    ] == ["partner"]
    bindings = {b["roleRef"]["name"]: b["subjects"] for b in build_role_bindings(full)}
    assert [s["name"] for s in bindings["gryvia-tenant-admin"]] == ["ann"]
    assert [s["name"] for s in bindings["gryvia-tenant-viewer"]] == ["bob"]
    assert bindings["gryvia-tenant-member"] == [
        {"kind": "Group", "name": "acme-ml", "apiGroup": "rbac.authorization.k8s.io"}
    ]
    assert all(c["metadata"]["namespace"] == "tenant-acme" for c in children.values())
    assert stale_children(
        _tenant(), [("ResourceQuota", "acme-quota"), ("LimitRange", "acme-limits")]
    ) == [("ResourceQuota", "acme-quota")]


def test_health_thresholds() -> None:
    tenant = _tenant(
        quotas={
            "gpuHours": {"monthly": 100},
            "costUSD": {"monthly": 1000},
            "concurrentJobs": 10,
            "concurrentGPUs": 16,
        },
        members=[{"username": "a"}],
    )
    ok = tenant_status(tenant, gpu_hours=10, cost=100, running_jobs=1, used_gpus=8)
    assert ok["health"] == "healthy" and ok["memberCount"] == 1
    assert ok["quotaUtilization"] == {
        "gpuHoursPercent": 10.0,
        "costPercent": 10.0,
        "jobsPercent": 10.0,
    }
    assert (
        tenant_status(tenant, gpu_hours=85, cost=0, running_jobs=0, used_gpus=0)["health"]
        == "warning"
    )
    assert (
        tenant_status(tenant, gpu_hours=0, cost=0, running_jobs=0, used_gpus=16)["health"]
        == "quota-exceeded"
    )
