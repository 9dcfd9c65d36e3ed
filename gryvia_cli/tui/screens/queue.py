"""The Queue view: jobs not running yet, their place per GPU type, wait and reason."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.widgets import Input, Static

from gryvia_cli.core.queue import QueueEntry, build_queue
from gryvia_cli.tui.bindings import QUEUE, bindings, write_actions
from gryvia_cli.tui.query import Query, matches, parse_query
from gryvia_cli.tui.rows import QUEUE_COLUMNS, queue_cells, queue_sort_value
from gryvia_cli.tui.screens.tables import TableView
from gryvia_cli.tui.sorting import SortState
from gryvia_cli.tui.store import Change
from gryvia_cli.tui.widgets.filterinput import FilterInput
from gryvia_cli.tui.widgets.rowtable import Cell, RowTable
from gryvia_cli.usertext import user_text

QUEUE_FIELDS = ("gpu", "phase", "ns", "name")
RELEVANT = frozenset({"jobs", "gpunodes", "nodes", "pods"})


class QueueScreen(TableView):
    """Waiting jobs in queue order (core.queue)."""

    VIEW = "queue"
    BINDINGS: ClassVar = bindings(QUEUE)
    WRITE_ACTIONS: ClassVar = write_actions(QUEUE)
    SORTS: ClassVar = {"queue-table": SortState("position")}

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[str, QueueEntry] = {}
        self.filter = Query()

    def compose_body(self) -> ComposeResult:
        """Filter line, table, status line."""
        yield FilterInput(
            placeholder="filter: words, gpu:H100 phase:queued ns:team-a",
            id="queue-filter",
            return_to="#queue-table",
        )
        yield RowTable(QUEUE_COLUMNS, self._cells, id="queue-table")
        yield Static(id="queue-status", classes="status-line")

    def on_mount(self) -> None:
        """First paint; refresh wait times every few seconds."""
        super().on_mount()
        self.set_interval(5.0, self._tick)
        self.query_one(RowTable).focus()

    def _tick(self) -> None:
        if self.is_current:
            self.refresh_view(None)

    def _cells(self, key: str) -> list[Cell]:
        entry = self.entries.get(key)
        return queue_cells(entry) if entry else []

    def refresh_view(self, change: Change | None) -> None:
        """Recompute the queue (core.queue.build_queue) when jobs or nodes changed."""
        if change is not None and not change.kinds & RELEVANT:
            return
        store = self.store
        queue = build_queue(
            (j.summary for j in store.jobs.values()),
            store.gpu_nodes(),
            store.allocated(),
            {},
            self.now(),
        )
        self.entries = {}
        order = []
        index: dict[str, int] = {}
        for place, entry in enumerate(queue):
            key = f"{entry.job.namespace}/{entry.job.name}"
            self.entries[key] = entry
            index[key] = place
            text = f"{entry.job.name} {entry.job.namespace} {entry.reason}".lower()
            fields = {
                "gpu": (entry.job.type_key.lower(),),
                "phase": (entry.job.phase.lower(),),
                "ns": (entry.job.namespace.lower(),),
                "name": (entry.job.name.lower(),),
            }
            if matches(self.filter, text, fields):
                order.append(key)
        table = self.query_one(RowTable)
        table.empty_text = (
            "Loading…" if "jobs" not in store.loaded else "Nothing waiting: every job is placed"
        )
        table.invalidate(None)
        table.set_order(
            self.ordered_keys(
                "queue-table",
                order,
                lambda col, k: queue_sort_value(col, self.entries[k], index[k]),
            )
        )
        by_type: dict[str, int] = {}
        for entry in queue:
            by_type[entry.job.type_key] = by_type.get(entry.job.type_key, 0) + 1
        summary = ", ".join(f"{t} {n}" for t, n in sorted(by_type.items())) or "none"
        self.query_one("#queue-status", Static).update(
            user_text(f"{len(queue)} waiting · by GPU type: {summary}")
        )

    def action_filter(self) -> None:
        """Show and focus the filter line."""
        self.query_one("#queue-filter", FilterInput).open()

    @on(Input.Changed, "#queue-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter = parse_query(event.value, QUEUE_FIELDS)
        self.refresh_view(None)

    def action_describe(self) -> None:
        """Open the job under the cursor."""
        self.console.open_job(self.query_one(RowTable).cursor_key, "overview")

    @on(RowTable.Activated)
    def _activated(self, event: RowTable.Activated) -> None:
        self.console.open_job(event.key, "overview")

    def action_cancel(self) -> None:
        """Cancel the job under the cursor."""
        key = self.query_one(RowTable).cursor_key
        self.confirm_write("cancel", [key] if key else [])
