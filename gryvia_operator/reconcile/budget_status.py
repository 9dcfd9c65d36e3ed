"""One GryviaBudget's status and its due alerts, from the usage and jobs in scope. Pure.

`compute` returns the status dict (camelCase, as the CRD stores it) and the alert crossings
not yet recorded in this period; `reconcile_budget` records them in it and says what to write
(`settled`: the stored status itself while nothing but the clock moved). Each threshold fires
once per period: a crossing is known by its key `<budget uid>/<period start>/<threshold>` in
`status.alerts`, and the handler sends it only once that record was written
(`handlers/budget.py`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gryvia_operator.api.budget import GryviaBudget
from gryvia_operator.api.budgetscope import Scope
from gryvia_operator.api.helpers import DurationError
from gryvia_operator.reconcile.budget import (
    Spend,
    UsageLine,
    block_threshold,
    budget_state,
    exceeded_since,
    forecast,
    grace_seconds,
    period_bounds,
    previous_bounds,
    rollover_usd,
    spend,
    utilization,
)
from gryvia_operator.reconcile.budget_gate import in_flight
from gryvia_operator.reconcile.quotas import JobView

MAX_ALERT_RECORDS = 50
"""Alert records kept in status (this period's, plus undelivered older ones)."""
FORECAST_REFRESH_SECONDS = 60.0
"""A status whose only change is the forecast (it moves with the clock) is rewritten at most
this often."""


def _ts(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_ts(value: Any) -> dt.datetime | None:
    if not value:
        return None
    try:
        when = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def alert_key(uid: str, period_start: dt.date, threshold: float) -> str:
    """The idempotency key of one crossing: `<budget uid>/<YYYY-MM-DD>/<threshold>`."""
    return f"{uid}/{period_start.isoformat()}/{threshold:g}"


@dataclass(frozen=True)
class Crossing:
    """A threshold reached in this period and not yet recorded."""

    threshold: float
    key: str
    message: str
    notify: bool
    """actions include notify (or are unset): Event and POST; else recorded only."""


def due_crossings(
    budget: GryviaBudget,
    percent: float,
    period_start: dt.date,
    recorded: Iterable[Mapping[str, Any]],
    summary: str,
) -> list[Crossing]:
    """The thresholds `percent` has reached whose crossing this period is not in `recorded`
    (status.alerts entries), lowest first. A jump past several thresholds gives one each."""
    known = {str(r.get("key") or "") for r in recorded}
    out = []
    for alert in sorted(budget.spec.alerts or [], key=lambda a: a.threshold):
        key = alert_key(budget.metadata.uid or budget.name, period_start, alert.threshold)
        if percent < alert.threshold or key in known:
            continue
        notify = alert.actions is None or "notify" in alert.actions
        message = f"budget {budget.name} crossed {alert.threshold:g} %: {summary}"
        out.append(Crossing(alert.threshold, key, message[:1024], notify))
        known.add(key)
    return out


def alert_record(crossing: Crossing, period_start: dt.date, now: dt.datetime) -> dict[str, Any]:
    """The status.alerts entry of a crossing, recorded before anything is sent."""
    return {
        "timestamp": _ts(now),
        "threshold": crossing.threshold,
        "message": crossing.message,
        "periodStart": period_start.isoformat(),
        "key": crossing.key,
        "event": not crossing.notify,
        "delivered": not crossing.notify,
        "attempts": 0,
    }


def kept_alerts(
    records: Iterable[Mapping[str, Any]], period_start: dt.date
) -> list[dict[str, Any]]:
    """This period's records and older undelivered ones (still retried), newest last."""
    keep = [
        dict(r)
        for r in records
        if r.get("periodStart") == period_start.isoformat() or not r.get("delivered")
    ]
    return keep[-MAX_ALERT_RECORDS:]


def concurrency(jobs: Iterable[JobView], scope: Scope) -> tuple[int, int]:
    """(jobs, GPUs) with GPUs in flight now in scope (what a throttle counts, `in_flight`)."""
    held = [
        j
        for j in jobs
        if j.gpus and in_flight(j) and scope.covers_job(j.namespace, j.user, j.project)
    ]
    return len(held), sum(j.gpus for j in held)


def _money(value: Decimal) -> float:
    return float(value.quantize(Decimal("0.0001")))


def _summary(used: Spend, cost_limit: Decimal | None, percent: float) -> str:
    text = f"{percent:.1f} % used"
    if cost_limit is not None:
        text += f", {used.cost_usd:.2f} of {cost_limit:.2f} USD"
    return text + f", {used.gpu_hours:.2f} GPU-hours"


def compute(
    budget: GryviaBudget,
    scope: Scope,
    lines: Sequence[UsageLine],
    jobs: Iterable[JobView],
    now: dt.datetime,
) -> tuple[dict[str, Any], list[Crossing]]:
    """The budget's status at `now` and its due crossings.

    Carries over from the stored status: `alerts` (fired crossings) and `exceededSince`. A
    scope that cannot be measured or an invalid grace period gives state active with condition
    Enforceable=False naming the reason, and no crossings.
    """
    old = (
        budget.status.model_dump(mode="json", by_alias=True, exclude_none=True)
        if budget.status
        else {}
    )
    start, end = period_bounds(budget.spec.period, now)
    first, last = start.date(), (end - dt.timedelta(days=1)).date()
    days_left = max((end.date() - now.date()).days, 0) if now < end else 0
    period = {
        "startDate": first.isoformat(),
        "endDate": last.isoformat(),
        "daysRemaining": days_left,
    }
    problem = scope.unsupported
    try:
        grace_seconds(budget)
    except DurationError as exc:
        problem = str(exc)
    limits = budget.spec.limits
    used = spend(lines, scope, start, end)
    cost_limit: Decimal | None = None
    if limits is not None and limits.cost_usd is not None:
        prev = previous_bounds(budget.spec.period, start)
        carried = rollover_usd(budget, spend(lines, scope, *prev) if prev else None)
        cost_limit = Decimal(repr(limits.cost_usd)) + carried
        period["costLimitUSD"] = _money(cost_limit)
        if carried:
            period["rolloverUSD"] = _money(carried)
    running, gpus = concurrency(jobs, scope)
    util = utilization(budget, used, cost_limit)
    percent = 0.0 if problem else util.percent
    since = exceeded_since(_parse_ts(old.get("exceededSince")), start, percent, now)
    state = "active" if problem else budget_state(budget, percent, since, now)
    fc = forecast(
        used,
        cost_limit,
        limits.gpu_hours if limits else None,
        start,
        end,
        now,
        (limits.gpu_type_hours or {}) if limits else None,
    )
    usage: dict[str, Any] = {
        "costUSD": _money(used.cost_usd),
        "gpuHours": round(used.gpu_hours, 4),
        "gpuTypeHours": {k: round(v, 4) for k, v in sorted(used.gpu_type_hours.items())},
        "jobCount": len(used.jobs),
        "currentConcurrentJobs": running,
        "currentConcurrentGPUs": gpus,
        "currencies": sorted(used.currencies),
    }
    utilization_out: dict[str, Any] = {"percent": round(percent, 2)}
    if util.cost is not None:
        utilization_out["costPercent"] = round(util.cost, 2)
    if util.gpu_hours is not None:
        utilization_out["gpuHoursPercent"] = round(util.gpu_hours, 2)
    if util.gpu_types:
        utilization_out["gpuTypeHoursPercent"] = {k: round(v, 2) for k, v in util.gpu_types.items()}
    if limits is not None and limits.max_concurrent_jobs:
        utilization_out["jobsPercent"] = round(100.0 * running / limits.max_concurrent_jobs, 2)
    forecast_out: dict[str, Any] = {"budgetSufficient": fc.sufficient}
    if fc.cost_usd is not None:
        forecast_out["projectedCostUSD"] = _money(fc.cost_usd)
    if fc.gpu_hours is not None:
        forecast_out["projectedGPUHours"] = fc.gpu_hours
    # once reached, the date is the day it was seen reached, not the linear estimate (which
    # puts a late burst's crossing back towards the period's first day)
    exhaustion = since.date() if since is not None else fc.exhaustion
    if exhaustion is not None:
        forecast_out["estimatedExhaustionDate"] = exhaustion.isoformat()
    summary = _summary(used, cost_limit, percent)
    alerts = kept_alerts(old.get("alerts") or [], first)
    crossings = [] if problem else due_crossings(budget, percent, first, alerts, summary)
    message = problem or _state_message(budget, state, summary, since)
    if used.mixed_currency:
        message += f"; currencies {', '.join(sorted(used.currencies))}: cost reported, not enforced"
    status: dict[str, Any] = {
        "currentPeriod": period,
        "usage": usage,
        "utilization": utilization_out,
        "state": state,
        "alerts": alerts,
        "forecast": forecast_out,
        "message": message,
        "conditions": [_enforceable(budget, problem, used.mixed_currency, old, now)],
    }
    if since is not None:
        status["exceededSince"] = _ts(since)
    if budget.metadata.generation is not None:
        status["observedGeneration"] = budget.metadata.generation
    return status, crossings


def _state_message(
    budget: GryviaBudget, state: str, summary: str, since: dt.datetime | None
) -> str:
    enf = budget.spec.enforcement
    blocking = enf is not None and enf.enabled and enf.action == "block"
    if state == "exceeded" and blocking and since is not None:
        until = since + dt.timedelta(seconds=grace_seconds(budget))
        return f"{state}: {summary}; blocks new jobs from {_ts(until)} (grace period)"
    if state == "blocked":
        point = block_threshold(budget)
        return f"{state}: {summary}; new jobs in scope are rejected (from {point:g} %)"
    return f"{state}: {summary}"


def _enforceable(
    budget: GryviaBudget, problem: str, mixed: bool, old: Mapping[str, Any], now: dt.datetime
) -> dict[str, Any]:
    enf = budget.spec.enforcement
    if problem:
        reason, ok, text = "InvalidSpec", "False", problem
    elif mixed:
        ok, reason, text = (
            "False",
            "MixedCurrency",
            "records in several currencies: cost not enforced",
        )
    elif enf is None or not enf.enabled:
        ok, reason, text = "True", "ReportOnly", "enforcement is off: the budget only reports"
    else:
        ok, reason, text = "True", "Enforced", f"enforcement {enf.action}"
    previous = next(
        (c for c in old.get("conditions") or [] if c.get("type") == "Enforceable"), None
    )
    since = (
        previous.get("lastTransitionTime") if previous and previous.get("status") == ok else None
    )
    return {
        "type": "Enforceable",
        "status": ok,
        "reason": reason,
        "message": text,
        "lastTransitionTime": since or _ts(now),
    }


def comparable(status: Mapping[str, Any]) -> Any:
    """The status without what changes on every pass (times, days left), to tell a real
    change from a refresh."""
    out = {k: v for k, v in status.items() if k not in ("lastUpdated",)}
    out["conditions"] = [
        {k: v for k, v in c.items() if k != "lastTransitionTime"}
        for c in status.get("conditions") or []
    ]
    return out


def period_start(status: Mapping[str, Any]) -> dt.date:
    """The period start of a computed status."""
    return dt.date.fromisoformat(status["currentPeriod"]["startDate"])


def settled(
    previous: Mapping[str, Any], status: dict[str, Any], now: dt.datetime
) -> dict[str, Any]:
    """What to write: `previous` unchanged when `status` differs from it only in times (and
    days left stay compared), or only in the forecast while `previous` was written less than
    FORECAST_REFRESH_SECONDS ago (its `lastUpdated`); else `status` stamped `lastUpdated`."""
    new, old = comparable(status), comparable(previous)
    forecast_new, forecast_old = new.pop("forecast", None), old.pop("forecast", None)
    if new == old:
        written = _parse_ts(previous.get("lastUpdated"))
        fresh = written is not None and (now - written).total_seconds() < FORECAST_REFRESH_SECONDS
        if fresh or forecast_new == forecast_old:
            return dict(previous)
    return {**status, "lastUpdated": _ts(now)}


def reconcile_budget(
    budget: GryviaBudget,
    scope: Scope,
    lines: Sequence[UsageLine],
    jobs: Iterable[JobView],
    now: dt.datetime,
) -> dict[str, Any]:
    """The budget's status to write at `now`: `compute`, with each due crossing recorded in
    `alerts` (not yet sent: the handler sends only what this status records once it is
    written), then `settled` against the stored status."""
    status, crossings = compute(budget, scope, lines, jobs, now)
    first = period_start(status)
    status["alerts"].extend(alert_record(c, first, now) for c in crossings)
    previous = (
        budget.status.model_dump(mode="json", by_alias=True, exclude_none=True)
        if budget.status
        else {}
    )
    return settled(previous, status, now)
