"""Spend as `gryvia cost` reads it: per team (or per user, project or label with
`--group-by`) in a day, week or month, against the budgets; `as_dict` of each report is the
command's `-o json` document (also what the `cost` tool of `gryvia mcp` returns)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gryvia_cli.errors import NotFoundError, UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.views.reads import read_optional, read_usage_records

if TYPE_CHECKING:
    from gryvia_cli.connection import Connection
    from gryvia_cli.core.billing import UsageRow
    from gryvia_cli.core.cost import GroupCost, TeamCost
    from gryvia_operator.api import GryviaBudget
    from gryvia_operator.api.periods import Period


@dataclass
class TeamCostReport:
    """Spend per team in `window` ([start, end), UTC) and the GryviaBudgets shown with it."""

    window: Period
    start: dt.datetime
    end: dt.datetime
    items: list[TeamCost]
    budgets: list[GryviaBudget]
    warnings: list[str] = field(default_factory=list)
    """Objects skipped as invalid (`skipped an invalid object: ...`)."""

    @property
    def spent(self) -> float:
        """The teams' spend together."""
        return sum(i.spent for i in self.items)

    @property
    def total_budget(self) -> float | None:
        """The teams' budgets together (None when no team has one)."""
        budgets = [i.budget for i in self.items if i.budget is not None]
        return sum(budgets) if budgets else None

    def as_dict(self) -> dict[str, Any]:
        """`gryvia cost -o json`: {apiVersion: cli.gryvia.io/v1, kind: CostReport, period, from,
        to, items, budgets, total} (the shape the cost command's help documents)."""
        from gryvia_cli.core.budgets import budget_summary
        from gryvia_operator.api.names import CLI_API_VERSION

        spent, total_budget = self.spent, self.total_budget
        return {
            "apiVersion": CLI_API_VERSION,
            "kind": "CostReport",
            "period": self.window,
            "from": self.start.isoformat(),
            "to": self.end.isoformat(),
            "items": [i.as_dict() for i in self.items],
            "budgets": [budget_summary(b) for b in self.budgets],
            "total": {
                "spent": round(spent, 4),
                "budget": None if total_budget is None else round(total_budget, 2),
                "remaining": (None if total_budget is None else round(total_budget - spent, 2)),
                **gpu_use_total(self.items),
            },
        }


def read_team_costs(state: Connection, team: str | None, window: Period) -> TeamCostReport:
    """Quotas, tenants, usage records and budgets read; each team's spend in the period.

    Raises NotFoundError when `team` is given and no quota or tenant has it."""
    from gryvia_cli.core.budgets import budgets_for
    from gryvia_cli.core.cost import team_costs, team_scopes
    from gryvia_operator.api import GryviaBudget, GryviaQuota, GryviaTenant
    from gryvia_operator.api.parse import parse_all, parse_valid
    from gryvia_operator.api.periods import period_window

    access = state.access()
    quotas, bad_quotas = parse_all(GryviaQuota, read_optional(access, r.QUOTA))
    tenants, bad_tenants = parse_all(GryviaTenant, read_optional(access, r.TENANT))
    warnings = [f"skipped an invalid object: {p}" for p in (*bad_quotas, *bad_tenants)]
    scopes = team_scopes(quotas, tenants)
    if team is not None:
        scopes = [s for s in scopes if s.team == team]
        if not scopes:
            raise NotFoundError(
                f"no quota or tenant for team {team}",
                hint="see 'gryvia quota' and 'gryvia tenant list'",
            )
    now = state.now()
    start, end = period_window(window, now)
    records = read_usage_records(access, team) if scopes else []
    items = team_costs(scopes, records, window, now)
    all_budgets = parse_valid(GryviaBudget, read_optional(access, r.BUDGET))
    chosen = budgets_for(all_budgets, None if team is None else [team])
    return TeamCostReport(window, start, end, items, chosen, warnings)


@dataclass
class GroupCostReport:
    """Spend per user, project or label value (`key`) in `window`, and the budgets of that
    scope type."""

    window: Period
    key: str
    start: dt.datetime
    end: dt.datetime
    items: list[GroupCost]
    total: UsageRow
    budgets: list[GryviaBudget]

    def as_dict(self) -> dict[str, Any]:
        """`gryvia cost --group-by KEY -o json`: {apiVersion, kind: CostReport, period,
        groupBy, from, to, items, budgets, total: {spent, currency}}."""
        from gryvia_cli.core.billing import group_field
        from gryvia_cli.core.budgets import budget_summary
        from gryvia_operator.api.names import CLI_API_VERSION

        name = group_field(self.key)
        return {
            "apiVersion": CLI_API_VERSION,
            "kind": "CostReport",
            "period": self.window,
            "groupBy": self.key,
            "from": self.start.isoformat(),
            "to": self.end.isoformat(),
            "items": [i.as_dict(name) for i in self.items],
            "budgets": [budget_summary(b) for b in self.budgets],
            "total": {"spent": round(self.total.cost, 4), "currency": self.total.currency},
        }


def read_group_costs(
    state: Connection, group_by: str, team: str | None, window: Period
) -> GroupCostReport:
    """`cost --group-by`: spend per user, project or label value in the period.

    Raises UsageError naming --group-by for a grouping other than user, project or
    label:KEY, and when a team is given too."""
    from gryvia_cli.core.billing import parse_group_by
    from gryvia_cli.core.cost import group_costs
    from gryvia_operator.api import GryviaBudget
    from gryvia_operator.api.parse import parse_valid
    from gryvia_operator.api.periods import period_window

    try:
        key = parse_group_by(group_by)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if key not in ("user", "project") and not key.startswith("label:"):
        raise UsageError(
            f"--group-by {group_by}: cost groups by user, project or label:KEY; "
            "per tenant, SKU or day see gryvia usage --group-by"
        )
    if team is not None:
        raise UsageError(f"pass either TEAM ({team}) or --group-by, not both")
    access = state.access()
    now = state.now()
    start, end = period_window(window, now)
    items, total = group_costs(read_usage_records(access, None), key, window, now)
    budgets = parse_valid(GryviaBudget, read_optional(access, r.BUDGET))
    chosen = [b for b in budgets if b.spec.scope.type == key]
    return GroupCostReport(window, key, start, end, items, total, chosen)


def gpu_use_total(items: list[TeamCost]) -> dict[str, float]:
    """`activeGpuHours` and `idleCost` over the teams that have them ({} when none)."""
    from decimal import Decimal

    sampled = [i for i in items if i.active_gpu_hours is not None and i.idle_cost is not None]
    if not sampled:
        return {}
    idle = sum((i.idle_cost or Decimal(0) for i in sampled), Decimal(0))
    return {
        "activeGpuHours": round(sum(i.active_gpu_hours or 0.0 for i in sampled), 4),
        "idleCost": float(round(idle, 4)),
    }
