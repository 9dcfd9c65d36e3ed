"""The admission gate's budget rule (`gryvia_operator.api.budgetgate`): estimate, hard
budgets in scope, refuse / unchecked / admit."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from gryvia_operator.api import GryviaBudget, GryviaQuota
from gryvia_operator.api.budgetgate import (
    HardBudget,
    budget_hard_budget,
    budget_in_scope,
    check_budgets,
    estimate_job,
    hard_budgets,
    money,
    quota_hard_budget,
)
from gryvia_operator.api.pricing import Rate

NOW = dt.datetime(2026, 12, 1, 18, 0, tzinfo=dt.UTC)
L40 = Rate("l40", "L40", 2.5)


def _quota(name: str = "ml", hard: bool | None = True, limit: float | None = 10.0) -> GryviaQuota:
    budget: dict[str, Any] = {"monthlyBudget": limit}
    if hard is not None:
        budget["hardLimit"] = hard
    return GryviaQuota.model_validate(
        {
            "metadata": {"name": name},
            "spec": {
                "team": name,
                "namespaces": ["ml"],
                "gpuQuota": {"maxGPUs": 16},
                "budget": budget,
            },
        }
    )


def _budget(
    name: str = "b1",
    scope: tuple[str, str] = ("namespace", "ml"),
    action: str = "block",
    enabled: bool = True,
    cost: float | None = 10.0,
    gpu_hours: float | None = None,
    status: dict[str, Any] | None = None,
) -> GryviaBudget:
    limits: dict[str, Any] = {}
    if cost is not None:
        limits["costUSD"] = cost
    if gpu_hours is not None:
        limits["gpuHours"] = gpu_hours
    return GryviaBudget.model_validate(
        {
            "metadata": {"name": name},
            "spec": {
                "scope": {"type": scope[0], "name": scope[1]},
                "period": {"type": "monthly"},
                "limits": limits,
                "enforcement": {"enabled": enabled, "action": action},
            },
            "status": status,
        }
    )


def _spent(cost: float, hours: float = 0.0, end: str = "2026-12-31") -> dict[str, Any]:
    return {
        "usage": {"costUSD": cost, "gpuHours": hours},
        "currentPeriod": {"startDate": "2026-12-01", "endDate": end},
    }


def test_estimate_is_gpus_times_timeout_hours_times_rate() -> None:
    est = estimate_job(4, 2 * 3600, L40)
    assert est.cost == Decimal("20.0")
    assert est.gpu_hours == Decimal(8)
    assert "4 GPUs x 2 h x 2.50 USD per GPU-hour" in est.describe()
    assert money(est.cost) == "20.00"


def test_estimate_text_rounds_the_hours_of_a_short_timeout() -> None:
    est = estimate_job(4, 60, L40)
    assert "4 GPUs x 0.0167 h x 2.50 USD per GPU-hour, its timeout of 0.0167 h" in est.describe()


def test_estimate_without_timeout_uses_default_hours() -> None:
    assert estimate_job(2, None, L40).cost == Decimal("5.0")
    assert estimate_job(2, None, L40, default_hours=Decimal(3)).cost == Decimal("15.0")
    assert "no timeout set" in estimate_job(2, None, L40).basis


def test_estimate_without_sku_is_zero_and_unknown_price_is_none() -> None:
    assert estimate_job(8, 3600, None).cost == Decimal(0)
    broken = estimate_job(8, 3600, L40, price_problem="catalog unreadable")
    assert broken.cost is None
    assert estimate_job(1, 3600, Rate("x", "L40", 1.0, "EUR")).cost is None


def test_estimate_alone_over_remaining_budget_is_refused_naming_budget_spend_limit() -> None:
    budget = HardBudget("GryviaBudget", "budget b1", Decimal(10), Decimal(4))
    check = check_budgets(estimate_job(4, 2 * 3600, L40), [budget])
    assert check.refused
    text = check.message()
    assert "budget b1" in text and "4.00 of 10.00 USD spent" in text and "20.00" in text


def test_reaching_the_limit_exactly_is_admitted() -> None:
    budget = HardBudget("GryviaBudget", "budget b1", Decimal(10), Decimal(5))
    check = check_budgets(estimate_job(2, 3600, L40), [budget])
    assert not check.refused and check.checked


def test_one_cent_over_is_refused() -> None:
    budget = HardBudget("GryviaBudget", "budget b1", Decimal(10), Decimal("5.01"))
    assert check_budgets(estimate_job(2, 3600, L40), [budget]).refused


def test_cpu_only_job_is_never_refused_nor_unchecked() -> None:
    budget = HardBudget("GryviaBudget", "budget b1", Decimal(10), None, problem="x")
    check = check_budgets(estimate_job(0, 3600, L40), [budget])
    assert not check.refused and check.checked


def test_unknown_price_is_unchecked_not_passed() -> None:
    budget = HardBudget("GryviaBudget", "budget b1", Decimal(10), Decimal(0))
    est = estimate_job(1, 3600, None, price_problem="the GPU catalog cannot be read")
    check = check_budgets(est, [budget])
    assert not check.refused and not check.checked
    assert "catalog cannot be read" in check.message()


def test_unreadable_spend_is_unchecked() -> None:
    budget = HardBudget("GryviaBudget", "budget b1", Decimal(10), None, problem="not computed")
    check = check_budgets(estimate_job(1, 3600, L40), [budget])
    assert check.unchecked == ("budget b1: not computed",)


def test_known_overrun_wins_over_unchecked_budget() -> None:
    bad = HardBudget("GryviaBudget", "budget a", Decimal(10), None, problem="not computed")
    over = HardBudget("GryviaQuota", "quota q", Decimal(1), Decimal(0))
    check = check_budgets(estimate_job(4, 3600, L40), [bad, over])
    assert check.refused and "quota q" in check.message()


def test_non_usd_rate_is_not_enforced_and_not_unchecked() -> None:
    budget = HardBudget("GryviaBudget", "budget b1", Decimal(1), Decimal(0))
    check = check_budgets(estimate_job(8, 3600, Rate("x", "L40", 9.0, "EUR")), [budget])
    assert not check.refused and check.checked


def test_gpu_hour_limit_is_checked_with_gpu_hours() -> None:
    budget = HardBudget("GryviaBudget", "budget b1", None, None, Decimal(10), Decimal(4))
    check = check_budgets(estimate_job(4, 2 * 3600, None), [budget])
    assert check.refused and "GPU-hours" in check.message()


def test_quota_hard_budget_only_with_hard_limit() -> None:
    assert quota_hard_budget(_quota(hard=False), 0) is None
    assert quota_hard_budget(_quota(hard=None), 0) is None
    assert quota_hard_budget(_quota(limit=None), 0) is None
    found = quota_hard_budget(_quota(), 3.5)
    assert found is not None
    assert found.limit_usd == Decimal(10) and found.spent_usd == Decimal("3.5")
    assert found.name == "quota ml (team ml)"


def test_budget_hard_only_when_enforced_with_block() -> None:
    assert budget_hard_budget(_budget(action="warn", status=_spent(1)), NOW) is None
    assert budget_hard_budget(_budget(enabled=False, status=_spent(1)), NOW) is None
    assert budget_hard_budget(_budget(cost=None, status=_spent(1)), NOW) is None
    found = budget_hard_budget(_budget(status=_spent(4)), NOW)
    assert found is not None and found.spent_usd == Decimal(4) and not found.problem


def test_budget_limit_includes_the_rollover_the_controller_computed() -> None:
    status = _spent(4)
    status["currentPeriod"]["costLimitUSD"] = 12.5  # limits.costUSD 10 + 2.5 carried over
    found = budget_hard_budget(_budget(status=status), NOW)
    assert found is not None and found.limit_usd == Decimal("12.5")
    assert budget_hard_budget(_budget(status=_spent(4)), NOW).limit_usd == Decimal(10)  # type: ignore[union-attr]


def test_budget_spend_unreadable_without_status_or_from_an_ended_period() -> None:
    missing = budget_hard_budget(_budget(), NOW)
    assert missing is not None and missing.spent_usd is None
    assert "status.usage.costUSD" in missing.problem
    stale = budget_hard_budget(_budget(status=_spent(1, end="2026-11-30")), NOW)
    assert stale is not None and stale.spent_usd is None and "2026-11-30" in stale.problem


@pytest.mark.parametrize(
    ("scope", "namespace", "tenant", "teams", "expected"),
    [
        (("namespace", "ml"), "ml", None, set(), True),
        (("namespace", "ml"), "other", None, set(), False),
        (("tenant", "vision"), "tenant-vision", "vision", set(), True),
        (("tenant", "vision"), "tenant-vision", None, set(), True),
        (("tenant", "vision"), "ml", None, set(), False),
        (("team", "ml"), "ns1", None, {"ml"}, True),
        (("team", "ml"), "tenant-ml", "ml", set(), True),
        (("team", "ml"), "ns1", None, {"cv"}, False),
    ],
)
def test_budget_scope(
    scope: tuple[str, str], namespace: str, tenant: str | None, teams: set[str], expected: bool
) -> None:
    assert budget_in_scope(_budget(scope=scope), namespace, tenant, teams) is expected


def test_hard_budgets_lists_covering_quotas_then_budgets_in_scope() -> None:
    budgets = [
        _budget("z", status=_spent(1)),
        _budget("a", scope=("namespace", "elsewhere"), status=_spent(1)),
        _budget("warn", action="warn", status=_spent(1)),
    ]
    found = hard_budgets(
        "ml", None, [(_quota(), 2.0), (_quota("soft", hard=False), 0)], budgets, NOW
    )
    assert [h.name for h in found] == ["quota ml (team ml)", "budget z"]


def test_team_budget_matches_through_a_quota_covering_the_namespace() -> None:
    found = hard_budgets(
        "ml",
        None,
        [(_quota(hard=False), 0)],
        [_budget(scope=("team", "ml"), status=_spent(0))],
        NOW,
    )
    assert [h.name for h in found] == ["budget b1"]
