"""The Capacity view: per GPU type total, allocated, free and pending as bars, shortfall
highlighted, and a per-node grid."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from gryvia_cli.core.capacity import compute_capacity
from gryvia_cli.tui.screens.base import ViewScreen
from gryvia_cli.tui.store import Change
from gryvia_cli.tui.widgets.capacity import CapacityBars, NodeGrid
from gryvia_cli.usertext import user_text

RELEVANT = frozenset({"jobs", "gpunodes", "nodes", "pods"})


class CapacityScreen(ViewScreen):
    """Capacity from core.capacity.compute_capacity."""

    VIEW = "capacity"

    def compose_body(self) -> ComposeResult:
        """Bars, then the node grid, in one scroll."""
        with VerticalScroll(id="capacity-scroll"):
            yield Static("GPU types", classes="section-title")
            yield CapacityBars(id="capacity-bars")
            yield Static(
                "Nodes  (■ allocated  □ free  ◇ reserved  ✗ not usable)", classes="section-title"
            )
            yield NodeGrid(id="capacity-grid")
        yield Static(id="capacity-status", classes="status-line")

    def on_mount(self) -> None:
        """First paint and focus."""
        super().on_mount()
        self.query_one("#capacity-scroll").focus()

    def on_resize(self) -> None:
        """Bars and grid depend on the width."""
        self.refresh_view(None)

    def refresh_view(self, change: Change | None) -> None:
        """Recompute when jobs, nodes or pods changed."""
        if change is not None and not change.kinds & RELEVANT:
            return
        store = self.store
        report = compute_capacity(
            store.gpu_nodes(),
            store.allocated(),
            (j.summary for j in store.jobs.values()),
            store.pods(),
        )
        self.query_one(CapacityBars).show(report)
        self.query_one(NodeGrid).show(report)
        short = [f"{t.gpu_type} short {t.shortfall}" for t in report.types if t.shortfall]
        source = "pods" if store.pods() is not None else "jobs' nodesAllocated (pods not readable)"
        status = f"allocation from {source}"
        if short:
            status = "⚠ " + ", ".join(short) + " · " + status
        refused = store.not_allowed("gpunodes", "nodes")
        if refused:
            status += f" · {refused}"
        self.query_one("#capacity-status", Static).update(user_text(status))
        self.set_class(bool(short), "-shortfall")
