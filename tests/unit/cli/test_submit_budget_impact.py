"""`gryvia submit`'s budget impact: the admission gate's rule on the client's inputs."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gryvia_cli.core.estimate import estimate_cost
from gryvia_cli.core.jobs import summarize_job
from gryvia_operator.api import GryviaBudget, GryviaGpuSku, GryviaQuota
from tests.builders import make_job

NOW = dt.datetime(2026, 12, 1, 18, tzinfo=dt.UTC)
SKUS = [
    GryviaGpuSku.model_validate(
        {"metadata": {"name": "l40"}, "spec": {"gpuType": "L40", "hourlyRate": 2.5}}
    )
]


def _job(gpus: int, timeout: str | None = None) -> Any:
    builder = make_job("train", "ml").gpus(gpus).gpu_type("L40")
    if timeout:
        builder = builder.timeout(timeout)
    return summarize_job(builder.obj())


def _budget(status: dict[str, Any] | None) -> GryviaBudget:
    return GryviaBudget.model_validate(
        {
            "metadata": {"name": "cap"},
            "spec": {
                "scope": {"type": "namespace", "name": "ml"},
                "period": {"type": "monthly"},
                "limits": {"costUSD": 10},
                "enforcement": {"enabled": True, "action": "block"},
            },
            "status": status,
        }
    )


def _quota(hard: bool, spent: float | None) -> GryviaQuota:
    status = None if spent is None else {"budgetStatus": {"spentThisMonth": spent}}
    return GryviaQuota.model_validate(
        {
            "metadata": {"name": "q"},
            "spec": {
                "team": "ml",
                "namespaces": ["ml"],
                "gpuQuota": {"maxGPUs": 16},
                "budget": {"monthlyBudget": 10, "hardLimit": hard},
            },
            "status": status,
        }
    )


def test_within_budget_shows_the_impact_and_no_warning() -> None:
    est = estimate_cost(_job(1, "1h"), "ml", SKUS, [], [], [_budget({"usage": {"costUSD": 2}})])
    assert est is not None and est.warnings == ()
    assert (
        "  budget impact on budget cap: 2.00 spent + 2.50 = 4.50 of 10.00 USD (within the "
        "limit)" in est.lines()
    )


def test_over_budget_warns_with_the_gates_words() -> None:
    est = estimate_cost(_job(4, "2h"), "ml", SKUS, [], [], [_budget({"usage": {"costUSD": 0}})])
    assert est is not None and est.impact is not None and est.impact.refused
    assert "budget cap: 0.00 of 10.00 USD spent" in est.warnings[0]


def test_budget_without_spend_is_reported_unchecked() -> None:
    est = estimate_cost(_job(1), "ml", SKUS, [], [], [_budget(None)], NOW)
    assert est is not None
    assert "could not check" in est.warnings[0] and "status.usage.costUSD" in est.warnings[0]
    assert any("not checked" in line for line in est.lines())


def test_hard_quota_uses_the_gate_and_soft_quota_keeps_its_warning() -> None:
    hard = estimate_cost(_job(8), "ml", SKUS, [], [_quota(True, 5.0)])
    assert hard is not None and "quota q (team ml)" in hard.warnings[0]
    assert "hard budget over its limit" in hard.warnings[0]
    soft = estimate_cost(_job(8), "ml", SKUS, [], [_quota(False, 5.0)])
    assert soft is not None and soft.warnings == (
        "the estimate (20.00 USD for one hour, no timeout set) would cross the monthly budget "
        "of team ml: 5.00 of 10.00 USD spent",
    )
