"""The registry's specs without a screen: tenant rows with their quotas, budgets scoped to a
tenant, event keys and the objects events point at, and the registry itself."""

from __future__ import annotations

from typing import Any

from gryvia_cli.tui.bindings import REGISTRY_VIEWS, resolve_jump
from gryvia_cli.tui.kind_tenants import member_lines
from gryvia_cli.tui.kinds import (
    budget_cell,
    budgets_for,
    event_key,
    event_ref,
    gpu_cell,
    tenant_rows,
)
from gryvia_cli.tui.registry import BY_KIND, REGISTRY, ObjectRef
from gryvia_operator.api import GryviaQuota, GryviaTenant


def _quota(name: str, team: str, ns: str, allocated: int, spent: float | None) -> GryviaQuota:
    raw: dict[str, Any] = {
        "metadata": {"name": name},
        "spec": {"team": team, "namespaces": [ns], "gpuQuota": {"maxGPUs": 8}},
        "status": {"currentUsage": {"allocatedGPUs": allocated}},
    }
    if spent is not None:
        raw["spec"]["budget"] = {"monthlyBudget": 1000}
        raw["status"]["budgetStatus"] = {"spentThisMonth": spent}
    return GryviaQuota.model_validate(raw)


def test_tenant_rows_join_quotas_by_team_or_namespace_and_keep_orphans() -> None:
    tenants = [
        GryviaTenant.model_validate({"metadata": {"name": n}, "spec": {}}) for n in ("b", "a")
    ]
    quotas = [
        _quota("qa", "a", "elsewhere", 6, 850.0),
        _quota("qb", "other", "tenant-b", 2, None),
        _quota("lonely", "research", "research", 9, None),
    ]
    rows = tenant_rows(tenants, quotas)
    assert [(r.name, [q.name for q in r.quotas]) for r in rows] == [
        ("a", ["qa"]),
        ("b", ["qb"]),
        ("research", ["lonely"]),
    ]
    assert rows[2].tenant is None
    assert gpu_cell(rows[0]) == ("6/8", "ok") and gpu_cell(rows[2]) == ("9/8", "error")
    assert budget_cell(rows[0]) == ("850/1000 (85%)", "warn")
    assert budget_cell(rows[1]) == ("-", "dim")


def test_member_lines_list_users_then_groups_with_their_role() -> None:
    tenant = GryviaTenant.model_validate(
        {
            "metadata": {"name": "vision"},
            "spec": {
                "members": [
                    {"username": "alice", "role": "member", "joinedAt": "2026-11-02T10:00:00Z"},
                    {"username": "bob"},
                ],
                "oidcGroups": ["vision-ml"],
            },
        }
    )
    assert member_lines(tenant) == [
        ("alice", "member  joined 2026-11-02"),
        ("bob", "viewer"),
        ("group vision-ml", "viewer"),
    ]


def test_budgets_for_a_tenant_by_scope() -> None:
    def budget(name: str, kind: str, scope: str) -> dict[str, Any]:
        return {
            "metadata": {"name": name},
            "spec": {"scope": {"type": kind, "name": scope}, "period": {"type": "monthly"}},
        }

    raws = [
        budget("t", "tenant", "acme"),
        budget("n", "namespace", "tenant-acme"),
        budget("team", "team", "acme"),
        budget("other", "tenant", "globex"),
        {"metadata": {"name": "broken"}, "spec": {}},
    ]
    assert [b.name for b in budgets_for("acme", raws)] == ["t", "n", "team"]


def test_event_keys_and_what_they_point_at() -> None:
    pod_event = {
        "metadata": {"name": "e", "namespace": "ns"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns"},
    }
    assert event_key(pod_event) == "ns/e"
    assert event_key({"metadata": {"uid": "u"}}) == "u"
    assert event_ref(pod_event) == ObjectRef("pods", "ns", "p")
    node = {"involvedObject": {"kind": "Node", "name": "n1"}}
    assert event_ref(node) == ObjectRef("nodes", None, "n1")
    assert ObjectRef("nodes", None, "n1").events_namespace == "default"
    assert event_ref({"involvedObject": {"kind": "ConfigMap", "name": "c"}}) is None


def test_registry_views_are_registered_and_reachable_by_jump() -> None:
    assert set(REGISTRY_VIEWS) <= set(REGISTRY)
    assert {"tenants", "quotas", "pods", "budgets", "reservations"} <= set(BY_KIND)
    assert {"jobhooks", "priorities", "checkpointguards", "gpusharingpolicies"} <= set(BY_KIND)
    jumps = [
        ("events", "events"),
        ("quotas", "tenants"),
        ("budgets", "budgets"),
        ("budget", "budgets"),
        ("hook", "hooks"),
        ("gjh", "hooks"),
        ("priority", "priorities"),
        ("pr", "priorities"),
        ("checkpointguards", "checkpoints"),
        ("ch", "checkpoints"),
        ("gpu", "gpusharing"),
        ("ggsp", "gpusharing"),
        ("grsv", "reservations"),
    ]
    for word, view in jumps:
        assert resolve_jump(word) == view, word
    assert resolve_jump("ten") == "tenants" and resolve_jump("po") == "pods"
    assert resolve_jump("no") == "nodes"
    assert resolve_jump("p") == "p"  # pods or priorities: no unique prefix
    for spec in REGISTRY.values():
        assert len({c.key for c in spec.columns}) == len(spec.columns)
