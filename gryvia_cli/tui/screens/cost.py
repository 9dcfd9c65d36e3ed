"""The Cost view: spend per tenant this month against budget, projection, the GryviaBudgets
(state, thresholds, forecast line), daily spend as a sparkline, the top jobs by cost (from
GryviaUsageRecords via core.billing), and the cost of each workspace (metered) and inference
service (estimated; `core.workloadcost`), the services polled while the view is shown."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.message import Message
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
from gryvia_cli.core.workloadcost import (
    WorkloadCost,
    basis_text,
    service_costs,
    workload_costs,
    workspace_costs,
    workspace_of,
)
from gryvia_cli.errors import GryviaError
from gryvia_cli.tui.bindings import COST, bindings
from gryvia_cli.tui.drill import cost_job_cells, cost_job_sort_value, job_spend_columns
from gryvia_cli.tui.rows import money
from gryvia_cli.tui.screens.drill import CostJobsScreen
from gryvia_cli.tui.screens.tables import TableView
from gryvia_cli.tui.sorting import SortState
from gryvia_cli.tui.store import Change
from gryvia_cli.tui.widgets.rowtable import Cell, Column, RowTable
from gryvia_operator.api import GryviaBudget, GryviaQuota, GryviaTenant, GryviaUsageRecord
from gryvia_operator.api.inference import GryviaInferenceService
from gryvia_operator.api.parse import parse_valid
from gryvia_operator.api.periods import elapsed_fraction

RELEVANT = frozenset({"usage", "quotas", "tenants", "budgets", "pods", "gpunodes", "skus"})
SERVICES_POLL_SECONDS = 10.0
"""How often the view reads the inference services while it is shown."""
WORKLOAD_COLUMNS = (
    Column("name", "WORKSPACE / SERVICE", 18, 0, flex=True),
    Column("kind", "KIND", 9, 2),
    Column("namespace", "NAMESPACE", 14, 4),
    Column("gpu", "GPU", 9, 3),
    Column("hours", "GPU-H", 9, 1, "right"),
    Column("cost", "COST", 11, 0, "right"),
    Column("basis", "BASIS", 28, 5),
)
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
TOP_COLUMNS = job_spend_columns(4, 3)


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


def workload_sort_value(column: str, item: WorkloadCost) -> Any:
    """Sort value of a workspace or service row for `column` (WORKLOAD_COLUMNS keys)."""
    return {
        "kind": item.kind,
        "namespace": item.namespace,
        "gpu": item.gpu_type,
        "hours": item.gpu_hours,
        "cost": item.cost,
        "basis": basis_text(item),
    }.get(column, item.name)


class ServicesPolled(Message):
    """The inference services were read (or could not be: `error`)."""

    def __init__(self, rows: list[dict[str, Any]], error: str = "") -> None:
        super().__init__()
        self.rows = rows
        self.error = error


class CostScreen(TableView):
    """Month-to-date spend; enter on a team lists the jobs behind its figure."""

    VIEW = "cost"
    BINDINGS: ClassVar = bindings(COST)
    SORTS: ClassVar = {
        "cost-tenants": SortState("spent", reverse=True),
        "cost-budgets": SortState("used", reverse=True),
        "cost-top": SortState("cost", reverse=True),
        "cost-workloads": SortState("cost", reverse=True),
    }

    def __init__(self) -> None:
        super().__init__()
        self.spend: dict[str, TeamCost] = {}
        self.scopes: dict[str, TeamScope] = {}
        self.top: dict[str, JobSpend] = {}
        self.budgets: dict[str, GryviaBudget] = {}
        self.workloads: dict[str, WorkloadCost] = {}
        self.services: list[GryviaInferenceService] = []
        self.services_error = ""

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
        yield Static(id="cost-workloads-title", classes="section-title")
        yield RowTable(
            WORKLOAD_COLUMNS,
            self._workload_cells,
            empty_text="No workspaces or inference services with usage this month.",
            id="cost-workloads",
        )

    def on_mount(self) -> None:
        """First paint and focus."""
        super().on_mount()
        self.query_one("#cost-tenants").focus()
        self._poll_services()
        self.set_interval(SERVICES_POLL_SECONDS, self._tick)

    def _tick(self) -> None:
        if self.is_current:
            self._poll_services()

    @work(thread=True, exclusive=True, group="cost-services")
    def _poll_services(self) -> None:
        try:
            rows = self.source.list_objects("inferenceservices", self.console.target.namespace)
        except GryviaError as exc:
            self.post_message(ServicesPolled([], exc.message))
            return
        self.post_message(ServicesPolled(rows))

    def on_services_polled(self, message: ServicesPolled) -> None:
        """New services: recompute their cost."""
        self.services_error = message.error
        if not message.error:
            self.services = parse_valid(GryviaInferenceService, message.rows)
        self._refresh_workloads()

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
        return cost_job_cells(self.top[key])

    def _workload_cells(self, key: str) -> list[Cell]:
        w = self.workloads[key]
        return [
            (w.name + (" (running)" if w.running else ""), ""),
            (w.kind, "dim"),
            (w.namespace, "dim"),
            (w.gpu_type, ""),
            (f"{w.gpu_hours:,.1f}", ""),
            (("~" if not w.metered else "") + money(w.cost, w.currency), ""),
            (basis_text(w), "" if w.metered else "dim"),
        ]

    def _refresh_workloads(self) -> None:
        """Workspaces from the usage records, services from the last poll and the live pods."""
        store, now = self.store, self.now()
        workspaces = workspace_costs(store.models("usage", GryviaUsageRecord), now)
        types = {n.name: n.gpu_type for n in store.gpu_nodes()}
        pods = list(store.objects["pods"].values())
        services = service_costs(self.services, pods, types, store.skus(), now)
        items = workload_costs(workspaces, [s for s in services if s.running or s.gpu_hours])
        self.workloads = {w.key: w for w in items}
        note = (
            f"services not read: {self.services_error}"
            if self.services_error
            else "services not metered: ~ = running replicas' hours x GPUs x rate"
        )
        self.query_one("#cost-workloads-title", Static).update(
            f"Workspaces and inference services this month · {note}"
        )
        table = self.query_one("#cost-workloads", RowTable)
        table.invalidate(None)
        table.set_order(
            self.ordered_keys(
                "cost-workloads",
                list(self.workloads),
                lambda c, k: workload_sort_value(c, self.workloads[k]),
            )
        )

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
        top = top_jobs([r for r in records if workspace_of(r) is None], now, 20)
        self.top = {f"{j.namespace}/{j.job}": j for j in top}
        table = self.query_one("#cost-top", RowTable)
        table.invalidate(None)
        table.set_order(
            self.ordered_keys(
                "cost-top", list(self.top), lambda c, k: cost_job_sort_value(c, self.top[k])
            )
        )
        self.set_class(any(over_budget(s) for s in spend), "-over-budget")
        self._refresh_workloads()

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
        elif table.id == "cost-workloads" and key in self.workloads:
            from gryvia_cli.tui.registry import ObjectRef
            from gryvia_cli.tui.screens.registry import DescribeScreen

            item = self.workloads[key]
            ref = ObjectRef("workspaces", item.namespace, item.name)
            if item.kind == "service":
                ref = ObjectRef("inferenceservices", item.namespace, item.name)
            self.app.push_screen(DescribeScreen(ref))
        elif key in self.scopes:
            self.app.push_screen(CostJobsScreen(self.scopes[key]))
