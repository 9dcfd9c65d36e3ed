"""The Cost view: spend per tenant this month against budget, projection, daily spend as a
sparkline, and the top jobs by cost (from GryviaUsageRecords via core.billing)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Sparkline, Static

from gryvia_cli.core.cost import TeamCost, team_costs, team_scopes
from gryvia_cli.core.quota import percent_marker
from gryvia_cli.core.spend import JobSpend, daily_spend, top_jobs
from gryvia_cli.tui.rows import money
from gryvia_cli.tui.screens.base import ViewScreen
from gryvia_cli.tui.store import Change
from gryvia_cli.tui.widgets.rowtable import Cell, Column, RowTable
from gryvia_operator.api import GryviaQuota, GryviaTenant, GryviaUsageRecord
from gryvia_operator.api.periods import elapsed_fraction

RELEVANT = frozenset({"usage", "quotas", "tenants"})
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


class CostScreen(ViewScreen):
    """Month-to-date spend."""

    VIEW = "cost"

    def __init__(self) -> None:
        super().__init__()
        self.spend: dict[str, TeamCost] = {}
        self.top: dict[str, JobSpend] = {}

    def compose_body(self) -> ComposeResult:
        """Tenants, daily spend, top jobs."""
        yield Static(id="cost-title", classes="section-title")
        yield RowTable(
            TENANT_COLUMNS,
            self._tenant_cells,
            empty_text="No usage or budgets yet.",
            id="cost-tenants",
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
        spend = sorted(team_costs(scopes, records, "month", now), key=lambda c: (-c.spent, c.team))
        self.spend = {s.team: s for s in spend}
        month, fraction = f"{now:%Y-%m}", elapsed_fraction("month", now)
        total = sum(s.spent for s in spend)
        self.query_one("#cost-title", Static).update(
            f"{month} ({fraction:.0%} of the month) · spent {money(total)} · "
            f"projected {money(sum(s.projected for s in spend))} · estimates"
        )
        tenants = self.query_one("#cost-tenants", RowTable)
        tenants.invalidate(None)
        tenants.set_order([s.team for s in spend])
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
        table.set_order(list(self.top))
        self.set_class(any(over_budget(s) for s in spend), "-over-budget")
