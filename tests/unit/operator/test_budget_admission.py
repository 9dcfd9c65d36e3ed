"""The gate's verdict with GryviaBudgets in the watch: block rejects naming the budget, warn
admits with one Warning event per job, quotas and budgets combine."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from gryvia_operator.controller import policies
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, BUDGETS, QUOTAS, TENANTS, USAGE
from gryvia_operator.reconcile.status import JobEvent
from tests.builders import make_job

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _budget(action: str, state: str) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaBudget",
        "metadata": {"name": "ml-budget"},
        "spec": {
            "scope": {"type": "namespace", "name": "ml"},
            "period": {"type": "monthly"},
            "limits": {"costUSD": 10},
            "enforcement": {"enabled": True, "action": action},
        },
        "status": {
            "state": state,
            "usage": {"costUSD": 9.5},
            "utilization": {"percent": 95.0},
            "currentPeriod": {"costLimitUSD": 10.0},
        },
    }


def _runtime(budget: dict[str, Any]) -> tuple[Runtime, list[JobEvent]]:
    events: list[JobEvent] = []
    rt = Runtime(api=cast(Any, None), clock=lambda: NOW, post_event=lambda o, e: events.append(e))
    rt.indices.attach(
        {AIJOBS: {}, USAGE: {}, QUOTAS: {}, TENANTS: {}, BUDGETS: {"ml-budget": [budget]}}
    )
    return rt, events


def test_block_rejects_new_and_holds_queued_jobs() -> None:
    rt, _ = _runtime(_budget("block", "blocked"))
    verdict = policies.admission_for(rt, make_job("a").gpus(1).gpu_type("H100").obj())
    assert verdict.verdict == "reject" and verdict.reason == "BudgetExceeded"
    assert verdict.message == "budget ml-budget is spent: 9.50 of 10.00 USD (95.0 %)"
    queued = policies.admission_for(
        rt, make_job("b").gpus(1).gpu_type("H100").phase("Queued").obj()
    )
    assert queued.verdict == "queue" and queued.message.startswith("held: budget ml-budget")


def test_warn_admits_with_one_warning_event_per_job() -> None:
    rt, events = _runtime(_budget("warn", "warning"))
    job = make_job("c").gpus(1).gpu_type("H100").obj()
    for _ in range(3):
        verdict = policies.admission_for(rt, job)
        assert verdict.verdict == "allow" and verdict.reason == "BudgetWarning"
    assert [(e.type, e.reason) for e in events] == [("Warning", "BudgetWarning")]
    assert "budget ml-budget is warning" in events[0].message
