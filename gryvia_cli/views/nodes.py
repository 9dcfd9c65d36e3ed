"""The GPU node table `list nodes` and `health` print."""

from __future__ import annotations

from typing import Any

from gryvia_cli.kube import resources as r
from gryvia_cli.output import info, render_table
from gryvia_cli.views.reads import ACTIVE_PODS, try_read


def show_node_table(
    state: Any, registrations: list[dict[str, Any]], gpu_type: str | None, wide: bool
) -> list[Any]:
    """Print the GPU node table of `registrations` (GryviaGpuNode objects) and the Nodes,
    only `gpu_type` when given, with allocated and free GPUs when `wide`; return the
    GpuNodes shown. Unreadable Nodes or pods become warnings."""
    from gryvia_cli.core.nodes import (
        NODE_COLUMNS,
        NODE_WIDE_COLUMNS,
        allocated_by_node,
        gpu_nodes,
        node_row,
    )

    access = state.access()
    nodes = try_read(lambda: access.items(r.NODE), "Nodes")
    shown = [
        n
        for n in gpu_nodes(registrations, nodes)
        if gpu_type is None or n.gpu_type.lower() == gpu_type.lower()
    ]
    if not shown:
        info("No GPU nodes registered." if gpu_type is None else f"No {gpu_type} nodes.")
        return []
    allocated = None
    if wide:
        pods = try_read(lambda: access.items(r.POD, None, field_selector=ACTIVE_PODS), "pods")
        allocated = allocated_by_node(pods) if pods is not None else None
    render_table(
        list(NODE_WIDE_COLUMNS if wide else NODE_COLUMNS),
        [node_row(n, allocated, wide=wide) for n in shown],
    )
    unregistered = sum(1 for n in shown if n.source == "Node")
    if unregistered:
        info(
            f"{unregistered} node(s) shown from their GPU labels: no GryviaGpuNode yet "
            "(is the operator running?)"
        )
    return shown
