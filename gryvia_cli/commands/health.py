"""`gryvia health [gpu]`: GPU node health (GryviaGpuNode phase, driver, CUDA, RDMA)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from gryvia_cli.cli.options import OutputOpt
from gryvia_cli.cli.session import session
from gryvia_cli.kube import resources as r
from gryvia_cli.output import MACHINE_FORMATS, OutputFormat, render_data, section, warn

app = typer.Typer()


class Component(StrEnum):
    """What `health` checks."""

    all = "all"
    gpu = "gpu"
    storage = "storage"
    network = "network"


@app.command("health", rich_help_panel="Cluster")
def health(
    ctx: typer.Context,
    component: Annotated[
        Component, typer.Argument(help="all, gpu, storage or network.")
    ] = Component.all,
    output: OutputOpt = None,
) -> None:
    """GPU node health: phase, driver, CUDA, RDMA.

    Lists GPU nodes with phase, GPUs, memory, driver/CUDA and RDMA; exit 1 if any is
    unhealthy.

    storage and network have no Gryvia kinds in this release and are reported as such.

    Examples:
      gryvia health
      gryvia health gpu -o json

    JSON/YAML: {items: [{name, gpu_type, gpus, memory_gb, driver, cuda, rdma, phase, message,
    source, node_ready, schedulable, node_exists, healthy}]}.
    """
    from gryvia_cli.views.nodes import show_node_table
    from gryvia_cli.views.reads import read_optional

    state = session(ctx)
    fmt = state.fmt(output)
    if component in (Component.storage, Component.network):
        warn(f"{component.value}: not available in this release (no Gryvia kind for it)")
        return
    registrations = read_optional(state.access(), r.GPUNODE)
    if fmt in MACHINE_FORMATS:
        from gryvia_cli.core.nodes import gpu_nodes

        nodes = gpu_nodes(registrations, state.access().items(r.NODE))
        render_data({"items": [vars(n) | {"healthy": n.healthy} for n in nodes]}, fmt)
        shown = nodes
    else:
        section("Cluster Health Check")
        shown = show_node_table(state, registrations, None, fmt is OutputFormat.wide)
        if component is Component.all:
            warn("storage, network: not available in this release")
    if any(not n.healthy for n in shown):
        raise typer.Exit(1)
