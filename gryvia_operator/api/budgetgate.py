"""The admission gate's budget rule, one pure function for the operator and `gryvia submit`.

Rule: a GPU job's estimate is `total GPUs x hours x the SKU's USD rate per GPU-hour`, the
hours being the job's timeout or, without one, the gate's default hours (1 unless the
operator is started with `--admission-default-hours`). The gate refuses the job when the
estimate would take a *hard* budget over its limit: `spent + estimate > limit` (reaching the
limit exactly is allowed). Hard budgets are

- a GryviaQuota whose `budget.hardLimit` is true: `budget.monthlyBudget` USD this UTC month;
- a GryviaBudget with `enforcement.enabled` and `action: block` whose scope holds the job:
  `limits.costUSD` (and `limits.gpuHours`, checked with the job's GPU-hours) for its current
  period, the spend read from `status.usage` (written by the budget controller).

A check that cannot be made is *unchecked*, never silently passed: the catalog cannot be
read (so the job has no price), or a budget's spend is unknown (no `status.usage.costUSD`
yet, or it accounts an earlier period). A known overrun wins over unchecked budgets: one is
enough to refuse. What the operator does with an unchecked job is its setting (`failOpen`).

A rate in another currency than USD is not compared with USD budgets (reported, not
enforced); a GPU type without a SKU is metered unpriced, at cost 0, and so estimates 0.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Literal

from gryvia_operator.api.budgetscope import resolve_scope
from gryvia_operator.api.pricing import Rate

if TYPE_CHECKING:  # only annotations: the gate's callers hold the validated models
    from gryvia_operator.api.budget import GryviaBudget
    from gryvia_operator.api.quota import GryviaQuota

BUDGET_CURRENCY = "USD"
DEFAULT_HOURS = Decimal(1)
"""Hours a job without a timeout is estimated for (the operator's default)."""
CENTS = Decimal("0.01")
SECONDS_PER_HOUR = Decimal(3600)

BudgetSource = Literal["GryviaQuota", "GryviaBudget"]


def money(value: Decimal) -> str:
    """`value` as a 2-place string, rounded half up (`12.5` -> `12.50`)."""
    return str(value.quantize(CENTS, rounding=ROUND_HALF_UP))


def _dec(value: float | int | Decimal | None) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def _hours_text(hours: Decimal) -> str:
    """`2 h`, `0.0167 h` (1 minute): at most 4 decimal places, no trailing zeros."""
    return f"{hours.quantize(Decimal('0.0001')).normalize():f} h"


@dataclass(frozen=True)
class JobEstimate:
    """What a job would cost if it ran for its estimated hours.

    `cost` is USD (None when the price is unknown: `price_problem` says why); `gpu_hours`
    is total GPUs x hours; `basis` says where the hours come from. Both are exact where the
    inputs allow (`estimate_job` divides by 3600 last).
    """

    gpus: int
    hours: Decimal
    gpu_hours: Decimal
    basis: str
    rate: Rate | None
    cost: Decimal | None
    price_problem: str = ""

    def describe(self) -> str:
        """`20.00 USD (4 GPUs x 2 h x 2.50 USD per GPU-hour, its timeout 2h)`."""
        if self.cost is None:
            return f"{_hours_text(self.gpu_hours)} GPU-hours, price unknown"
        if self.rate is None:
            return f"{money(self.cost)} USD (no SKU prices this GPU type)"
        return (
            f"{money(self.cost)} USD ({self.gpus} GPUs x {_hours_text(self.hours)} x "
            f"{money(_dec(self.rate.per_gpu_hour) or Decimal(0))} USD per GPU-hour, "
            f"{self.basis})"
        )


def estimate_job(
    gpus: int,
    timeout_seconds: int | None,
    rate: Rate | None,
    *,
    default_hours: Decimal = DEFAULT_HOURS,
    price_problem: str = "",
) -> JobEstimate:
    """The estimate of a job with `gpus` total GPUs.

    `timeout_seconds` None uses `default_hours`; `rate` None means no SKU prices the type
    (cost 0, as metering bills it); a non-empty `price_problem` (e.g. the catalog cannot be
    read) makes the cost unknown. A non-USD rate leaves the cost unknown too, with that
    reason, but is not a failure (see `BudgetCheck.unchecked`).

    Decimal throughout, dividing by 3600 last, so that an estimate the budget can take exactly
    is exact (8 GPUs x 60 s x 0.45 USD per GPU-hour is 0.06, not 0.06000...02): the gate
    admits a job that reaches a limit exactly (`check_budgets`).
    """
    if timeout_seconds is None:
        seconds = default_hours * SECONDS_PER_HOUR
        basis = f"default {_hours_text(default_hours)}, no timeout set"
    else:
        seconds = Decimal(timeout_seconds)
        basis = f"its timeout of {_hours_text(seconds / SECONDS_PER_HOUR)}"
    hours = seconds / SECONDS_PER_HOUR
    gpu_hours = gpus * seconds / SECONDS_PER_HOUR
    if price_problem:
        return JobEstimate(gpus, hours, gpu_hours, basis, rate, None, price_problem)
    if rate is None:
        return JobEstimate(gpus, hours, gpu_hours, basis, None, Decimal(0))
    if rate.currency != BUDGET_CURRENCY:
        why = f"SKU {rate.sku} is priced in {rate.currency}, budgets are in {BUDGET_CURRENCY}"
        return JobEstimate(gpus, hours, gpu_hours, basis, rate, None, why)
    per_hour = _dec(rate.per_gpu_hour) or Decimal(0)
    cost = per_hour * gpus * seconds / SECONDS_PER_HOUR
    return JobEstimate(gpus, hours, gpu_hours, basis, rate, cost)


@dataclass(frozen=True)
class HardBudget:
    """One hard budget governing a job, with its spend (None: not readable, `problem` says
    why). `name` is how messages name it: `quota <name> (team <team>)` or `budget <name>`."""

    source: BudgetSource
    name: str
    limit_usd: Decimal | None
    spent_usd: Decimal | None
    limit_gpu_hours: Decimal | None = None
    spent_gpu_hours: Decimal | None = None
    problem: str = ""

    @property
    def remaining_usd(self) -> Decimal | None:
        """Limit minus spend (may be negative), None when either is unknown."""
        if self.limit_usd is None or self.spent_usd is None:
            return None
        return self.limit_usd - self.spent_usd


@dataclass(frozen=True)
class Overrun:
    """A hard budget the job would take over its limit; `unit` USD or GPU-hours."""

    budget: HardBudget
    unit: str
    spent: Decimal
    estimate: Decimal
    limit: Decimal

    def describe(self) -> str:
        """`budget b1: 4.00 of 10.00 USD spent, this job's estimate 20.00 USD`."""
        fmt = money if self.unit == "USD" else (lambda d: _hours_text(d).removesuffix(" h"))
        return (
            f"{self.budget.name}: {fmt(self.spent)} of {fmt(self.limit)} {self.unit} spent, "
            f"this job's estimate {fmt(self.estimate)} {self.unit} would take it to "
            f"{fmt(self.spent + self.estimate)}"
        )


@dataclass(frozen=True)
class BudgetCheck:
    """The gate's finding for one job: overruns (refuse), unchecked (what could not be
    read), or neither (admit)."""

    estimate: JobEstimate
    overruns: tuple[Overrun, ...] = ()
    unchecked: tuple[str, ...] = ()

    @property
    def refused(self) -> bool:
        """True when some hard budget would go over its limit."""
        return bool(self.overruns)

    @property
    def checked(self) -> bool:
        """True when every hard budget could be checked."""
        return not self.unchecked

    def message(self) -> str:
        """One line for a condition or the CLI: the overruns, else what was not checked."""
        if self.overruns:
            return (
                f"the admission gate refused the job: its estimate {self.estimate.describe()} "
                "would exceed a hard budget: " + "; ".join(o.describe() for o in self.overruns)
            )
        if self.unchecked:
            return "the admission gate could not check the job's budgets: " + "; ".join(
                self.unchecked
            )
        return f"within every hard budget (estimate {self.estimate.describe()})"


def check_budgets(estimate: JobEstimate, budgets: Iterable[HardBudget]) -> BudgetCheck:
    """THE gate rule: which hard budgets `estimate` would take over their limits, and which
    could not be checked (see the module docstring). Budgets are reported in the given
    order; a job without GPUs is never over a budget."""
    overruns: list[Overrun] = []
    unchecked: list[str] = []
    if estimate.gpus <= 0:
        return BudgetCheck(estimate)
    for budget in budgets:
        if budget.limit_usd is not None:
            if budget.spent_usd is None:
                unchecked.append(f"{budget.name}: {budget.problem or 'spend unknown'}")
            elif estimate.cost is None:
                if estimate.rate is None or estimate.rate.currency == BUDGET_CURRENCY:
                    unchecked.append(f"{budget.name}: {estimate.price_problem}")
            elif budget.spent_usd + estimate.cost > budget.limit_usd:
                overruns.append(
                    Overrun(budget, "USD", budget.spent_usd, estimate.cost, budget.limit_usd)
                )
        if budget.limit_gpu_hours is not None:
            if budget.spent_gpu_hours is None:
                unchecked.append(f"{budget.name}: {budget.problem or 'GPU-hours unknown'}")
            elif budget.spent_gpu_hours + estimate.gpu_hours > budget.limit_gpu_hours:
                overruns.append(
                    Overrun(
                        budget,
                        "GPU-hours",
                        budget.spent_gpu_hours,
                        estimate.gpu_hours,
                        budget.limit_gpu_hours,
                    )
                )
    return BudgetCheck(estimate, tuple(overruns), tuple(dict.fromkeys(unchecked)))


# --- Which hard budgets govern a job ---------------------------------------------------------


def quota_hard_budget(quota: GryviaQuota, spent_usd: float | Decimal | None) -> HardBudget | None:
    """The quota's hard monthly budget with `spent_usd` this month, None when the quota has
    no hard limit. `spent_usd` None means the spend could not be read."""
    budget = quota.spec.budget
    if budget is None or not budget.hard_limit or budget.monthly_budget is None:
        return None
    return HardBudget(
        "GryviaQuota",
        f"quota {quota.name} (team {quota.spec.team})",
        _dec(budget.monthly_budget),
        _dec(spent_usd),
        problem="" if spent_usd is not None else "month-to-date spend unknown",
    )


def budget_in_scope(
    budget: GryviaBudget,
    namespace: str,
    tenant: str | None,
    teams: Collection[str],
    user: str = "",
    project: str = "",
) -> bool:
    """True when a job in `namespace` counts against `budget`, by the controller's own rule
    (`budgetscope.resolve_scope`): `teams` are the teams whose GryviaQuota covers the
    namespace, `tenant` the job's tenant when it exists (its namespace `tenant-<name>` is in
    the scope of a tenant or team budget of that name), `user` the submitter and `project`
    the job's label gryvia.io/project ("" when unknown: a user or project budget then does
    not match)."""
    quota_teams = {team: (namespace,) for team in teams}
    scope = resolve_scope(budget, quota_teams, (tenant,) if tenant else ())
    return scope.covers_job(namespace, user, project)


def budget_hard_budget(budget: GryviaBudget, now: dt.datetime | None) -> HardBudget | None:
    """The GryviaBudget as a hard budget, None unless enforced with `block` and limited.

    Spend comes from `status.usage`; the USD limit from `status.currentPeriod.costLimitUSD`
    when the controller set it (limits.costUSD plus the rollover), else `limits.costUSD`.
    Spend is unreadable (problem set) while the status has no `usage.costUSD` (the controller
    has not computed it) or accounts a period that ended before `now`'s UTC date (not judged
    when `now` is None).
    """
    enforcement = budget.spec.enforcement
    limits = budget.spec.limits
    if enforcement is None or not enforcement.enabled or enforcement.action != "block":
        return None
    if limits is None or (limits.cost_usd is None and limits.gpu_hours is None):
        return None
    status = budget.status
    usage = status.usage if status else None
    period = status.current_period if status else None
    problem = ""
    if usage is None or usage.cost_usd is None:
        problem = "spend not computed yet (status.usage.costUSD is unset)"
    elif (
        now is not None
        and period is not None
        and period.end_date is not None
        and (period.end_date < now.astimezone(dt.UTC).date())
    ):
        problem = f"spend is for the period that ended {period.end_date.isoformat()}"
    spent = None if problem or usage is None else usage.cost_usd
    rolled = period.cost_limit_usd if period is not None else None
    limit_usd = rolled if rolled is not None and limits.cost_usd is not None else limits.cost_usd
    hours = None if problem or usage is None else (usage.gpu_hours or 0.0)
    return HardBudget(
        "GryviaBudget",
        f"budget {budget.name}",
        _dec(limit_usd),
        _dec(spent),
        _dec(limits.gpu_hours),
        _dec(hours),
        problem,
    )


def hard_budgets(
    namespace: str,
    tenant: str | None,
    quotas: Sequence[tuple[GryviaQuota, float | Decimal | None]],
    budgets: Iterable[GryviaBudget],
    now: dt.datetime | None,
    user: str = "",
    project: str = "",
) -> list[HardBudget]:
    """Every hard budget governing a job in `namespace` submitted by `user`, of `project`:
    the quotas covering it (each with its month-to-date spend) then the in-scope
    GryviaBudgets, each by name."""
    covering = sorted(
        ((q, s) for q, s in quotas if namespace in q.spec.namespaces), key=lambda p: p[0].name
    )
    teams = {q.spec.team for q, _ in covering}
    out = [h for q, s in covering if (h := quota_hard_budget(q, s)) is not None]
    for budget in sorted(budgets, key=lambda b: b.name):
        if budget_in_scope(budget, namespace, tenant, teams, user, project):
            found = budget_hard_budget(budget, now)
            if found is not None:
                out.append(found)
    return out
