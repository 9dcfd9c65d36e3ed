"""GryviaBudget accounting: the period, the spend in scope, utilisation, state, forecast,
rollover and the grace period. Pure functions; `handlers/budget.py` feeds them the watches.

Rules (docs/budgets.md):
- Periods are UTC, half-open [start, end): daily from midnight, weekly from `weekStart`
  (Sunday by default), monthly from the 1st, quarterly from Jan/Apr/Jul/Oct 1st, annual from
  Jan 1st, custom from `startDate` to the end of `endDate` (end inclusive).
- Spend = the usage records in scope, open ones included, each counted for the share of its
  run inside the period (a run straddling the period start is prorated; `api.periods`).
  Costs are summed in Decimal and rounded to 6 places. Records in another currency than USD
  are reported in `usage.currencies` and make the cost limit unenforced (cost percent 0);
  GPU-hours still count.
- Utilisation = the largest of cost %, GPU-hours % and each GPU type's hours %.
- Rollover: the previous period's unused cost limit, capped at `maxRolloverPercent` of the
  limit, is added to this period's limit (custom periods have no previous period).
- State: `blocked` (enforcement on, action block, utilisation >= 100 % for longer than the
  grace period, or >= the lowest threshold whose actions include block), `exceeded` (>= 100 %),
  `warning` (>= the lowest alert threshold, 80 % without alerts), else `active`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gryvia_operator.api.budget import (
    DEFAULT_WARNING_PERCENT,
    BudgetPeriod,
    BudgetState,
    GryviaBudget,
)
from gryvia_operator.api.budgetscope import Scope
from gryvia_operator.api.helpers import parse_duration
from gryvia_operator.api.periods import MeteredRun, share_in_window

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
CENT = Decimal("0.01")
MICRO = Decimal("0.000001")
"""Spend is rounded to 6 places (the ledger's amounts) before it is compared with a limit, so
float noise in a record's cost (9.999999999999998) does not keep a spent budget under 100 %."""


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)


