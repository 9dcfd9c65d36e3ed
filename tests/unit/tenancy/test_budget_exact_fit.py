"""The budget gate at its boundary (issue 38, fault 5): reaching a hard limit exactly is
allowed and one cent over is refused, so the spend the gate is given and the job's estimate
are exact Decimals, never sums of floats (16.01 + 16.01 + 67.68 is 99.70000000000002 in
floats, which made a 0.30 USD job "take it to 100.00" and be Rejected)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, cast

from gryvia_operator.api import GryviaAIJob, GryviaQuota
from gryvia_operator.api.budgetgate import estimate_job
from gryvia_operator.api.periods import MeteredRun, spend_in_window
from gryvia_operator.api.pricing import Rate
from gryvia_operator.controller import policies
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, GATE_BUDGETS, QUOTAS, SKUS, TENANTS, USAGE
from gryvia_operator.handlers import gate
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.quotas import budget_spent, quota_state
from tests.builders import make_job

NOW = dt.datetime(2026, 12, 20, 12, tzinfo=dt.UTC)
COSTS_99_70 = ("16.01", "16.01", "67.68")
"""Three runs that add up to 99.70 USD (99.70000000000002 when summed in floats)."""
COSTS_100 = ("10.1",) * 9 + ("9.1",)
"""Ten runs that add up to 100.00 USD (99.99999999999999 when summed in floats)."""


def _usage(i: int, cost: str) -> dict[str, Any]:
    """A finished usage record in namespace ml this month, its cost a JSON number."""
    start = dt.datetime(2026, 12, 2, tzinfo=dt.UTC) + dt.timedelta(hours=i)
    return {
        "metadata": {"name": f"usage-{i}", "namespace": "ml"},
        "spec": {
            "tenant": "ml",
            "job": f"j{i}",
            "gpuType": "L40",
            "gpus": 1,
            "rate": float(cost),
            "currency": "USD",
            "start": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "end": (start + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "gpuHours": 1.0,
            "cost": float(cost),
            "final": True,
        },
    }


def _quota(limit: float = 100.0) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaQuota",
        "metadata": {"name": "ml"},
        "spec": {
            "team": "ml",
            "namespaces": ["ml"],
            "gpuQuota": {"maxGPUs": 16},
            "budget": {"monthlyBudget": limit, "hardLimit": True},
        },
    }


def _sku(rate: str) -> dict[str, Any]:
    return {"metadata": {"name": "l40"}, "spec": {"gpuType": "L40", "hourlyRate": float(rate)}}


def _runtime(costs: tuple[str, ...], rate: str, job: dict[str, Any]) -> Runtime:
    rt = Runtime(
        api=cast(Any, None), config=ReconcileConfig(admission_gate=True), clock=lambda: NOW
    )
    usage = {("ml", f"usage-{i}"): [_usage(i, c)] for i, c in enumerate(costs)}
    rt.indices.attach(
        {
            AIJOBS: {("ml", job["metadata"]["name"]): [job]},
            USAGE: usage,
            QUOTAS: {"ml": [_quota()]},
            TENANTS: {},
            SKUS: {"l40": [_sku(rate)]},
            GATE_BUDGETS: {},
        }
    )
    return rt


def test_spend_in_a_window_is_summed_in_decimal() -> None:
    start = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    runs = [MeteredRun.of_raw(_usage(i, c)) for i, c in enumerate(COSTS_99_70)]
    hours, cost = spend_in_window([r for r in runs if r is not None], start, NOW)
    assert cost == Decimal("99.70") and isinstance(cost, Decimal)
    assert hours == Decimal(3) and isinstance(hours, Decimal)
    records = [_usage(i, c) for i, c in enumerate(COSTS_100)]
    assert policies.spend(records, ["ml"], NOW)[1] == Decimal("100.00")


def test_the_estimate_is_exact_for_a_timeout_that_is_not_a_whole_hour() -> None:
    # 8 GPUs x 1 minute x 0.45 USD per GPU-hour is 0.06 USD, not 0.06000000000000000000000000002
    estimate = estimate_job(8, 60, Rate("l40", "L40", 0.45))
    assert estimate.cost == Decimal("0.06")
    assert estimate_job(3, 2400, Rate("l40", "L40", 0.45)).gpu_hours == Decimal(2)


def _check(rate: str, timeout: str) -> Any:
    body = make_job("fit").gpus(1).gpu_type("L40").timeout(timeout).obj()
    body["metadata"]["namespace"] = "ml"
    rt = _runtime(COSTS_99_70, rate, body)
    return gate.check_job(rt, GryviaAIJob.model_validate(body), body)


def test_a_job_that_reaches_the_limit_exactly_is_admitted() -> None:
    check = _check("0.30", "1h")  # 99.70 spent + 0.30 = 100.00 of 100.00 USD
    assert check is not None and check.estimate.cost == Decimal("0.30")
    assert not check.refused and check.checked, check.message()
    minute = _check("18", "1m")  # 1 GPU x 1 minute x 18 USD per GPU-hour = 0.30 USD
    assert minute is not None and not minute.refused, minute.message()


def test_a_job_one_cent_over_the_limit_is_refused() -> None:
    check = _check("0.31", "1h")
    assert check is not None and check.refused
    assert "99.70 of 100.00 USD spent" in check.message()
    assert "would take it to 100.01" in check.message()


def test_a_quota_spent_exactly_to_its_hard_limit_is_spent() -> None:
    body = make_job("next").gpus(1).gpu_type("L40").obj()
    rt = _runtime(COSTS_100, "1", body)
    [state] = policies.quota_states(rt)
    assert state.spent == Decimal("100.00")
    assert budget_spent(state)
    quota = GryviaQuota.model_validate(_quota())
    assert not budget_spent(quota_state(quota, [], spent=Decimal("99.99")))
