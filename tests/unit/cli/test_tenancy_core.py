"""Pure tenancy helpers of the CLI: tenant names, apply bodies, rows, delete messages and
quota reports.

The builders here (`tenant`, `quota`, `sku`, `record`, `CATALOG`) also feed the other
test_tenancy_*.py modules.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from gryvia_cli.core import quota as quota_report
from gryvia_cli.core import tenancy
from gryvia_cli.core.cells import Marked
from gryvia_operator.api import GryviaQuota, GryviaTenant
from gryvia_operator.api.parse import parse_all

UTC = dt.UTC


def tenant(name: str, **spec: Any) -> dict[str, Any]:
    """A GryviaTenant; `status=` sets its status."""
    status = spec.pop("status", None)
    obj: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaTenant",
        "metadata": {"name": name},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def quota(
    name: str,
    team: str,
    namespaces: list[str],
    *,
    max_gpus: int = 16,
    budget: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    **limits: Any,
) -> dict[str, Any]:
    """A GryviaQuota; `limits` are extra gpuQuota fields (camelCase)."""
    spec: dict[str, Any] = {
        "team": team,
        "namespaces": namespaces,
        "gpuQuota": {"maxGPUs": max_gpus, **limits},
    }
    if budget is not None:
        spec["budget"] = budget
    obj: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaQuota",
        "metadata": {"name": name},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def sku(name: str, gpu_type: str, rate: float, *, enabled: bool = True) -> dict[str, Any]:
    """A GryviaGpuSku."""
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaGpuSku",
        "metadata": {"name": name},
        "spec": {"gpuType": gpu_type, "hourlyRate": rate, "enabled": enabled},
    }


def record(
    tenant_name: str,
    job: str,
    start: str,
    hours: float,
    *,
    rate: float = 4.0,
    sku_name: str = "a100-80g",
    gpus: int = 8,
    end: str | None = None,
    final: bool = True,
    namespace: str | None = None,
    gpu_type: str = "A100-80G",
) -> dict[str, Any]:
    """A GryviaUsageRecord of `hours` GPU-hours at `rate`."""
    spec: dict[str, Any] = {
        "tenant": tenant_name,
        "job": job,
        "jobUID": f"uid-{job}",
        "sku": sku_name,
        "gpuType": gpu_type,
        "gpus": gpus,
        "rate": rate,
        "currency": "USD",
        "start": start,
        "gpuHours": hours,
        "cost": hours * rate,
        "final": final,
    }
    if end:
        spec["end"] = end
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaUsageRecord",
        "metadata": {
            "name": f"usage-uid-{job}",
            "namespace": namespace or f"tenant-{tenant_name}",
        },
        "spec": spec,
    }


CATALOG = [
    sku("a100-80g", "A100-80G", 4.0),
    sku("h100-80g", "H100", 8.0),
    sku("h100-cheap", "H100", 1.0, enabled=False),
    sku("l40", "L40", 2.5),
]


# -- tenants -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "vision", "team-2", "x" * 56, "9lives"])
def test_valid_tenant_names(name: str) -> None:
    assert tenancy.name_problem(name) is None


@pytest.mark.parametrize("name", ["", "-a", "a-", "Vision", "a_b", "a.b", "x" * 57, "tea m"])
def test_invalid_tenant_names_name_the_rule(name: str) -> None:
    problem = tenancy.name_problem(name)
    assert problem is not None
    assert f'"{name}"' in problem
    assert "lowercase letters, digits and '-', at most 56 characters" in problem
    assert "not starting or ending with '-'" in problem


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("alice", {"username": "alice", "role": "viewer"}),
        ("alice:admin", {"username": "alice", "role": "admin"}),
        ("bob:Member", {"username": "bob", "role": "member"}),
        (
            "system:serviceaccount:ml:bot",
            {"username": "system:serviceaccount:ml:bot", "role": "viewer"},
        ),
        (
            "system:serviceaccount:ml:bot:admin",
            {"username": "system:serviceaccount:ml:bot", "role": "admin"},
        ),
    ],
)
def test_members_parse_user_and_role(text: str, expected: dict[str, str]) -> None:
    assert tenancy.parse_member(text) == expected


@pytest.mark.parametrize("text", ["alice:owner", ":admin", "", "a:b:c"])
def test_bad_members_name_the_form(text: str) -> None:
    with pytest.raises(ValueError, match="use USER or USER:ROLE"):
        tenancy.parse_member(text)


def test_apply_body_sets_only_given_fields() -> None:
    bare = tenancy.build_tenant_apply("vision")
    assert bare == {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaTenant",
        "metadata": {"name": "vision"},
        "spec": {"displayName": "vision"},
    }
    full = tenancy.build_tenant_apply(
        "vision",
        display_name="Vision team",
        allowed_skus=["a100-80g", "l40", "a100-80g"],
        max_gpus=0,
        isolated=False,
        members=[{"username": "alice", "role": "admin"}],
        deletion_policy="Delete",
    )
    assert full["spec"] == {
        "displayName": "Vision team",
        "allowedSkus": ["a100-80g", "l40"],
        "quotas": {"concurrentGPUs": 0},
        "networkPolicy": {"isolated": False},
        "members": [{"username": "alice", "role": "admin"}],
        "deletionPolicy": "Delete",
    }
    GryviaTenant.model_validate(full)  # a valid object


def test_delete_message_follows_the_deletion_policy() -> None:
    kept = GryviaTenant.model_validate(tenant("vision"))
    assert tenancy.deletion_outcome(kept).startswith(
        "namespace tenant-vision is kept; its tenant labels are removed"
    )
    retained = GryviaTenant.model_validate(tenant("vision", deletionPolicy="Retain"))
    assert "is kept" in tenancy.deletion_outcome(retained)
    deleted = GryviaTenant.model_validate(tenant("vision", deletionPolicy="Delete"))
    assert tenancy.deletion_outcome(deleted).startswith(
        "namespace tenant-vision and everything in it will be deleted"
    )
    assert "may" not in tenancy.deletion_outcome(deleted)


def test_tenant_rows_and_details() -> None:
    limited = GryviaTenant.model_validate(
        tenant(
            "vision",
            displayName="Vision team",
            allowedSkus=["a100-80g"],
            quotas={"concurrentGPUs": 16},
            networkPolicy={"isolated": True},
            members=[{"username": "alice", "role": "admin"}],
            status={"health": "warning", "namespacesManaged": ["tenant-vision"]},
        )
    )
    open_ = GryviaTenant.model_validate(tenant("nlp", quotas={"concurrentGPUs": 0}))
    row = tenancy.tenant_row(limited)
    assert [str(c) for c in row] == [
        "vision",
        "Vision team",
        "warning",
        "16",
        "a100-80g",
        "tenant-vision",
    ]
    assert row[2] == Marked("warning", "warn")
    assert [str(c) for c in tenancy.tenant_row(open_)] == [
        "nlp",
        "-",
        "-",
        "unlimited",
        "all",
        "tenant-nlp",
    ]
    details = dict(tenancy.tenant_details(limited))
    assert details["Namespace"] == "tenant-vision"
    assert details["Network isolated"] == "yes"
    assert details["Members"] == "alice (admin)"
    assert details["OIDC groups"] == "-"
    assert details["Deletion policy"] == "Retain"
    assert dict(tenancy.tenant_details(open_))["Network isolated"] == "default"


def test_parse_all_skips_invalid_objects() -> None:
    good, problems = parse_all(
        GryviaQuota, [quota("q", "t", ["ns"]), {"metadata": {"name": "broken"}, "spec": {}}]
    )
    assert [q.name for q in good] == ["q"]
    assert problems and problems[0].startswith("broken: spec.team")


# -- quota report ------------------------------------------------------------------------------


def _quota(**kw: Any) -> GryviaQuota:
    return GryviaQuota.model_validate(quota("vision-q", "vision", ["tenant-vision"], **kw))


def test_quota_usage_lines() -> None:
    q = _quota(
        maxGPUsPerJob=8,
        maxRunningJobs=4,
        allowedGPUTypes=["A100-80G", "L40"],
        status={
            "phase": "Active",
            "currentUsage": {
                "allocatedGPUs": 13,
                "runningJobs": 2,
                "queuedJobs": 1,
                "gpuHours": 12.345,
            },
        },
    )
    lines = dict(quota_report.usage_lines(q))
    assert lines["Allocated GPUs"] == Marked("13/16 (81%)", "warn")
    assert lines["Max GPUs per job"] == "8"
    assert lines["Running jobs"] == "2/4"
    assert lines["Queued jobs"] == "1 (no limit)"
    assert lines["Allowed GPU types"] == "A100-80G, L40"
    assert lines["GPU hours (month)"] == "12.35"
    assert quota_report.phase_cell(q) == Marked("Active", "ok")
    bare = dict(quota_report.usage_lines(_quota()))
    assert bare["Allocated GPUs"] == Marked("0/16 (0%)", "ok")
    assert bare["Max GPUs per job"] == "no limit"
    assert bare["Allowed GPU types"] == "any"
    assert quota_report.phase_cell(_quota()) == Marked("-", "unknown")


def _budget_quota(percent: float, threshold: float | None, hard: bool = False) -> GryviaQuota:
    budget: dict[str, Any] = {"monthlyBudget": 1000, "hardLimit": hard}
    if threshold is not None:
        budget["alertThreshold"] = threshold
    spent = percent * 10
    return _quota(
        budget=budget,
        status={
            "budgetStatus": {
                "spentThisMonth": spent,
                "remainingBudget": 1000 - spent,
                "percentUsed": percent,
                "projectedSpend": spent,
            }
        },
    )


def test_alert_threshold_is_a_percentage_never_a_fraction() -> None:
    _, below = quota_report.budget_lines(_budget_quota(50.0, 80))
    assert below == []
    lines, reached = quota_report.budget_lines(_budget_quota(85.0, 80))
    assert [n.text for n in reached] == ["alert threshold (80%) reached"]
    values = dict(lines)
    assert values["Spent"] == "850.00 USD"
    assert values["Budget"] == "1000.00 USD"
    assert values["Remaining"] == Marked("150.00 USD", "ok")
    assert values["Used"] == Marked("85.0%", "warn")
    assert values["Alert threshold"] == "80%"
    assert values["Hard limit"] == "no"
    # 0.8 is 0.8 %, not 80 %: 5 % used is past it
    _, tiny = quota_report.budget_lines(_budget_quota(5.0, 0.8))
    assert [n.text for n in tiny] == ["alert threshold (0.8%) reached"]


def test_budget_exceeded_and_hard_limit_notes() -> None:
    _, soft = quota_report.budget_lines(_budget_quota(120.0, 80))
    assert [(n.marker, n.text) for n in soft] == [
        ("warn", "budget exceeded (no hard limit: jobs still start)")
    ]
    _, hard = quota_report.budget_lines(_budget_quota(100.0, 80, hard=True))
    assert hard[0].marker == "error" and hard[0].text.startswith("hard limit reached")


def test_budget_figures_without_status_and_without_budget() -> None:
    assert quota_report.budget_lines(_quota()) == ([("Budget", "none set")], [])
    figures = quota_report.budget_figures(_quota(budget={"monthlyBudget": 200}))
    assert figures == {
        "spent": 0.0,
        "budget": 200,
        "remaining": 200,
        "percent": 0.0,
        "projected": 0.0,
    }
    _, notes = quota_report.budget_lines(
        _quota(
            budget={"monthlyBudget": 100},
            status={"budgetStatus": {"spentThisMonth": 50, "projectedSpend": 150}},
        )
    )
    assert [n.text for n in notes] == ["projected to exceed the budget by month end (150.00 USD)"]
