"""Quota admission: reject what never fits, hold what does not fit now, release in order."""

from __future__ import annotations

import datetime as dt

from gryvia_operator.api import GryviaQuota
from gryvia_operator.reconcile.quotas import (
    JobView,
    decide,
    plan,
    queue_order,
    quota_state,
    quota_status,
)

T0 = dt.datetime(2026, 11, 10, tzinfo=dt.UTC)


def _quota(max_gpus: int = 8, **gpu: object) -> GryviaQuota:
    return GryviaQuota.model_validate(
        {
            "metadata": {"name": "ml"},
            "spec": {
                "team": "ml",
                "namespaces": ["ml"],
                "gpuQuota": {"maxGPUs": max_gpus, **gpu},
                "budget": {"monthlyBudget": 100.0, "alertThreshold": 80, "hardLimit": True},
            },
        }
    )


def _job(
    name: str,
    gpus: int = 8,
    phase: str = "Pending",
    minutes: int = 0,
    priority: int = 0,
    gpu_type: str | None = "H100",
) -> JobView:
    return JobView("ml", name, T0 + dt.timedelta(minutes=minutes), priority, phase, gpus, gpu_type)


def test_second_job_waits_then_is_released_when_first_finishes() -> None:
    first, second = _job("a", minutes=0), _job("b", minutes=1)
    state = quota_state(_quota(), [first, second])
    decisions = plan(state)
    assert decisions["ml/a"].verdict == "allow"
    assert decisions["ml/b"].verdict == "queue"
    assert decisions["ml/b"].message == (
        "waiting for quota: team ml uses 8 of 8 GPUs, this job needs 8"
    )
    running = _job("a", phase="Running")
    assert decide(second, [quota_state(_quota(), [running, second])]).verdict == "queue"
    done = _job("a", phase="Succeeded")
    assert decide(second, [quota_state(_quota(), [done, second])]).verdict == "allow"


def test_release_order_is_priority_then_age_without_backfill() -> None:
    jobs = [
        _job("old", 8, minutes=0),
        _job("vip", 8, minutes=5, priority=90),
        _job("small", 2, minutes=1),
    ]
    assert [j.name for j in queue_order(jobs)] == ["vip", "old", "small"]
    decisions = plan(quota_state(_quota(), jobs))
    assert decisions["ml/vip"].verdict == "allow"
    assert decisions["ml/old"].verdict == "queue"
    assert decisions["ml/small"].verdict == "queue"  # no jumping ahead of "old"
    assert "behind earlier jobs" in decisions["ml/small"].message


def test_never_fitting_jobs_are_rejected_with_reasons() -> None:
    quota = _quota(16, allowedGPUTypes=["H100"], maxGPUsPerJob=8)
    jobs = [
        _job("l40", 1, gpu_type="L40"),
        _job("any", 1, gpu_type=None),
        _job("big", 12),
        _job("ok", 8),
    ]
    decisions = plan(quota_state(quota, jobs))
    assert decisions["ml/l40"].reason == "GpuTypeNotAllowed"
    assert decisions["ml/l40"].message == (
        'GPU type "L40" is not allowed for team ml (allowed: H100)'
    )
    assert decisions["ml/any"].reason == "GpuTypeNotAllowed"
    assert decisions["ml/big"].message == "Job requests 12 GPUs, exceeds max 8 per job for team ml"
    assert decisions["ml/ok"].verdict == "allow"
    assert plan(quota_state(_quota(8), [_job("huge", 16)]))["ml/huge"].verdict == "reject"


def test_running_jobs_limit_and_full_queue() -> None:
    quota = _quota(64, maxRunningJobs=1, maxQueuedJobs=1)
    jobs = [_job("r", 1, phase="Running"), _job("q1", 1, minutes=1), _job("q2", 1, minutes=2)]
    decisions = plan(quota_state(quota, jobs))
    assert decisions["ml/q1"].verdict == "queue"
    assert "runs 1 of 1 jobs" in decisions["ml/q1"].message
    assert decisions["ml/q2"].reason == "QueueFull"


def test_spent_hard_budget_holds_jobs_and_cpu_jobs_pass() -> None:
    state = quota_state(_quota(), [_job("a")], spent=100.0)
    assert plan(state)["ml/a"].verdict == "queue"
    assert "monthly budget of team ml is spent" in plan(state)["ml/a"].message
    assert decide(_job("cpu", 0), [state]).verdict == "allow"


def test_tenant_without_sku_for_type_is_rejected() -> None:
    decision = decide(_job("a", gpu_type="V100"), [], tenant="acme", enabled_types=["H100"])
    assert decision.reason == "NoEnabledSku"
    assert decide(_job("a"), [], tenant="acme", enabled_types=["h100"]).verdict == "allow"
    assert decide(_job("a"), [], tenant="acme", enabled_types=None).verdict == "allow"


def test_quota_status_usage_budget_and_projection() -> None:
    now = dt.datetime(2026, 11, 16, tzinfo=dt.UTC)  # half of November
    elsewhere = JobView("elsewhere", "x", T0, 0, "Running", 8, "H100")  # not in the quota
    jobs = [_job("a", phase="Running"), _job("b", minutes=1), elsewhere]
    state = quota_state(_quota(), jobs, spent=40.0)
    status = quota_status(state, now=now, gpu_hours=10.0)
    assert status["currentUsage"] == {
        "allocatedGPUs": 8,
        "runningJobs": 1,
        "queuedJobs": 1,
        "gpuHours": 10.0,
    }
    budget = status["budgetStatus"]
    assert isinstance(budget, dict)
    assert budget["spentThisMonth"] == 40.0 and budget["remainingBudget"] == 60.0
    assert budget["percentUsed"] == 40.0 and budget["projectedSpend"] == 80.0
    # 8 of 8 GPUs is a full quota, not an exceeded one (issue 13: "QuotaExceeded" was wrong).
    assert status["phase"] == "Full"
    over = quota_status(quota_state(_quota(), [], spent=120.0), now=now, gpu_hours=0)
    assert over["phase"] == "BudgetExceeded"


def test_quota_at_its_limit_is_full_and_only_above_it_exceeded() -> None:
    now = dt.datetime(2026, 11, 16, tzinfo=dt.UTC)
    at_limit = quota_state(_quota(), [_job("a", phase="Running"), _job("b", minutes=1)])
    full = quota_status(at_limit, now=now, gpu_hours=0)
    assert full["phase"] == "Full"
    ready = full["conditions"][0]  # type: ignore[index]
    assert ready["status"] == "True" and ready["reason"] == "Full"
    assert ready["message"] == "all 8 GPUs in use; 1 job(s) wait for GPUs"
    below = quota_status(
        quota_state(_quota(), [_job("a", gpus=4, phase="Running")]), now=now, gpu_hours=0
    )
    assert below["phase"] == "Active"
    lowered = quota_state(_quota(max_gpus=4), [_job("a", phase="Running")])
    exceeded = quota_status(lowered, now=now, gpu_hours=0)
    assert exceeded["phase"] == "QuotaExceeded"
    assert exceeded["conditions"][0]["status"] == "False"  # type: ignore[index]