def _add_months(day: dt.date, months: int) -> dt.date:
    total = day.year * 12 + day.month - 1 + months
    return dt.date(total // 12, total % 12 + 1, 1)


def period_bounds(period: BudgetPeriod, now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """[start, end) in UTC of the budget period holding `now` (custom: its fixed window,
    whether `now` is inside it or not). Raises ValueError for a custom period without dates."""
    today = now.astimezone(dt.UTC).date()
    kind = period.type
    if kind == "daily":
        return _midnight(today), _midnight(today + dt.timedelta(days=1))
    if kind == "weekly":
        back = (today.weekday() - WEEKDAYS.index(period.week_start)) % 7
        first = today - dt.timedelta(days=back)
        return _midnight(first), _midnight(first + dt.timedelta(days=7))
    if kind in ("monthly", "quarterly", "annual"):
        months = {"monthly": 1, "quarterly": 3, "annual": 12}[kind]
        month = 1 if kind == "annual" else (today.month - 1) // months * months + 1
        first = dt.date(today.year, month, 1)
        return _midnight(first), _midnight(_add_months(first, months))
    if period.start_date is None or period.end_date is None:
        raise ValueError("spec.period: a custom period needs startDate and endDate")
    return _midnight(period.start_date), _midnight(period.end_date + dt.timedelta(days=1))


def previous_bounds(
    period: BudgetPeriod, start: dt.datetime
) -> tuple[dt.datetime, dt.datetime] | None:
    """The period just before the one starting at `start` (None for custom periods)."""
    if period.type == "custom":
        return None
    return period_bounds(period, start - dt.timedelta(seconds=1))


@dataclass(frozen=True)
class UsageLine:
    """What a budget needs of one usage record."""

    namespace: str
    tenant: str
    job: str
    gpu_type: str
    currency: str
    run: MeteredRun
    user: str = ""
    project: str = ""

    @classmethod
    def of_raw(cls, obj: Mapping[str, Any]) -> UsageLine | None:
        """From a raw GryviaUsageRecord (metadata + spec); None when malformed."""
        run = MeteredRun.of_raw(obj)
        if run is None:
            return None
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        return cls(
            str(meta.get("namespace") or ""),
            str(spec.get("tenant") or ""),
            str(spec.get("jobUID") or spec.get("job") or meta.get("name") or ""),
            str(spec.get("gpuType") or ""),
            str(spec.get("currency") or "USD").upper(),
            run,
            str(spec.get("user") or ""),
            str(spec.get("project") or ""),
        )


@dataclass
class Spend:
    """Usage of one scope in one window."""

    cost_usd: Decimal = Decimal(0)
    gpu_hours: float = 0.0
    gpu_type_hours: dict[str, float] = field(default_factory=dict)
    jobs: set[str] = field(default_factory=set)
    currencies: set[str] = field(default_factory=set)

    @property
    def mixed_currency(self) -> bool:
        """True when any record is in a currency other than USD."""
        return bool(self.currencies - {"USD"})


def spend(lines: Iterable[UsageLine], scope: Scope, start: dt.datetime, end: dt.datetime) -> Spend:
    """The spend in scope within [start, end): each record's cost and GPU-hours times its share
    of the window (GPU types keyed upper-case)."""
    out = Spend()
    for line in lines:
        if not scope.covers_record(line.namespace, line.tenant, line.user, line.project):
            continue
        share = share_in_window(*line.run.interval(), start, end)
        if not share:
            continue
        out.currencies.add(line.currency)
        out.jobs.add(line.job)
        hours = line.run.gpu_hours * share
        out.gpu_hours += hours
        if line.gpu_type:
            key = line.gpu_type.upper()
            out.gpu_type_hours[key] = out.gpu_type_hours.get(key, 0.0) + hours
        if line.currency == "USD":
            out.cost_usd += Decimal(repr(line.run.cost)) * Decimal(repr(share))
    out.cost_usd = out.cost_usd.quantize(MICRO)
    return out


def rollover_usd(budget: GryviaBudget, previous: Spend | None) -> Decimal:
    """Unused cost limit carried over from the previous period (0 when rollover is off, there
    is no cost limit or no previous period), capped at maxRolloverPercent of the limit."""
    spec, limits = budget.spec.rollover, budget.spec.limits
    if spec is None or not spec.enabled or limits is None or limits.cost_usd is None:
        return Decimal(0)
    if previous is None:
        return Decimal(0)
    limit = Decimal(repr(limits.cost_usd))
    unused = max(limit - previous.cost_usd, Decimal(0))
    cap = limit * Decimal(repr(spec.max_rollover_percent)) / 100
    return min(unused, cap).quantize(CENT)


@dataclass(frozen=True)
class Utilization:
    """Percentages of the limits (None where no limit is set)."""

    cost: float | None
    gpu_hours: float | None
    gpu_types: dict[str, float]

    @property
    def percent(self) -> float:
        """The utilisation: the largest percentage (0 without limits)."""
        found = [p for p in (self.cost, self.gpu_hours, *self.gpu_types.values()) if p is not None]
        return max(found, default=0.0)


def _pct(used: float, limit: float) -> float:
    if limit <= 0:
        return 100.0 if used > 0 else 0.0
    return 100.0 * used / limit


def utilization(budget: GryviaBudget, used: Spend, cost_limit: Decimal | None) -> Utilization:
    """Percent of each limit used; cost counts 0 with mixed currencies (not enforced)."""
    limits = budget.spec.limits
    cost = None
    if cost_limit is not None:
        cost = 0.0 if used.mixed_currency else _pct(float(used.cost_usd), float(cost_limit))
    hours = None
    if limits is not None and limits.gpu_hours is not None:
        hours = _pct(used.gpu_hours, limits.gpu_hours)
    types = {
        name: _pct(used.gpu_type_hours.get(name.upper(), 0.0), limit)
        for name, limit in ((limits.gpu_type_hours or {}) if limits else {}).items()
    }
    return Utilization(cost, hours, types)


def lowest_alert(budget: GryviaBudget) -> float:
    """The lowest alert threshold (DEFAULT_WARNING_PERCENT without alerts)."""
    return min((a.threshold for a in budget.spec.alerts or []), default=DEFAULT_WARNING_PERCENT)


def block_threshold(budget: GryviaBudget) -> float:
    """Utilisation from which the budget blocks: 100, or the lowest threshold whose actions
    include block."""
    found = [a.threshold for a in budget.spec.alerts or [] if "block" in (a.actions or [])]
    return min([100.0, *found])


def grace_seconds(budget: GryviaBudget) -> int:
    """The grace period in seconds (0 when unset). Raises DurationError naming the field."""
    enf = budget.spec.enforcement
    if enf is None or not enf.grace_period:
        return 0
    return parse_duration(enf.grace_period, field="spec.enforcement.gracePeriod")


def exceeded_since(
    previous: dt.datetime | None, period_start: dt.datetime, percent: float, now: dt.datetime
) -> dt.datetime | None:
    """When utilisation first reached 100 % in this period: kept from `previous` when that
    lies in the period, `now` when it is reached first now, None while under 100 %."""
    if percent < 100.0:
        return None
    if previous is not None and previous >= period_start:
        return previous
    return now


def budget_state(
    budget: GryviaBudget, percent: float, since: dt.datetime | None, now: dt.datetime
) -> BudgetState:
    """The state from the spec, the utilisation and when it first reached 100 % (grace)."""
    enf = budget.spec.enforcement
    if enf is not None and enf.enabled and enf.action == "block":
        if percent >= 100.0 and since is not None:
            if (now - since).total_seconds() >= grace_seconds(budget):
                return "blocked"
        elif percent >= block_threshold(budget):
            return "blocked"
    if percent >= 100.0:
        return "exceeded"
    if percent >= lowest_alert(budget):
        return "warning"
    return "active"


@dataclass(frozen=True)
class Forecast:
    """Linear projection to the period's end."""

    cost_usd: Decimal | None
    gpu_hours: float | None
    sufficient: bool
    exhaustion: dt.date | None


def forecast(
    used: Spend,
    cost_limit: Decimal | None,
    gpu_hour_limit: float | None,
    start: dt.datetime,
    end: dt.datetime,
    now: dt.datetime,
    type_limits: Mapping[str, float] | None = None,
) -> Forecast:
    """Project spend at the current rate to `end`; the exhaustion date is when the first limit
    is reached at that rate (None when no limit would be reached within the period).
    `type_limits` are `limits.gpuTypeHours` (GPU type -> GPU-hours), each a limit too."""
    elapsed = min(max((now - start) / (end - start), 1e-6), 1.0)
    span = end - start
    cost = (used.cost_usd / Decimal(repr(elapsed))).quantize(CENT)
    hours = used.gpu_hours / elapsed
    dates: list[dt.date] = []
    sufficient = True
    if cost_limit is not None and not used.mixed_currency:
        sufficient = sufficient and cost <= cost_limit
        if used.cost_usd > 0 and cost > cost_limit:
            dates.append((start + span * elapsed * float(cost_limit / used.cost_usd)).date())
    if gpu_hour_limit is not None:
        sufficient = sufficient and hours <= gpu_hour_limit
        if used.gpu_hours > 0 and hours > gpu_hour_limit:
            dates.append((start + span * elapsed * (gpu_hour_limit / used.gpu_hours)).date())
    for name, limit in (type_limits or {}).items():
        typed = used.gpu_type_hours.get(name.upper(), 0.0)
        sufficient = sufficient and typed / elapsed <= limit
        if typed > 0 and typed / elapsed > limit:
            dates.append((start + span * elapsed * (limit / typed)).date())
    return Forecast(cost, round(hours, 4), sufficient, min(dates, default=None))
