"""The Cost view: spend per tenant this month against budget, projection, the GryviaBudgets
(state, thresholds, forecast line), daily spend as a sparkline, and the top jobs by cost (from
GryviaUsageRecords via core.billing)."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.widgets import Sparkline, Static

from gryvia_cli.core.budgets import (
    STATE_MARKERS,
    forecast_text,
    limit_text,
    period_text,
    scope_text,
    spent_text,
    state_of,
    used_percent,
)
from gryvia_cli.core.cost import TeamCost, TeamScope, team_costs, team_scopes
from gryvia_cli.core.quota import percent_marker
from gryvia_cli.core.spend import JobSpend, daily_spend, top_jobs
from gryvia_cli.tui.bindings import COST, bindings
from gryvia_cli.tui.rows import money
from gryvia_cli.tui.screens.drill import CostJobsScreen
from gryvia_cli.tui.screens.tables import TableView
from gryvia_cli.tui.sorting import SortState
from gryvia_cli.tui.store import Change
from gryvia_cli.tui.widgets.rowtable import Cell, Column, RowTable
from gryvia_operator.api import GryviaBudget, GryviaQuota, GryviaTenant, GryviaUsageRecord
from gryvia_operator.api.periods import elapsed_fraction

RELEVANT = frozenset({"usage", "quotas", "tenants", "budgets"})
BUDGET_COLUMNS = (
    Column("budget", "BUDGET", 16, 0),
    Column("scope", "SCOPE", 24, 5),
    Column("spent", "SPENT", 11, 0, "right"),
    Column("limit", "LIMIT", 12, 3, "right"),
    Column("used", "USED", 7, 1, "right"),
    Column("state", "STATE", 9, 0),
    Column("alerts", "ALERTS AT", 10, 4),
    Column("forecast", "FORECAST", 24, 2, flex=True, max_width=80),
)
TENANT_COLUMNS = (
    Column("tenant", "TEAM", 14, 0, flex=True),
    Column("spent", "SPENT", 11, 0, "right"),
    Column("budget", "BUDGET", 11, 1, "right"),
    Column("used", "USED", 10, 2, "right"),
    Column("projected", "PROJECTED", 11, 3, "right"),
    Column("hours", "GPU-H", 9, 5, "right"),
    Column("jobs", "JOBS", 5, 6, "right"),
)
TOP_COLUMNS = (
    Column("job", "JOB", 16, 0, flex=True),
    Column("namespace", "NAMESPACE", 14, 4),
    Column("tenant", "TENANT", 12, 3),
    Column("gpu", "GPU", 9, 2),
    Column("hours", "GPU-H", 9, 1, "right"),
    Column("cost", "COST", 11, 0, "right"),
)


def used_cell(cost: TeamCost) -> Cell:
    """`▮▮▯▯▯  36%`, marked as `core.quota.percent_marker` says (≥80 warn, ≥100 error)."""
    pct = cost.percent
    if pct is None:
        return "no budget", "dim"
    filled = min(int(pct // 20), 5)
    return f"{'▮' * filled}{'▯' * (5 - filled)}{pct:4.0f}%", percent_marker(pct)


def over_budget(cost: TeamCost) -> bool:
    """True when the projection passes the monthly budget."""
    return cost.budget is not None and cost.projected > cost.budget


def tenant_sort_value(column: str, cost: TeamCost) -> Any:
    """Sort value of a team row for `column` (TENANT_COLUMNS keys)."""
    return {
        "spent": cost.spent,
        "budget": cost.budget,
        "used": cost.percent,
        "projected": cost.projected,
        "hours": cost.gpu_hours,
        "jobs": cost.jobs,
    }.get(column, cost.team)


def budget_sort_value(column: str, budget: GryviaBudget) -> Any:
    """Sort value of a budget row for `column` (BUDGET_COLUMNS keys)."""
    usage = budget.status.usage if budget.status else None
    return {
        "scope": scope_text(budget),
        "spent": (usage.cost_usd or 0.0) if usage else 0.0,
        "used": used_percent(budget) or 0.0,
        "state": state_of(budget),
    }.get(column, budget.name)


def top_sort_value(column: str, spend: JobSpend) -> Any:
    """Sort value of a top-jobs row for `column` (TOP_COLUMNS keys)."""
    return {
        "namespace": spend.namespace,
        "tenant": spend.tenant,
        "gpu": spend.gpu_type,
        "hours": spend.gpu_hours,
        "cost": spend.cost,
    }.get(column, spend.job)


class CostScreen(TableView):
    """Month-to-date spend; enter on a team lists the jobs behind its figure."""

    VIEW = "cost"
    BINDINGS: ClassVar = bindings(COST)
    SORTS: ClassVar = {
        "cost-tenants": SortState("spent", reverse=True),
        "cost-budgets": SortState("used", reverse=True),
        "cost-top": SortState("cost", reverse=True),
    }

    def __init__(self) -> None:
        super().__init__()
        self.spend: dict[str, TeamCost] = {}
        self.scopes: dict[str, TeamScope] = {}
        self.top: dict[str, JobSpend] = {}
        self.budgets: dict[str, GryviaBudget] = {}

    def compose_body(self) -> ComposeResult:
        """Tenants, daily spend, top jobs."""
        yield Static(id="cost-title", classes="section-title")
        yield RowTable(
            TENANT_COLUMNS,
            self._tenant_cells,
            empty_text="No usage or budgets yet.",
            id="cost-tenants",
        )
        yield Static("Budgets", id="cost-budgets-title", classes="section-title")
        yield RowTable(
            BUDGET_COLUMNS,
            self._budget_cells,
            empty_text="No GryviaBudgets ('gryvia budget create').",
            id="cost-budgets",
        )
        yield Static(id="cost-daily-title", classes="section-title")
        yield Sparkline([], id="cost-daily")
        yield Static("Top jobs by cost this month", classes="section-title")
        yield RowTable(
            TOP_COLUMNS, self._top_cells, empty_text="No metered jobs this month.", id="cost-top"
        )

    def on_mount(self) -> None:
        """First paint and focus."""
        super().on_mount()
        self.query_one("#cost-tenants").focus()

    def _tenant_cells(self, key: str) -> list[Cell]:
        s = self.spend[key]
        over = "error" if over_budget(s) else ""
        return [
            (s.team, ""),
            (money(s.spent, s.currency), ""),
            (money(s.budget, s.currency), "dim" if s.budget is None else ""),
            used_cell(s),
            (("⚠ " if over else "") + money(s.projected, s.currency), over),
            (f"{s.gpu_hours:,.1f}", ""),
            (str(s.jobs), ""),
        ]

    def _budget_cells(self, key: str) -> list[Cell]:
        b = self.budgets[key]
        pct = used_percent(b)
        state = state_of(b)
        thresholds = ", ".join(f"{a.threshold:g}%" for a in b.spec.alerts or []) or "-"
        return [
            (b.name, ""),
            (scope_text(b), "dim"),
            (spent_text(b), ""),
            (limit_text(b), ""),
            ("-" if pct is None else f"{pct:.1f}%", percent_marker(pct)),
            (state, STATE_MARKERS.get(state, "dim")),
            (thresholds, ""),
            (f"{period_text(b)}: {forecast_text(b)}", "error" if state == "blocked" else ""),
        ]

    def _top_cells(self, key: str) -> list[Cell]:
        j = self.top[key]
        return [
            (j.job + (" (running)" if j.open else ""), ""),
            (j.namespace, "dim"),
            (j.tenant, ""),
            (j.gpu_type, ""),
            (f"{j.gpu_hours:,.1f}", ""),
            (money(j.cost, j.currency), ""),
        ]

    def refresh_view(self, change: Change | None) -> None:
        """Recompute when usage, quotas or tenants changed."""
        if change is not None and not change.kinds & RELEVANT:
            return
        store, now = self.store, self.now()
        records = store.models("usage", GryviaUsageRecord)
        scopes = team_scopes(
            store.models("quotas", GryviaQuota), store.models("tenants", GryviaTenant)
        )
        spend = team_costs(scopes, records, "month", now)
        self.scopes = {s.team: s for s in scopes}
        self.spend = {s.team: s for s in spend}
        month, fraction = f"{now:%Y-%m}", elapsed_fraction("month", now)
        total = sum(s.spent for s in spend)
        self.query_one("#cost-title", Static).update(
            f"{month} ({fraction:.0%} of the month) · spent {money(total)} · "
            f"projected {money(sum(s.projected for s in spend))} · estimates"
        )
        tenants = self.query_one("#cost-tenants", RowTable)
        tenants.invalidate(None)
        tenants.set_order(
            self.ordered_keys(
                "cost-tenants", list(self.spend), lambda c, k: tenant_sort_value(c, self.spend[k])
            )
        )
        self.budgets = {b.name: b for b in store.models("budgets", GryviaBudget)}
        budgets = self.query_one("#cost-budgets", RowTable)
        budgets.invalidate(None)
        budgets.set_order(
            self.ordered_keys(
                "cost-budgets",
                list(self.budgets),
                lambda c, k: budget_sort_value(c, self.budgets[k]),
            )
        )
        daily = daily_spend(records, now)
        self.query_one("#cost-daily", Sparkline).data = daily or [0.0]
        peak = max(daily, default=0.0)
        today = daily[-1] if daily else 0.0
        self.query_one("#cost-daily-title", Static).update(
            f"Daily spend, {month}-01 to today · peak {money(peak)} · today {money(today)}"
        )
        top = top_jobs(records, now, 20)
        self.top = {f"{j.namespace}/{j.job}": j for j in top}
        table = self.query_one("#cost-top", RowTable)
        table.invalidate(None)
        table.set_order(
            self.ordered_keys(
                "cost-top", list(self.top), lambda c, k: top_sort_value(c, self.top[k])
            )
        )
        self.set_class(any(over_budget(s) for s in spend), "-over-budget")

    # -- drill-down ------------------------------------------------------------------------

    def action_jobs(self) -> None:
        """The jobs behind the row under the cursor: a team's jobs, or the job itself."""
        table = self.sort_table()
        if table is not None and table.cursor_key is not None:
            self._open(table, table.cursor_key)

    @on(RowTable.Activated)
    def _activated(self, event: RowTable.Activated) -> None:
        self._open(event.table, event.key)

    def _open(self, table: RowTable, key: str) -> None:
        if table.id == "cost-top":
            self.console.open_job(key, "overview")
        elif key in self.scopes:
            self.app.push_screen(CostJobsScreen(self.scopes[key]))
