"""`gryvia capacity` (alias `cap`): GPUs per type and the demand waiting for them.

Total, allocated, free, pending, shortfall and headroom; `-o wide` adds the nodes.
"""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.options import OutputOpt, RedrawEveryOpt
from gryvia_cli.cli.session import Session, session
from gryvia_cli.core.cells import plural
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    emit,
    info,
    render_data,
    render_table,
    section,
    warn,
)

app = typer.Typer()


@app.command("capacity", rich_help_panel="Cluster")
def capacity(
    ctx: typer.Context,
    gpu_type: Annotated[
        str | None,
        typer.Option(
            "--gpu-type",
            help="Only this GPU type (case-insensitive); leaves out jobs without a type.",
        ),
    ] = None,
    output: OutputOpt = None,
    watch: RedrawEveryOpt = None,
) -> None:
    """GPUs per type: total, allocated, free, pending, shortfall.

    TOTAL counts every GPU node (GryviaGpuNodes, else nodes with GPU labels); ALLOCATED is
    what bound, unfinished pods hold; FREE only counts Ready, schedulable nodes that no
    GryviaReservation holds; RESERVED is the unallocated GPUs of reserved nodes; PENDING is
    the GPUs of jobs not placed yet (and of placed jobs' unscheduled pods); SHORTFALL =
    max(PENDING - FREE, 0), HEADROOM = max(FREE - PENDING, 0) per type, and their sums in
    the totals. A NOTE flags demand for a type no node has and names each node in
    maintenance with its reason (`gryvia maintenance start`): its GPUs are never free.

    Examples:
      gryvia capacity
      gryvia capacity --gpu-type H100 -o wide
      gryvia capacity -o json | jq '.totals'
      gryvia capacity -w 10

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: Capacity, types: [{gpuType, nodes, total,
    allocated, free, pending, shortfall, headroom, unavailable, suspended, reserved,
    sharedNodes, maintenance, notes}], totals, unspecifiedPending, nodes: [{name, gpuType,
    total, allocated, free, phase, usable, reservedFor, maintenance}], warnings}.
    """
    state = session(ctx)
    fmt = state.fmt(output)
    if not watch:
        _show(state, fmt, gpu_type)
        return
    from gryvia_cli.kube import resources as r
    from gryvia_cli.views.streams import new_link
    from gryvia_cli.views.watching import redraw_on_changes

    link = new_link(state.access())  # waits out a stalled or cut connection (until Ctrl-C)
    watched = [(r.AIJOB, None), (r.POD, None), (r.NODE, None)]
    redraw_on_changes(
        state.access(), watched, lambda: link.call(lambda: _show(state, fmt, gpu_type)), watch
    )


def _show(state: Session, fmt: OutputFormat, gpu_type: str | None) -> None:
    """Read the supply and demand and print the report in `fmt`."""
    from gryvia_cli.core.capacity import CAPACITY_COLUMNS, capacity_rows
    from gryvia_cli.views.capacity import capacity_document, read_capacity

    report, notes = read_capacity(state, gpu_type)
    if fmt in MACHINE_FORMATS:
        render_data(capacity_document(report, notes), fmt)
        return
    for text in notes:
        warn(text)
    if fmt is OutputFormat.name:
        for row in report.types:
            emit(row.gpu_type)
        return
    if not report.types and not report.unspecified_pending:
        info("No GPU nodes and no GPU demand" + (f" for {gpu_type}." if gpu_type else "."))
        return
    render_table(list(CAPACITY_COLUMNS), capacity_rows(report))
    t = report.totals
    emit(
        f"Total: {plural(t.total, 'GPU')} on {plural(t.nodes, 'node')}, "
        f"{t.allocated} allocated, {t.free} free, {t.reserved} reserved, "
        f"{t.pending} pending"
    )
    if report.unspecified_pending:
        emit(
            "Pending without a GPU type (any node fits): "
            + plural(report.unspecified_pending, "GPU")
        )
    emit(f"Shortfall: {plural(t.shortfall, 'GPU')}   Headroom: {plural(t.headroom, 'GPU')}")
    if fmt is OutputFormat.wide and report.nodes:
        from gryvia_cli.core.cells import Marked
        from gryvia_operator.api.maintenance import maintenance_text

        section("Nodes")
        render_table(
            ["node", "gpu type", "total", "allocated", "free", "status", "reserved for"],
            [
                [
                    n.name,
                    n.gpu_type,
                    n.total,
                    n.allocated,
                    n.free,
                    Marked(
                        n.phase if n.maintenance is None else maintenance_text(n.maintenance),
                        "ok" if n.usable else "warn",
                    ),
                    n.reserved_for or "-",
                ]
                for n in report.nodes
            ],
        )
