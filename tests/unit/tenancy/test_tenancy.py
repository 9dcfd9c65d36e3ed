"""Tenant children and status."""

from __future__ import annotations

import pydantic
import pytest

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


def _bindings(tenant: GryviaTenant) -> dict[str, dict[str, object]]:
    return {b["metadata"]["name"]: b for b in build_role_bindings(tenant)}


def test_each_role_binds_its_own_clusterrole_with_labels_and_owner() -> None:
    tenant = GryviaTenant.model_validate(
        {
            "metadata": {"name": "acme", "uid": "u-1"},
            "spec": {
                "members": [
                    {"username": "ann@example.com", "role": "admin"},
                    {"username": "bob@example.com", "role": "member"},
                    {"username": "cy@example.com"},  # the CRD's default role
                    {"username": "bob@example.com", "role": "member"},  # listed twice
                ],
                "oidcGroups": ["vision", "vision"],
            },
        }
    )
    bindings = _bindings(tenant)
    assert set(bindings) == {"gryvia-tenant-admin", "gryvia-tenant-member", "gryvia-tenant-viewer"}
    for name, binding in bindings.items():
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": name,
        }
        meta = binding["metadata"]
        assert meta["namespace"] == "tenant-acme"
        assert meta["labels"] == {
            "gryvia.io/tenant": "acme",
            "gryvia.io/managed-by": "gryvia-tenant-controller",
        }
        assert meta["ownerReferences"] == [
            {
                "apiVersion": "gryvia.io/v1alpha1",
                "kind": "GryviaTenant",
                "name": "acme",
                "uid": "u-1",
                "controller": True,
            }
        ]
    assert [s["name"] for s in bindings["gryvia-tenant-member"]["subjects"]] == ["bob@example.com"]
    assert [(s["kind"], s["name"]) for s in bindings["gryvia-tenant-viewer"]["subjects"]] == [
        ("User", "cy@example.com"),
        ("Group", "vision"),
    ]


def test_removing_a_member_removes_the_subject_and_the_last_one_the_binding() -> None:
    two = _tenant(
        members=[
            {"username": "ann", "role": "member"},
            {"username": "bob", "role": "member"},
            {"username": "cy", "role": "viewer"},
        ]
    )
    assert [s["name"] for s in _bindings(two)["gryvia-tenant-member"]["subjects"]] == [
        "ann",
        "bob",
    ]
    one = _tenant(members=[{"username": "bob", "role": "member"}])
    assert [s["name"] for s in _bindings(one)["gryvia-tenant-member"]["subjects"]] == ["bob"]
    assert "gryvia-tenant-viewer" not in _bindings(one)
    existing = [("RoleBinding", "gryvia-tenant-member"), ("RoleBinding", "gryvia-tenant-viewer")]
    assert stale_children(one, existing) == [("RoleBinding", "gryvia-tenant-viewer")]
    assert stale_children(_tenant(), existing) == existing
    assert "ownerReferences" not in build_role_bindings(one)[0]["metadata"]  # no uid yet


def test_a_role_change_moves_the_member_between_bindings() -> None:
    before = _bindings(_tenant(members=[{"username": "ann", "role": "viewer"}]))
    after = _bindings(_tenant(members=[{"username": "ann", "role": "admin"}]))
    assert set(before) == {"gryvia-tenant-viewer"} and set(after) == {"gryvia-tenant-admin"}


def test_groups_take_the_shared_group_role() -> None:
    tenant = _tenant(oidcGroups=["nlp"], oidcGroupRole="admin")
    assert [s["name"] for s in _bindings(tenant)["gryvia-tenant-admin"]["subjects"]] == ["nlp"]


def test_an_unknown_role_is_refused_by_the_model() -> None:
    with pytest.raises(pydantic.ValidationError, match="role"):
        _tenant(members=[{"username": "ann", "role": "owner"}])
