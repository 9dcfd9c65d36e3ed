"""The admission gate wired into the job reconcile (fake access layer): refuse before any
child, fail open with a condition and a Warning event, fail closed with a hold."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, CHILDREN, GATE_BUDGETS, NODES, SKUS
from gryvia_operator.handlers import aijob
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.status import JobEvent
from tests.builders import gpu_node, make_job
from tests.unit.operator.fakeapi import FakeApi

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
L40_SKU = {"metadata": {"name": "l40"}, "spec": {"gpuType": "L40", "hourlyRate": 2.5}}
BROKEN_SKU = {"metadata": {"name": "odd"}, "spec": {"gpuType": "L40", "hourlyRate": "cheap"}}


def _budget(spent: float | None) -> dict[str, Any]:
    status = {} if spent is None else {"usage": {"costUSD": spent, "gpuHours": 0}}
    return {
        "metadata": {"name": "ml-cap"},
        "spec": {
            "scope": {"type": "namespace", "name": "ml"},
            "period": {"type": "monthly"},
            "limits": {"costUSD": 10},
            "enforcement": {"enabled": True, "action": "block"},
        },
        "status": status,
    }


def _runtime(
    job: dict[str, Any],
    skus: list[dict[str, Any]],
    budget: dict[str, Any],
    *,
    fail_open: bool = True,
) -> tuple[Runtime, FakeApi, list[JobEvent]]:
    api = FakeApi()
    events: list[JobEvent] = []
    config = ReconcileConfig(admission_gate=True, admission_fail_open=fail_open)
    rt = Runtime(
        api=cast(Any, api),
        config=config,
        clock=lambda: NOW,
        post_event=lambda obj, e: events.append(e),
    )
    indexes: dict[str, dict[Any, list[Any]]] = {
        AIJOBS: {("ml", job["metadata"]["name"]): [job]},
        NODES: {"n": [gpu_node("n", "L40")]},
        SKUS: {s["metadata"]["name"]: [s] for s in skus},
        GATE_BUDGETS: {"ml-cap": [budget]},
    }
    indexes.update({v: {} for v in CHILDREN.values()})
    rt.indices.attach(indexes)
    api.put(job)
    return rt, api, events


def _status(api: FakeApi, name: str) -> dict[str, Any]:
    status: dict[str, Any] = api.objects[("GryviaAIJob", "ml", name)]["status"]
    return status


def _creates(api: FakeApi) -> list[tuple[str, ...]]:
    return [c for c in api.calls if c[0] == "create"]


async def test_job_whose_estimate_exceeds_the_remaining_budget_is_rejected_before_children() -> (
    None
):
    job = make_job("big").gpus(4).gpu_type("L40").timeout("2h").obj()
    rt, api, events = _runtime(job, [L40_SKU], _budget(4.0))
    await aijob.reconcile_key(rt, ("ml", "big"))
    status = _status(api, "big")
    assert status["phase"] == "Rejected"
    assert "budget ml-cap" in status["message"] and "4.00 of 10.00 USD" in status["message"]
    rejected = next(c for c in status["conditions"] if c["type"] == "Rejected")
    assert rejected["reason"] == "BudgetExceeded"
    assert _creates(api) == []
    assert [e.reason for e in events] == ["Rejected"]


async def test_job_within_the_budget_is_admitted() -> None:
    job = make_job("small").gpus(1).gpu_type("L40").timeout("1h").obj()
    rt, api, _ = _runtime(job, [L40_SKU], _budget(4.0))
    await aijob.reconcile_key(rt, ("ml", "small"))
    assert _status(api, "small")["phase"] == "Scheduling"
    assert ("create", "Job", "small") in _creates(api)


async def test_unreadable_catalog_fails_open_with_condition_and_warning() -> None:
    job = make_job("j").gpus(1).gpu_type("L40").obj()
    rt, api, events = _runtime(job, [L40_SKU, BROKEN_SKU], _budget(0.0))
    await aijob.reconcile_key(rt, ("ml", "j"))
    status = _status(api, "j")
    assert status["phase"] == "Scheduling"
    cond = next(c for c in status["conditions"] if c["type"] == "AdmissionUnchecked")
    assert cond["status"] == "True" and "GryviaGpuSku odd" in cond["message"]
    assert [(e.type, e.reason) for e in events if e.reason == "AdmissionUnchecked"] == [
        ("Warning", "AdmissionUnchecked")
    ]


async def test_unreadable_catalog_fails_closed_with_a_hold_and_a_retry() -> None:
    job = make_job("j").gpus(1).gpu_type("L40").obj()
    rt, api, _ = _runtime(job, [BROKEN_SKU], _budget(0.0), fail_open=False)
    await aijob.reconcile_key(rt, ("ml", "j"))
    status = _status(api, "j")
    assert status["phase"] == "Queued"
    assert "GPU catalog cannot be read" in status["message"]
    admitted = next(c for c in status["conditions"] if c["type"] == "Admitted")
    assert admitted["status"] == "False" and admitted["reason"] == "AdmissionUnchecked"
    assert _creates(api) == []
    assert ("ml", "j") in rt.jobs._timers  # checked again within HOLD_RETRY_SECONDS


async def test_budget_without_spend_fails_closed_then_admits_once_spend_is_read() -> None:
    job = make_job("j").gpus(1).gpu_type("L40").obj()
    rt, api, _ = _runtime(job, [L40_SKU], _budget(None), fail_open=False)
    await aijob.reconcile_key(rt, ("ml", "j"))
    assert _status(api, "j")["phase"] == "Queued"
    assert "status.usage.costUSD" in _status(api, "j")["message"]
    held = api.objects[("GryviaAIJob", "ml", "j")]
    rt.indices.attach({AIJOBS: {("ml", "j"): [held]}, GATE_BUDGETS: {"ml-cap": [_budget(1.0)]}})
    rt.recent_jobs.forget(("ml", "j"))
    await aijob.reconcile_key(rt, ("ml", "j"))
    assert _status(api, "j")["phase"] == "Scheduling"


async def test_gate_off_ignores_budgets() -> None:
    job = make_job("big").gpus(4).gpu_type("L40").timeout("2h").obj()
    rt, api, _ = _runtime(job, [L40_SKU], _budget(9.0))
    rt.config = ReconcileConfig()
    await aijob.reconcile_key(rt, ("ml", "big"))
    assert _status(api, "big")["phase"] == "Scheduling"


async def test_submit_and_the_gate_say_the_same_for_the_same_inputs() -> None:
    from gryvia_cli.core.estimate import estimate_cost
    from gryvia_cli.core.jobs import summarize_job
    from gryvia_operator.api import GryviaBudget, GryviaGpuSku

    job = make_job("big").gpus(4).gpu_type("L40").timeout("2h").obj()
    rt, api, _ = _runtime(job, [L40_SKU], _budget(4.0))
    await aijob.reconcile_key(rt, ("ml", "big"))
    operator_says = _status(api, "big")["message"]
    cli = estimate_cost(
        summarize_job(job),
        "ml",
        [GryviaGpuSku.model_validate(L40_SKU)],
        [],
        [],
        [GryviaBudget.model_validate(_budget(4.0))],
        NOW,
    )
    assert cli is not None and cli.impact is not None and cli.impact.refused
    overrun = cli.impact.overruns[0].describe()
    assert overrun in operator_says
    assert any(overrun in w for w in cli.warnings)
    assert (
        "  budget impact on budget ml-cap: 4.00 spent + 20.00 = 24.00 of 10.00 USD "
        "(over the limit)" in cli.lines()
    )


def test_unchecked_condition_turns_false_once_the_gate_checks() -> None:
    from gryvia_operator.reconcile.admission import AdmissionDecision
    from gryvia_operator.reconcile.aijob import Observed, reconcile_job

    job = make_job("j").gpus(1).gpu_type("L40")
    unchecked = AdmissionDecision("allow", unchecked="catalog unreadable")
    first = reconcile_job(
        job.model(), Observed(nodes=(), admission=unchecked), ReconcileConfig(), NOW
    )
    conds = {c["type"]: c for c in first.status["conditions"]}
    assert conds["AdmissionUnchecked"]["status"] == "True"
    again = make_job("j").gpus(1).gpu_type("L40").status(**first.status)
    second = reconcile_job(again.model(), Observed(nodes=()), ReconcileConfig(), NOW)
    conds = {c["type"]: c for c in second.status["conditions"]}
    assert conds["AdmissionUnchecked"]["status"] == "False"
    assert conds["AdmissionUnchecked"]["reason"] == "BudgetsChecked"
