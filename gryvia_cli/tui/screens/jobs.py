"""The Jobs view: every job live, sortable, filterable, markable, with job actions."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.timer import Timer
from textual.widgets import Input, Static

from gryvia_cli.core.paging import count_words
from gryvia_cli.tui.bindings import JOBS, bindings, write_actions
from gryvia_cli.tui.kindnames import Kind
from gryvia_cli.tui.messages import JobsDeleted
from gryvia_cli.tui.query import Query, matches, parse_query
from gryvia_cli.tui.rows import JOB_COLUMNS, JOB_FIELDS, job_cells, job_search, job_sort_value
from gryvia_cli.tui.screens.tables import TableView
from gryvia_cli.tui.sorting import SortState
from gryvia_cli.tui.store import Change, JobItem
from gryvia_cli.tui.widgets.filterinput import FilterInput
from gryvia_cli.tui.widgets.rowtable import Cell, RowTable
from gryvia_cli.usertext import user_text

if TYPE_CHECKING:
    from gryvia_cli.core.spend import JobCost

TICK_SECONDS = 2.0
LOADING_ORDER_SECONDS = 0.5
"""While the jobs list arrives page by page, the rows are ordered again at most this often."""
CLOCK_COLUMNS = frozenset({"duration", "cost"})
"""Columns whose order moves with the clock (a running job's duration and cost grow; AGE sorts
by creation time, whose order does not): re-sorted at each tick."""
ORDER_KINDS: tuple[Kind, ...] = ("jobs", "usage", "skus", "tenants", "quotas")
"""Kinds the order of the jobs depends on (a job's cost: its usage, the prices, its tenant's
and quotas' rates)."""


class JobsScreen(TableView):
    """Jobs table with filter and sort; opens the Job view."""

    VIEW = "jobs"
    BINDINGS: ClassVar = bindings(JOBS)
    WRITE_ACTIONS: ClassVar = write_actions(JOBS)
    SORTS: ClassVar = {"jobs-table": SortState("age")}

    def __init__(self) -> None:
        super().__init__()
        self.query_text = ""
        self.filter: Query = Query()
        self._search: dict[str, tuple[str, dict[str, tuple[str, ...]]]] = {}
        self._costs: dict[str, JobCost] = {}
        self._filter_due = False
        self._deleting: set[str] = set()
        """Jobs this view was told to delete: their DELETED needs no notice ("Done" says it)."""
        self._ticks = 0
        self._sorted: list[str] = []
        """Every job in the order of the sort, as of `_sorted_for` (`_order_stamp`): filtering
        and clearing the filter take their rows from it instead of sorting them again."""
        self._sorted_for: tuple[object, ...] | None = None
        self._ordered_at = 0.0
        """When the rows were last ordered (monotonic seconds): see `_order_later`."""
        self._order_timer: Timer | None = None

    def compose_body(self) -> ComposeResult:
        """Filter line, table, status line."""
        yield FilterInput(
            placeholder="filter: words phase:running type:training gpu:H100 ns:team-a !phase:x",
            id="jobs-filter",
            return_to="#jobs-table",
        )
        yield RowTable(JOB_COLUMNS, self._cells, markable=True, id="jobs-table")
        yield Static(id="jobs-status", classes="status-line")

    @property
    def sort_column(self) -> str:
        """The column the jobs are sorted by."""
        return self.sorts["jobs-table"].column

    @property
    def sort_reverse(self) -> bool:
        """True when the order is reversed."""
        return self.sorts["jobs-table"].reverse

    @property
    def table(self) -> RowTable:
        """The jobs table."""
        return self.query_one("#jobs-table", RowTable)

    def on_mount(self) -> None:
        """First paint, clock tick, focus the table."""
        super().on_mount()
        self.set_interval(TICK_SECONDS, self._tick)
        self.table.focus()

    # -- data ------------------------------------------------------------------------------

    def cost_of(self, item: JobItem) -> JobCost:
        """Cost so far of a job (cached until the next tick or change)."""
        cost = self._costs.get(item.key)
        if cost is None:
            cost = self.store.job_cost(item, self.now())
            self._costs[item.key] = cost
        return cost

    def _cells(self, key: str) -> list[Cell]:
        item = self.store.jobs.get(key)
        if item is None:
            return []
        return job_cells(item, self.now(), self.cost_of(item))

    def refresh_view(self, change: Change | None) -> None:
        """Update changed rows, then order and filter again."""
        table = self.table
        if change is None or change.kinds & {"usage", "skus"}:
            self._search.clear()
            self._costs.clear()
            table.invalidate(None)
        else:
            keys = change.keys.get("jobs", set())
            if not keys and "jobs" not in change.listed:
                return  # a first list with no jobs still replaces "Loading jobs…"
            for key in keys:
                self._search.pop(key, None)
                self._costs.pop(key, None)
            table.invalidate(keys)
        cursor = table.cursor_key
        if self._order_later():
            return
        self._reorder()
        if change is not None:
            self._tell_if_gone(cursor, change.keys.get("jobs", set()))

    def _tell_if_gone(self, cursor: str | None, changed: set[str]) -> None:
        """The job that was under the cursor (`cursor`) left the store in this batch (deleted,
        or gone in a relist): say so, unless this view deleted it (its write says "Done")."""
        jobs = self.store.jobs
        mine = {k for k in self._deleting & changed if k not in jobs}
        self._deleting -= mine
        if cursor is None or cursor not in changed or cursor in jobs or cursor in mine:
            return
        where = self.table.cursor_key or "no job"
        self.notify(
            f"{cursor} was deleted; the cursor is on {where}", title="Job gone", severity="warning"
        )

    def _order_later(self) -> bool:
        """While the jobs list is still arriving and rows are shown, order them at most once
        per `LOADING_ORDER_SECONDS` (each order sorts every job loaded so far; at 100,000
        jobs a sort per page would take the CPU the pages need): True when this change's
        order is left to a timer."""
        if "jobs" not in self.store.paging or not self.table.order:
            return False
        wait = self._ordered_at + LOADING_ORDER_SECONDS - time.monotonic()
        if wait <= 0:
            return False
        if self._order_timer is None:
            self._order_timer = self.set_timer(wait, self._timed_order)
        return True

    def _timed_order(self) -> None:
        self._order_timer = None
        self._reorder()

    def _tick(self) -> None:
        if not self.is_current:
            return
        self._costs.clear()
        self.table.invalidate(None)
        if self.sort_column in CLOCK_COLUMNS:
            self._ticks += 1
            self._reorder()

    def _matches(self, key: str, item: JobItem) -> bool:
        facts = self._search.get(key)
        if facts is None:
            facts = self._search[key] = job_search(item)
        return matches(self.filter, facts[0], facts[1])

    def _order_stamp(self) -> tuple[object, ...]:
        """What the order of every job depends on: the sort, the clock's ticks for the
        columns that move with it, and the versions of `ORDER_KINDS`."""
        state = self.sorts["jobs-table"]
        ticks = self._ticks if state.column in CLOCK_COLUMNS else 0
        versions = self.store.versions
        return (state, ticks, *(versions[kind] for kind in ORDER_KINDS))

    def _reorder(self) -> None:
        """Show the jobs the filter lets through, in the order of the sort. Every job's order
        is sorted once per `_order_stamp` and reused: the filter (and esc, which clears it)
        only picks rows from it. A filter applied while that order is stale sorts its rows
        alone."""
        jobs = self.store.jobs
        stamp = self._order_stamp()
        if stamp == self._sorted_for:
            keys = self._sorted
            if self.filter:
                keys = [k for k in keys if self._matches(k, jobs[k])]
        else:
            keys = (
                [k for k, item in jobs.items() if self._matches(k, item)]
                if self.filter
                else list(jobs)
            )
            now = self.now()
            keys = self.ordered_keys(
                "jobs-table", keys, lambda col, k: job_sort_value(col, jobs[k], now, self.cost_of)
            )
            if not self.filter:
                self._sorted, self._sorted_for = keys, stamp
        self._ordered_at = time.monotonic()
        table = self.table
        if "jobs" not in self.store.loaded:
            table.empty_text = "Loading jobs…"
        elif self.filter:
            table.empty_text = "No job matches the filter (esc clears it)"
        else:
            table.empty_text = f"No jobs in {self.console.target.namespace_label} namespace(s)"
        table.set_order(keys)
        self._status(len(keys), len(jobs))

    def _status(self, shown: int, total: int) -> None:
        loading = "jobs" in self.store.paging
        parts = [count_words(total, "jobs", shown=shown if self.filter else None, loading=loading)]
        if self.table.marks:
            parts.append(f"{len(self.table.marks)} marked")
        arrow = "↓" if self.sort_reverse else "↑"
        hidden = " (hidden column)" if self.sort_column in self.table.hidden else ""
        parts.append(f"sort {self.sort_column}{arrow}{hidden}")
        if self.query_text:
            parts.append(f"filter: {self.query_text}")
        if self.filter.unknown:
            known = " ".join(f"{f}:" for f in JOB_FIELDS)
            parts.append(f"unknown field {', '.join(self.filter.unknown)} (use {known})")
        self.query_one("#jobs-status", Static).update(user_text(" · ".join(parts)))

    # -- filter and sort -------------------------------------------------------------------

    def action_filter(self) -> None:
        """Show and focus the filter line."""
        self.query_one("#jobs-filter", FilterInput).open()

    @on(Input.Changed, "#jobs-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        # Keys typed within one frame are filtered once, after the frame, with the last text:
        # each pass over 10,000 jobs costs tens of milliseconds.
        if not self._filter_due:
            self._filter_due = True
            self.call_after_refresh(self._apply_filter)

    def _apply_filter(self) -> None:
        self._filter_due = False
        text = self.query_one("#jobs-filter", FilterInput).value.strip()
        if text == self.query_text:
            return  # applied already (esc cleared it at once)
        self.query_text = text
        self.filter = parse_query(text, JOB_FIELDS)
        self._reorder()

    def action_clear(self) -> None:
        """Clear filter and marks."""
        box = self.query_one("#jobs-filter", FilterInput)
        box.value = ""
        box.close()
        self.table.set_marks(())
        if self.query_text:
            self._apply_filter()  # now, not with the old filter first
        else:
            self._status(len(self.table.order), len(self.store.jobs))

    def resort(self, table: RowTable) -> None:
        """Order the rows again (sort changed)."""
        self._reorder()

    # -- marks and actions -----------------------------------------------------------------

    def action_toggle_mark(self) -> None:
        """Mark or unmark the row under the cursor."""
        self.table.toggle_mark()
        self._status(len(self.table.order), len(self.store.jobs))

    def action_mark_all(self) -> None:
        """Mark every row shown (again: unmark all)."""
        table = self.table
        table.set_marks(() if len(table.marks) == len(table.order) else table.order)
        self._status(len(table.order), len(self.store.jobs))

    def _targets(self) -> list[str]:
        if self.table.marks:
            return [k for k in self.table.order if k in self.table.marks]
        key = self.table.cursor_key
        return [key] if key else []

    def action_describe(self) -> None:
        """Open the job under the cursor."""
        self.console.open_job(self.table.cursor_key, "overview")

    def action_logs(self) -> None:
        """Open the job's logs."""
        self.console.open_job(self.table.cursor_key, "logs")

    @on(JobsDeleted)
    def _deletes_done(self, message: JobsDeleted) -> None:
        """Deletes that failed leave the jobs in place: their going later is news again."""
        self._deleting.difference_update(key for key, _ in message.failed)

    @on(RowTable.Activated, "#jobs-table")
    def _activated(self, event: RowTable.Activated) -> None:
        self.console.open_job(event.key, "overview")

    def action_cancel(self) -> None:
        """Cancel marked jobs or the one under the cursor."""
        self.confirm_write("cancel", self._targets())

    def action_delete(self) -> None:
        """Delete marked jobs or the one under the cursor."""
        keys = self._targets()

        def delete() -> None:
            self._deleting.update(keys)
            self.write_jobs("delete", keys)

        self.confirm_jobs("delete", keys, delete)

    def action_resubmit(self) -> None:
        """Submit a copy of the job under the cursor."""
        key = self.table.cursor_key
        self.confirm_write("resubmit", [key] if key else [])

    def action_submit(self) -> None:
        """Go to the submit form."""
        self.console.action_view("submit")

    def action_events(self) -> None:
        """Events of the job under the cursor and of its pods."""
        from gryvia_cli.tui.screens.registry import open_job_events

        open_job_events(self.console, self.table.cursor_key)
