"""`gryvia cost`: spend per team in a day, week or month window against its budget (pure).

A team is a GryviaQuota `spec.team` (its namespaces) and a GryviaTenant of that name (its
`tenant-<name>` namespace). A team's spend is the cost of the usage records attributed to the
tenant of its name (the record's `spec.tenant`, which the operator writes by the one tenant
rule of `gryvia_operator.api.attribution`, so a record is never counted for a tenant other
than the one `usage` and `invoice` show it under) and of the records in its quotas'
namespaces, each record counted once per team, inside the window, a run crossing the window's
start counted for its part inside it. Windows are UTC:
day = since midnight, week = since Monday, month = since the 1st. Budgets are monthly (a
quota's `budget.monthlyBudget`, else the tenant's `quotas.costUSD.monthly`); for a day or a
week the budget is the monthly one prorated to the period. Projections are linear to the end
of the period, like the operator's `projectedSpend`. Unpriced usage (`core.unpriced`) is in
no amount: a team's GPU-hours count it, and `unpriced_gpu_hours` says how much of them.
Sealed runs the operator sampled (`spec.activeGPUHours`, docs/gpu-metrics.md) add their
active GPU-hours and the cost of their idle part (`core.gpuuse.idle_cost`, Decimal), each for
its share inside the window.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gryvia_cli.core.billing import UsageRow, aggregate
from gryvia_cli.core.gpuuse import idle_cost, usage_fields
from gryvia_cli.core.unpriced import only_unpriced
from gryvia_operator.api import GryviaQuota, GryviaTenant, GryviaUsageRecord
from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.periods import Period, month_bounds, period_window, record_share
from gryvia_operator.api.usagerecord import is_unpriced

MIN_ELAPSED = dt.timedelta(minutes=1)


@dataclass(frozen=True)
class TeamScope:
    """A team: its namespaces, its monthly budget (USD, or None) and where its spend comes
    from: the usage records of the tenant of its name (`tenant`: a GryviaTenant of that name
    exists) and those in its quotas' namespaces (`quota_namespaces`)."""

    team: str
    namespaces: tuple[str, ...]
    monthly_budget: float | None
    tenant: bool = False
    quota_namespaces: tuple[str, ...] = ()


def team_scopes(quotas: Iterable[GryviaQuota], tenants: Iterable[GryviaTenant]) -> list[TeamScope]:
    """Every team of the quotas and tenants, sorted by name. Quota budgets of one team add
    up; a tenant's `quotas.costUSD.monthly` counts only when no quota of its name has one."""
    namespaces: dict[str, set[str]] = defaultdict(set)
    quota_namespaces: dict[str, set[str]] = defaultdict(set)
    quota_budget: dict[str, float] = {}
    tenant_budget: dict[str, float] = {}
    tenant_names: set[str] = set()
    for quota in quotas:
        team = quota.spec.team
        namespaces[team].update(quota.spec.namespaces)
        quota_namespaces[team].update(quota.spec.namespaces)
        budget = quota.spec.budget
        if budget is not None and budget.monthly_budget is not None:
            quota_budget[team] = quota_budget.get(team, 0.0) + budget.monthly_budget
    for tenant in tenants:
        tenant_names.add(tenant.name)
        namespaces[tenant.name].add(tenant_namespace(tenant.name))
        limits = tenant.spec.quotas
        if limits and limits.cost_usd and limits.cost_usd.monthly is not None:
            tenant_budget[tenant.name] = limits.cost_usd.monthly
    return [
        TeamScope(
            team,
            tuple(sorted(ns)),
            quota_budget.get(team, tenant_budget.get(team)),
            tenant=team in tenant_names,
            quota_namespaces=tuple(sorted(quota_namespaces.get(team, ()))),
        )
        for team, ns in sorted(namespaces.items())
    ]


@dataclass(frozen=True)
class TeamCost:
    """One team's spend in the window, its budget for the period and the projection."""

    team: str
    namespaces: tuple[str, ...]
    spent: float
    gpu_hours: float
    jobs: int
    currency: str
    budget: float | None
    """The budget of the period: the monthly budget, prorated for a day or a week."""
    monthly_budget: float | None
    projected: float
    unpriced_gpu_hours: float = 0.0
    """The part of `gpu_hours` no SKU priced (in no amount: `spent` counts priced usage)."""
    unpriced_gpu_types: tuple[str, ...] = ()
    """The GPU types of that usage ("" when unknown), sorted."""
    active_gpu_hours: float | None = None
    """Active GPU-hours (GPU-hours x mean GPU activity) of its sealed, sampled runs in the
    window; None: it has none."""
    idle_cost: Decimal | None = None
    """What the idle part of those runs cost in the window, in `currency`; None: none."""

    @property
    def remaining(self) -> float | None:
        """Budget of the period minus spend; None without a budget."""
        return None if self.budget is None else self.budget - self.spent

    @property
    def percent(self) -> float | None:
        """Spend as a percentage of the period's budget; None without a (non-zero) budget."""
        return 100.0 * self.spent / self.budget if self.budget else None

    def as_dict(self) -> dict[str, Any]:
        """The documented JSON item of `gryvia cost -o json`: with unpriced usage also
        `unpricedGpuHours`, and `spent` and `projected` null when none of it is priced."""
        none = only_unpriced(self.gpu_hours, self.unpriced_gpu_hours)
        out = {
            "team": self.team,
            "namespaces": list(self.namespaces),
            "spent": None if none else round(self.spent, 4),
            "budget": None if self.budget is None else round(self.budget, 2),
            "monthlyBudget": self.monthly_budget,
            "remaining": None if self.remaining is None else round(self.remaining, 2),
            "percentUsed": None if self.percent is None else round(self.percent, 1),
            "projected": None if none else round(self.projected, 2),
            "currency": self.currency,
            "gpuHours": round(self.gpu_hours, 4),
            "jobs": self.jobs,
        }
        out.update(usage_fields(self.unpriced_gpu_hours, self.active_gpu_hours, self.idle_cost))
        return out


