"""GryviaBudget rules: periods, proration, utilisation, state, grace, rollover, forecast and
alert crossings once per period."""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from gryvia_operator.api import GryviaBudget
from gryvia_operator.api.budget import BudgetPeriod
from gryvia_operator.api.budgetscope import Scope, resolve_scope
from gryvia_operator.api.periods import MeteredRun
from gryvia_operator.reconcile.budget import (
    UsageLine,
    budget_state,
    exceeded_since,
    forecast,
    period_bounds,
    previous_bounds,
    rollover_usd,
    spend,
    utilization,
)
from gryvia_operator.reconcile.budget_status import alert_record, compute, due_crossings

UTC = dt.UTC
NOW = dt.datetime(2026, 12, 16, 12, 0, tzinfo=UTC)  # a Wednesday


def _at(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def _budget(**spec: Any) -> GryviaBudget:
    body: dict[str, Any] = {
        "scope": {"type": "tenant", "name": "acme"},
        "period": {"type": "monthly"},
        "limits": {"costUSD": 10.0},
        "alerts": [{"threshold": 50}, {"threshold": 90}],
    }
    body.update(spec)
    return GryviaBudget.model_validate(
        {"metadata": {"name": "acme-monthly", "uid": "u1"}, "spec": body}
    )


def _line(
    cost: float,
    start: dt.datetime,
    end: dt.datetime | None,
    *,
    gpus: int = 1,
    hours: float | None = None,
    ns: str = "tenant-acme",
    tenant: str = "acme",
    gpu_type: str = "H100",
    currency: str = "USD",
    job: str = "j",
) -> UsageLine:
    span = ((end - start).total_seconds() / 3600 * gpus) if end else 0.0
    run = MeteredRun(start, end, gpus, span if hours is None else hours, cost)
    return UsageLine(ns, tenant, job, gpu_type, currency, run)


SCOPE = Scope(frozenset({"tenant-acme"}), frozenset({"acme"}))


@pytest.mark.parametrize(
    ("period", "start", "end"),
    [
        ({"type": "daily"}, _at(2026, 12, 16), _at(2026, 12, 17)),
        ({"type": "weekly"}, _at(2026, 12, 13), _at(2026, 12, 20)),  # Sunday by default
        ({"type": "weekly", "weekStart": "monday"}, _at(2026, 12, 14), _at(2026, 12, 21)),
        ({"type": "weekly", "weekStart": "wednesday"}, _at(2026, 12, 16), _at(2026, 12, 23)),
        ({"type": "weekly", "weekStart": "thursday"}, _at(2026, 12, 10), _at(2026, 12, 17)),
        ({"type": "monthly"}, _at(2026, 12, 1), _at(2027, 1, 1)),
        ({"type": "quarterly"}, _at(2026, 10, 1), _at(2027, 1, 1)),
        ({"type": "annual"}, _at(2026, 1, 1), _at(2027, 1, 1)),
        (
            {"type": "custom", "startDate": "2026-12-10", "endDate": "2026-12-16"},
            _at(2026, 12, 10),
            _at(2026, 12, 17),  # end date inclusive
        ),
    ],
)
def test_period_bounds(period: dict[str, Any], start: dt.datetime, end: dt.datetime) -> None:
    assert period_bounds(BudgetPeriod.model_validate(period), NOW) == (start, end)


def test_quarter_and_previous_periods() -> None:
    quarterly = BudgetPeriod.model_validate({"type": "quarterly"})
    assert period_bounds(quarterly, _at(2026, 5, 31, 23)) == (_at(2026, 4, 1), _at(2026, 7, 1))
    assert previous_bounds(quarterly, _at(2026, 4, 1)) == (_at(2026, 1, 1), _at(2026, 4, 1))
    monthly = BudgetPeriod.model_validate({"type": "monthly"})
    assert previous_bounds(monthly, _at(2026, 1, 1)) == (_at(2025, 12, 1), _at(2026, 1, 1))
    custom = BudgetPeriod.model_validate(
        {"type": "custom", "startDate": "2026-12-01", "endDate": "2026-12-01"}
    )
    assert previous_bounds(custom, _at(2026, 12, 1)) is None
    assert period_bounds(custom, NOW) == (_at(2026, 12, 1), _at(2026, 12, 2))


def test_weekly_on_the_start_day_itself_starts_that_day() -> None:
    sunday = BudgetPeriod.model_validate({"type": "weekly"})
    assert period_bounds(sunday, _at(2026, 12, 13, 0, 0))[0] == _at(2026, 12, 13)
    assert period_bounds(sunday, _at(2026, 12, 12, 23, 59))[0] == _at(2026, 12, 6)


def test_spend_prorates_a_record_straddling_the_period_start_and_counts_open_ones() -> None:
    straddling = _line(8.0, _at(2026, 11, 30, 22), _at(2026, 12, 1, 2), job="a")  # half in
    inside = _line(1.5, _at(2026, 12, 2), _at(2026, 12, 2, 1), job="b")
    open_run = _line(0.5, _at(2026, 12, 16, 11), None, hours=1.0, job="c")  # open, 1 h so far
    other = _line(100.0, _at(2026, 12, 2), _at(2026, 12, 2, 1), ns="x", tenant="x", job="d")
    before = _line(100.0, _at(2026, 11, 2), _at(2026, 11, 2, 1), job="e")
    used = spend(
        [straddling, inside, open_run, other, before], SCOPE, _at(2026, 12, 1), _at(2027, 1, 1)
    )
    assert used.cost_usd == Decimal("6.0")
    assert used.gpu_hours == pytest.approx(2 + 1 + 1)
    assert used.gpu_type_hours == {"H100": pytest.approx(4.0)}
    assert used.jobs == {"a", "b", "c"}
    assert not used.mixed_currency


def test_a_record_of_the_tenant_in_another_namespace_counts() -> None:
    line = _line(2.0, _at(2026, 12, 2), _at(2026, 12, 2, 1), ns="elsewhere")
    assert spend([line], SCOPE, _at(2026, 12, 1), _at(2027, 1, 1)).cost_usd == Decimal("2.0")


def test_scopes() -> None:
    tenant = resolve_scope(_budget(), {}, ["acme"])
    assert tenant.namespaces == {"tenant-acme"} and tenant.tenants == {"acme"}
    ns = resolve_scope(_budget(scope={"type": "namespace", "name": "ml"}), {}, [])
    assert ns.namespaces == {"ml"} and not ns.tenants
    team = resolve_scope(
        _budget(scope={"type": "team", "name": "vision"}), {"vision": ["v1", "v2"]}, ["vision"]
    )
    assert team.namespaces == {"v1", "v2", "tenant-vision"} and team.tenants == {"vision"}
    user = resolve_scope(_budget(scope={"type": "user", "name": "ada"}), {}, [])
    assert user.users == {"ada"} and not user.namespaces and not user.unsupported
    assert user.covers_job("anywhere", "ada") and not user.covers_job("anywhere", "bob")
    project = resolve_scope(_budget(scope={"type": "project", "name": "llm"}), {}, [])
    assert project.covers_job("ns", "bob", "llm") and not project.covers_job("ns", "bob", "cv")
    assert not project.covers_job("ns", "", "")


def test_utilization_is_the_largest_percentage_and_mixed_currency_is_not_enforced() -> None:
    budget = _budget(limits={"costUSD": 10.0, "gpuHours": 4.0, "gpuTypeHours": {"h100": 1.0}})
    used = spend([_line(2.0, _at(2026, 12, 2), _at(2026, 12, 2, 2))], SCOPE, _at(2026, 12, 1), NOW)
    util = utilization(budget, used, Decimal(10))
    assert (util.cost, util.gpu_hours, util.gpu_types) == (20.0, 50.0, {"h100": 200.0})
    assert util.percent == 200.0
    euro = _line(9.0, _at(2026, 12, 2), _at(2026, 12, 2, 1), currency="EUR")
    mixed = spend([euro], SCOPE, _at(2026, 12, 1), NOW)
    assert mixed.mixed_currency and mixed.cost_usd == 0
    assert utilization(_budget(), mixed, Decimal(10)).cost == 0.0


def test_states_grace_and_block_threshold() -> None:
    report = _budget()
    assert budget_state(report, 10, None, NOW) == "active"
    assert budget_state(report, 50, None, NOW) == "warning"  # lowest threshold
    assert budget_state(_budget(alerts=None), 79.9, None, NOW) == "active"  # 80 % default
    assert budget_state(_budget(alerts=None), 80, None, NOW) == "warning"
    assert budget_state(report, 100, NOW, NOW) == "exceeded"  # enforcement off
    block = _budget(enforcement={"enabled": True, "action": "block"})
    assert budget_state(block, 100, NOW, NOW) == "blocked"
    assert budget_state(block, 99, None, NOW) == "warning"
    graced = _budget(enforcement={"enabled": True, "action": "block", "gracePeriod": "2h"})
    since = NOW - dt.timedelta(hours=1)
    assert budget_state(graced, 120, since, NOW) == "exceeded"
    assert budget_state(graced, 120, since, NOW + dt.timedelta(hours=1)) == "blocked"
    early = _budget(
        alerts=[{"threshold": 75, "actions": ["notify", "block"]}],
        enforcement={"enabled": True, "action": "block"},
    )
    assert budget_state(early, 75, None, NOW) == "blocked"


def test_exceeded_since_is_kept_within_the_period_only() -> None:
    start = _at(2026, 12, 1)
    earlier = _at(2026, 12, 5)
    assert exceeded_since(earlier, start, 101, NOW) == earlier
    assert exceeded_since(_at(2026, 11, 30), start, 101, NOW) == NOW  # last period's
    assert exceeded_since(earlier, start, 99, NOW) is None


def test_rollover_carries_the_unused_limit_capped() -> None:
    budget = _budget(rollover={"enabled": True, "maxRolloverPercent": 25})
    last = spend(
        [_line(4.0, _at(2026, 11, 2), _at(2026, 11, 2, 1))],
        SCOPE,
        _at(2026, 11, 1),
        _at(2026, 12, 1),
    )
    assert rollover_usd(budget, last) == Decimal("2.50")  # 6 unused, capped at 25 % of 10
    full = _budget(rollover={"enabled": True})
    assert rollover_usd(full, last) == Decimal("6.00")
    assert rollover_usd(_budget(), last) == 0  # off
    over = spend(
        [_line(40.0, _at(2026, 11, 2), _at(2026, 11, 2, 1))],
        SCOPE,
        _at(2026, 11, 1),
        _at(2026, 12, 1),
    )
    assert rollover_usd(full, over) == 0


def test_forecast_projects_linearly_and_dates_the_exhaustion() -> None:
    start, end = _at(2026, 12, 1), _at(2026, 12, 31)  # 30 days
    now = _at(2026, 12, 11)  # one third
    used = spend([_line(6.0, _at(2026, 12, 2), _at(2026, 12, 2, 1))], SCOPE, start, end)
    fc = forecast(used, Decimal(10), None, start, end, now)
    assert fc.cost_usd == Decimal("18.00")
    assert not fc.sufficient
    assert fc.exhaustion == dt.date(2026, 12, 17)  # 10 USD at 0.6 USD/day: day 16.7
    calm = forecast(used, Decimal(100), None, start, end, now)
    assert calm.sufficient and calm.exhaustion is None
    typed = forecast(used, None, None, start, end, now, {k: 0.5 for k in used.gpu_type_hours})
    assert used.gpu_type_hours and not typed.sufficient and typed.exhaustion is not None
    roomy = forecast(used, None, None, start, end, now, {k: 100.0 for k in used.gpu_type_hours})
    assert roomy.sufficient and roomy.exhaustion is None


def _status_with(budget: GryviaBudget, lines: list[UsageLine], now: dt.datetime = NOW) -> Any:
    return compute(budget, SCOPE, lines, [], now)


def test_alerts_fire_once_per_threshold_and_period() -> None:
    budget = _budget()
    six = _line(6.0, _at(2026, 12, 2), _at(2026, 12, 2, 1), job="a")
    four = _line(4.0, _at(2026, 12, 3), _at(2026, 12, 3, 1), job="b")
    status, crossings = _status_with(budget, [six])
    assert [c.threshold for c in crossings] == [50]
    assert crossings[0].key == "u1/2026-12-01/50"
    assert "6.00 of 10.00 USD" in crossings[0].message
    status["alerts"] = [alert_record(c, dt.date(2026, 12, 1), NOW) for c in crossings]
    recorded = GryviaBudget.model_validate({**budget.model_dump(by_alias=True), "status": status})
    again, none = _status_with(recorded, [six])
    assert none == [] and again["state"] == "warning"
    _, next_ones = _status_with(recorded, [six, four])
    assert [c.threshold for c in next_ones] == [90]
    # next month: this month's records are dropped once delivered, thresholds fire anew
    january = _at(2027, 1, 5)
    jan_line = _line(9.5, _at(2027, 1, 2), _at(2027, 1, 2, 1))
    for record in status["alerts"]:
        record["delivered"] = True
    recorded = GryviaBudget.model_validate({**budget.model_dump(by_alias=True), "status": status})
    jan_status, jan = _status_with(recorded, [six, jan_line], january)
    assert [c.key for c in jan] == ["u1/2027-01-01/50", "u1/2027-01-01/90"]
    assert jan_status["alerts"] == []


def test_a_jump_past_both_thresholds_gives_one_each() -> None:
    _, crossings = _status_with(_budget(), [_line(12.0, _at(2026, 12, 2), _at(2026, 12, 2, 1))])
    assert [c.threshold for c in crossings] == [50, 90]


def test_status_fields() -> None:
    budget = _budget(enforcement={"enabled": True, "action": "block"})
    status, _ = _status_with(budget, [_line(10.0, _at(2026, 12, 2), _at(2026, 12, 2, 1))])
    assert status["state"] == "blocked"
    assert status["usage"]["costUSD"] == 10.0 and status["usage"]["jobCount"] == 1
    assert status["utilization"] == {"percent": 100.0, "costPercent": 100.0}
    assert status["currentPeriod"] == {
        "startDate": "2026-12-01",
        "endDate": "2026-12-31",
        "daysRemaining": 16,
        "costLimitUSD": 10.0,
    }
    assert status["exceededSince"] == "2026-12-16T12:00:00Z"
    assert status["forecast"]["budgetSufficient"] is False
    assert status["conditions"][0]["reason"] == "Enforced"
    GryviaBudget.model_validate({**budget.model_dump(by_alias=True), "status": status})


def _attributed(cost: float, user: str, project: str) -> UsageLine:
    line = _line(cost, _at(2026, 12, 2), _at(2026, 12, 2, 1), ns="tenant-acme")
    return dataclasses.replace(line, user=user, project=project, job=f"{user}-{project}")


def test_user_and_project_budgets_count_only_their_own_records() -> None:
    lines = [
        _attributed(2.0, "ada", "llm"),
        _attributed(3.0, "bob", "llm"),
        _attributed(5.0, "ada", "vision"),
        _attributed(7.0, "", ""),  # metered before records carried a submitter
    ]
    month = (_at(2026, 12, 1), _at(2027, 1, 1))
    ada = resolve_scope(_budget(scope={"type": "user", "name": "ada"}), {}, [])
    llm = resolve_scope(_budget(scope={"type": "project", "name": "llm"}), {}, [])
    assert spend(lines, ada, *month).cost_usd == Decimal("7.0")
    assert spend(lines, llm, *month).cost_usd == Decimal("5.0")


def test_a_project_budget_is_enforceable_and_reaches_its_limit() -> None:
    budget = _budget(scope={"type": "project", "name": "llm"}, limits={"costUSD": 4.0})
    scope = resolve_scope(budget, {}, [])
    lines = [_attributed(2.0, "ada", "llm"), _attributed(3.0, "bob", "llm")]
    status, _ = compute(budget, scope, lines, [], NOW)
    assert status["conditions"][0]["reason"] != "ScopeUnsupported"
    assert status["usage"]["costUSD"] == 5.0
    assert status["state"] != "active"


def test_notify_less_thresholds_are_recorded_but_not_sent() -> None:
    budget = _budget(alerts=[{"threshold": 50, "actions": ["block"]}])
    (crossing,) = due_crossings(budget, 60, dt.date(2026, 12, 1), [], "x")
    assert not crossing.notify
    record = alert_record(crossing, dt.date(2026, 12, 1), NOW)
    assert record["delivered"] is True and record["event"] is True


def test_float_noise_does_not_keep_a_spent_budget_under_the_limit() -> None:
    lines = [
        _line(6 / 3600 * 3600 - 1e-12, _at(2026, 12, 2), _at(2026, 12, 2, 1), job="a"),
        _line(4 / 3600 * 3600 - 1e-12, _at(2026, 12, 3), _at(2026, 12, 3, 1), job="b"),
    ]
    budget = _budget(enforcement={"enabled": True, "action": "block"})
    status, _ = _status_with(budget, lines)
    assert status["usage"]["costUSD"] == 10.0 and status["state"] == "blocked"


def test_a_reached_limit_is_dated_the_day_it_was_seen_reached_not_the_linear_estimate() -> None:
    # a burst of 20.00 on the 14th: linearly, 10.00 would have been reached on the 8th
    budget = _budget()
    burst = [_line(20.0, _at(2026, 12, 14), _at(2026, 12, 14, 1))]
    first, _ = compute(budget, SCOPE, burst, [], _at(2026, 12, 14, 2))
    assert first["forecast"]["estimatedExhaustionDate"] == "2026-12-14"
    seen = GryviaBudget.model_validate({**budget.model_dump(by_alias=True), "status": first})
    later, _ = compute(seen, SCOPE, burst, [], NOW)
    assert later["forecast"]["estimatedExhaustionDate"] == "2026-12-14"
    under = [_line(6.0, _at(2026, 12, 2), _at(2026, 12, 2, 1))]  # not reached yet: projected
    projected, _ = compute(budget, SCOPE, under, [], NOW)
    assert projected["forecast"]["estimatedExhaustionDate"] == "2026-12-26"
