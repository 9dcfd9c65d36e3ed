"""The Nodes view: GPU nodes with type, count, allocation, memory, driver and phase."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.widgets import Input, Static

from gryvia_cli.core.cells import plural
from gryvia_cli.core.nodes import GpuNode
from gryvia_cli.tui.bindings import NODES, bindings
from gryvia_cli.tui.query import Query, matches, parse_query
from gryvia_cli.tui.registry import ObjectRef
from gryvia_cli.tui.rows import NODE_COLUMNS, NODE_FIELDS, node_cells, node_sort_value
from gryvia_cli.tui.screens.drill import NodePodsScreen
from gryvia_cli.tui.screens.tables import TableView
from gryvia_cli.tui.sorting import SortState
from gryvia_cli.tui.store import Change
from gryvia_cli.tui.widgets.filterinput import FilterInput
from gryvia_cli.tui.widgets.rowtable import Cell, RowTable
from gryvia_cli.usertext import user_text

RELEVANT = frozenset({"gpunodes", "nodes", "pods", "jobs"})


class NodesScreen(TableView):
    """GPU nodes from core.nodes.gpu_nodes (GryviaGpuNodes joined with Nodes)."""

    VIEW = "nodes"
    BINDINGS: ClassVar = bindings(NODES)
    SORTS: ClassVar = {"nodes-table": SortState("name")}

    def __init__(self) -> None:
        super().__init__()
        self.nodes: dict[str, GpuNode] = {}
        self.allocated: dict[str, int] = {}
        self.filter = Query()

    def compose_body(self) -> ComposeResult:
        """Filter line, table, status line."""
        yield FilterInput(
            placeholder="filter: words, gpu:H100 phase:ready",
            id="nodes-filter",
            return_to="#nodes-table",
        )
        yield RowTable(NODE_COLUMNS, self._cells, empty_text="Loading…", id="nodes-table")
        yield Static(id="nodes-status", classes="status-line")

    def on_mount(self) -> None:
        """First paint and focus."""
        super().on_mount()
        self.query_one(RowTable).focus()

    def _cells(self, key: str) -> list[Cell]:
        node = self.nodes.get(key)
        return node_cells(node, self.allocated) if node else []

    def refresh_view(self, change: Change | None) -> None:
        """Recompute when nodes or allocation changed."""
        if change is not None and not change.kinds & RELEVANT:
            return
        nodes = self.store.gpu_nodes()
        self.allocated = self.store.allocated()
        self.nodes = {n.slot: n for n in nodes}
        shown = []
        for node in nodes:
            fields = {
                "gpu": (node.gpu_type.lower(),),
                "phase": (node.phase.lower(),),
                "name": (node.name.lower(),),
            }
            if matches(self.filter, f"{node.name} {node.gpu_type}".lower(), fields):
                shown.append(node)
        table = self.query_one(RowTable)
        loaded = {"gpunodes", "nodes"} & self.store.loaded
        refused = self.store.not_allowed("gpunodes", "nodes")
        if {"gpunodes", "nodes"} <= self.store.forbidden:
            table.empty_text = refused[0].upper() + refused[1:] + "."
        else:
            table.empty_text = "No GPU nodes." if loaded else "Loading…"
        table.invalidate(None)
        table.set_order(
            self.ordered_keys(
                "nodes-table",
                [n.slot for n in shown],
                lambda col, k: node_sort_value(col, self.nodes[k], self.allocated),
            )
        )
        total = sum(n.gpus for n in nodes)
        ready = sum(1 for n in nodes if n.healthy)
        unregistered = sum(1 for n in nodes if n.source == "Node")
        status = f"{plural(len(nodes), 'GPU node')} · {ready} ready · {plural(total, 'GPU')}"
        if unregistered:
            status += f" · {unregistered} not registered as GryviaGpuNode (from labels)"
        if refused:
            status += f" · {refused}"
        self.query_one("#nodes-status", Static).update(user_text(status))

    def action_filter(self) -> None:
        """Show and focus the filter line."""
        self.query_one("#nodes-filter", FilterInput).open()

    @on(Input.Changed, "#nodes-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter = parse_query(event.value, NODE_FIELDS)
        self.refresh_view(None)

    def action_pods(self) -> None:
        """The pods on the node under the cursor."""
        key = self.query_one(RowTable).cursor_key
        node = self.nodes.get(key) if key else None
        if node is not None:
            self.app.push_screen(NodePodsScreen(node.name))

    @on(RowTable.Activated, "#nodes-table")
    def _activated(self, event: RowTable.Activated) -> None:
        self.action_pods()

    def _node_ref(self) -> ObjectRef | None:
        node = self.nodes.get(self.query_one(RowTable).cursor_key or "")
        if node is None:
            return None
        return ObjectRef("nodes" if node.source == "Node" else "gpunodes", None, node.name)

    def action_describe(self) -> None:
        """Describe the node under the cursor (its GryviaGpuNode, else its Node)."""
        from gryvia_cli.tui.screens.registry import open_object

        open_object(self.console, self._node_ref())

    def action_events(self) -> None:
        """Events of the node under the cursor."""
        from gryvia_cli.tui.screens.registry import open_events

        ref = self._node_ref()
        if ref is not None:
            open_events(
                self.console, ref.events_namespace, [ref.name], f"Events of node {ref.name}"
            )