def team_costs(
    scopes: Sequence[TeamScope],
    records: Iterable[GryviaUsageRecord],
    period: Period,
    now: dt.datetime,
) -> list[TeamCost]:
    """Spend of each team in the `period` window holding `now`, in scope order. A record
    counts once for each team it belongs to: the tenant team named by its `spec.tenant`, and
    every team one of whose quotas covers its namespace. Unpriced records
    (`api.usagerecord.is_unpriced`) add GPU-hours and `unpriced_gpu_hours`, never spend.
    Sealed, sampled records add their share of active GPU-hours and of idle cost (Decimal)."""
    start, end = period_window(period, now)
    month_start, month_end = month_bounds(f"{now.astimezone(dt.UTC):%Y-%m}")
    scale = (end - start) / (month_end - month_start) if period != "month" else 1.0
    elapsed = max(min(now, end) - start, MIN_ELAPSED) / (end - start)
    cost: dict[str, float] = defaultdict(float)
    hours: dict[str, float] = defaultdict(float)
    unpriced: dict[str, float] = defaultdict(float)
    unpriced_types: dict[str, set[str]] = defaultdict(set)
    jobs: dict[str, set[tuple[str, str]]] = defaultdict(set)
    active: dict[str, float] = {}
    idle: dict[str, Decimal] = {}
    currencies: dict[str, set[str]] = defaultdict(set)
    tenant_scopes: dict[str, list[TeamScope]] = defaultdict(list)
    namespace_scopes: dict[str, list[TeamScope]] = defaultdict(list)
    for scope in scopes:
        if scope.tenant:
            tenant_scopes[scope.team].append(scope)
        for ns in scope.quota_namespaces:
            namespace_scopes[ns].append(scope)
    for rec in records:
        share = record_share(rec, start, end)
        if share <= 0:
            continue
        candidates = (
            *tenant_scopes.get(rec.spec.tenant, ()),
            *namespace_scopes.get(rec.namespace, ()),
        )
        no_price = is_unpriced(rec.spec)  # its cost is 0: no price, so no spend
        wasted = idle_cost(rec)
        for team in dict.fromkeys(s.team for s in candidates):
            if wasted is not None:
                active[team] = active.get(team, 0.0) + (rec.spec.active_gpu_hours or 0.0) * share
                idle[team] = idle.get(team, Decimal(0)) + wasted * Decimal(repr(share))
            cost[team] += rec.spec.cost * share
            hours[team] += rec.spec.gpu_hours * share
            if no_price:
                unpriced[team] += rec.spec.gpu_hours * share
                unpriced_types[team].add(rec.spec.gpu_type or "")
            jobs[team].add((rec.namespace, rec.spec.job))
            currencies[team].add(rec.spec.currency)
    out = []
    for scope in scopes:
        cur = currencies[scope.team]
        spent = cost[scope.team]
        out.append(
            TeamCost(
                team=scope.team,
                namespaces=scope.namespaces,
                spent=spent,
                gpu_hours=hours[scope.team],
                jobs=len(jobs[scope.team]),
                currency=next(iter(cur)) if len(cur) == 1 else ("MIXED" if cur else "USD"),
                budget=None if scope.monthly_budget is None else scope.monthly_budget * scale,
                monthly_budget=scope.monthly_budget,
                projected=spent / elapsed,
                unpriced_gpu_hours=unpriced[scope.team],
                unpriced_gpu_types=tuple(sorted(unpriced_types[scope.team])),
                active_gpu_hours=active.get(scope.team),
                idle_cost=idle.get(scope.team),
            )
        )
    return out


@dataclass(frozen=True)
class GroupCost:
    """Spend of one user, project or label value in a period: the usage row of
    `core.billing.aggregate` and its linear projection to the period's end."""

    row: UsageRow
    projected: float

    def as_dict(self, field: str) -> dict[str, Any]:
        """The row's JSON (`field` names the group) with `spent` and `projected`."""
        out = self.row.as_dict(field)
        out["spent"] = out.pop("cost")
        out["projected"] = None if out["spent"] is None else round(self.projected, 2)
        return out


def group_costs(
    records: Iterable[GryviaUsageRecord], group_by: str, period: Period, now: dt.datetime
) -> tuple[list[GroupCost], UsageRow]:
    """Spend per group (`user`, `project` or `label:KEY`, `core.billing.parse_group_by`) in
    the `period` window holding `now`, each record for its part in the window, highest first,
    with the total; PROJECTED extends each linearly to the period's end, as `team_costs`."""
    start, end = period_window(period, now)
    elapsed = max(min(now, end) - start, MIN_ELAPSED) / (end - start)
    rows, total = aggregate(records, group_by, start, end)
    return [GroupCost(row, row.cost / elapsed) for row in rows], total
