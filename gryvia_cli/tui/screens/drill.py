"""Drill-downs: the pods on a node (from Nodes; enter opens a pod's job) and the jobs behind
a team's cost figure (from Cost; enter opens the job). Both are pushed over their view and
go back with esc."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.widgets import Static

from gryvia_cli.core.cells import plural
from gryvia_cli.core.cost import TeamScope
from gryvia_cli.core.spend import JobSpend
from gryvia_cli.tui.bindings import COST_JOBS, PODS, bindings
from gryvia_cli.tui.drill import (
    COST_JOB_COLUMNS,
    POD_COLUMNS,
    PodRow,
    cost_job_cells,
    cost_job_sort_value,
    pod_cells,
    pod_sort_value,
    pods_on_node,
    team_jobs,
)
from gryvia_cli.tui.rows import money
from gryvia_cli.tui.screens.tables import TableView
from gryvia_cli.tui.sorting import SortState
from gryvia_cli.tui.store import Change
from gryvia_cli.tui.widgets.rowtable import Cell, RowTable
from gryvia_operator.api import GryviaUsageRecord


class NodePodsScreen(TableView):
    """The pods on node `node`, live."""

    VIEW = "nodes"
    BINDINGS: ClassVar = bindings(PODS)
    SORTS: ClassVar = {"pods-table": SortState("name")}

    def __init__(self, node: str) -> None:
        super().__init__()
        self.node = node
        self.pods: dict[str, PodRow] = {}

    def compose_body(self) -> ComposeResult:
        """Title, table, status line."""
        yield Static(f"Pods on node {self.node}", id="pods-title", classes="section-title")
        yield RowTable(POD_COLUMNS, self._cells, empty_text="Loading…", id="pods-table")
        yield Static(id="pods-status", classes="status-line")

    def on_mount(self) -> None:
        """Focus the table."""
        self.query_one(RowTable).focus()

    def _cells(self, key: str) -> list[Cell]:
        pod = self.pods.get(key)
        return pod_cells(pod) if pod else []

    def refresh_view(self, change: Change | None) -> None:
        """Recompute when pods changed."""
        if change is not None and "pods" not in change.kinds:
            return
        pods = self.store.pods()
        table = self.query_one(RowTable)
        if pods is None:
            refused = self.store.not_allowed("pods")
            table.empty_text = (refused[0].upper() + refused[1:]) if refused else "Loading…"
            rows = []
        else:
            rows = pods_on_node(pods, self.node)
            table.empty_text = f"No pods on {self.node}."
        self.pods = {p.key: p for p in rows}
        table.invalidate(None)
        table.set_order(
            self.ordered_keys(
                "pods-table", list(self.pods), lambda c, k: pod_sort_value(c, self.pods[k])
            )
        )
        gpus = sum(p.gpus for p in rows)
        self.query_one("#pods-status", Static).update(
            f"{plural(len(rows), 'pod')} · {plural(gpus, 'GPU')} · enter: the pod's job · esc: back"
        )

    @on(RowTable.Activated, "#pods-table")
    def _activated(self, event: RowTable.Activated) -> None:
        pod = self.pods.get(event.key)
        if pod is None or pod.job_key is None:
            self.notify("this pod belongs to no Gryvia job", severity="warning", timeout=3)
            return
        self.console.open_job(pod.job_key, "overview")

    def action_back(self) -> None:
        """Back to the nodes."""
        self.dismiss()


class CostJobsScreen(TableView):
    """The jobs whose usage makes up team `scope`'s spend this month."""

    VIEW = "cost"
    BINDINGS: ClassVar = bindings(COST_JOBS)
    SORTS: ClassVar = {"costjobs-table": SortState("cost", reverse=True)}

    def __init__(self, scope: TeamScope) -> None:
        super().__init__()
        self.scope = scope
        self.jobs: dict[str, JobSpend] = {}

    def compose_body(self) -> ComposeResult:
        """Title, table, status line."""
        yield Static(id="costjobs-title", classes="section-title")
        yield RowTable(
            COST_JOB_COLUMNS,
            self._cells,
            empty_text="No metered jobs this month.",
            id="costjobs-table",
        )
        yield Static(id="costjobs-status", classes="status-line")

    def on_mount(self) -> None:
        """Focus the table."""
        self.query_one(RowTable).focus()

    def _cells(self, key: str) -> list[Cell]:
        spend = self.jobs.get(key)
        return cost_job_cells(spend) if spend else []

    def refresh_view(self, change: Change | None) -> None:
        """Recompute when usage records changed."""
        if change is not None and "usage" not in change.kinds:
            return
        now = self.now()
        records = self.store.models("usage", GryviaUsageRecord)
        rows = team_jobs(self.scope, records, now)
        self.jobs = {f"{j.namespace}/{j.job}": j for j in rows}
        table = self.query_one(RowTable)
        table.invalidate(None)
        table.set_order(
            self.ordered_keys(
                "costjobs-table", list(self.jobs), lambda c, k: cost_job_sort_value(c, self.jobs[k])
            )
        )
        total = sum(j.cost for j in rows)
        currency = rows[0].currency if rows else "USD"
        self.query_one("#costjobs-title", Static).update(
            f"Jobs behind {self.scope.team}'s spend, {now:%Y-%m}: "
            f"{plural(len(rows), 'job')} · {money(total, currency)}"
        )
        self.query_one("#costjobs-status", Static).update("enter: open the job · esc: back")

    @on(RowTable.Activated, "#costjobs-table")
    def _activated(self, event: RowTable.Activated) -> None:
        self.console.open_job(event.key, "overview")

    def action_back(self) -> None:
        """Back to the cost view."""
        self.dismiss()
