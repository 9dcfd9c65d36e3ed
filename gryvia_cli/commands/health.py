"""`gryvia health [gpu]`: GPU node health (GryviaGpuNode phase, driver, CUDA, RDMA)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from gryvia_cli.cli.options import OutputOpt
from gryvia_cli.cli.session import session
from gryvia_cli.core.gpuuse import GpuFault
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    info,
    render_data,
    render_table,
    section,
    warn,
)

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
    """GPU node health: phase, driver, CUDA, RDMA, and GPUs reporting errors.

    Lists GPU nodes with phase, GPUs, memory, driver/CUDA and RDMA, then the GPUs whose
    dcgm-exporter reports an XID or double-bit ECC errors, with the job on each (read through
    the API server's pod proxy, docs/gpu-metrics.md); exit 1 if any node is unhealthy or any
    GPU reports an error.

    storage and network have no Gryvia kinds in this release and are reported as such.

    Examples:
      gryvia health
      gryvia health gpu -o json

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: HealthReport, items: [{name, gpu_type, gpus,
    memory_gb, driver, cuda, rdma, phase, message, source, node_ready, schedulable, node_exists,
    healthy}], gpuFaults: [{node, gpu, uuid, error, namespace, pod, job}], gpusRead}.
    """
    from gryvia_cli.core.gpuuse import gpu_faults
    from gryvia_cli.views.gpumetrics import fault_jobs, read_gpus
    from gryvia_cli.views.nodes import show_node_table
    from gryvia_cli.views.reads import read_optional

    state = session(ctx)
    fmt = state.fmt(output)
    if component in (Component.storage, Component.network):
        warn(f"{component.value}: not available in this release (no Gryvia kind for it)")
        return
    access = state.access()
    registrations = read_optional(access, r.GPUNODE)
    read = read_gpus(access, (), (), state.prometheus_url())
    readings, why = read.readings, read.note
    faults = gpu_faults(readings)
    jobs = fault_jobs(access, faults)
    if fmt in MACHINE_FORMATS:
        from gryvia_cli.core.nodes import gpu_nodes
        from gryvia_operator.api.names import CLI_API_VERSION

        nodes = gpu_nodes(registrations, access.items(r.NODE))
        render_data(
            {
                "apiVersion": CLI_API_VERSION,
                "kind": "HealthReport",
                "items": [vars(n) | {"healthy": n.healthy} for n in nodes],
                "gpuFaults": [f.as_dict(jobs.get((f.namespace, f.pod))) for f in faults],
                "gpusRead": len(readings),
            },
            fmt,
        )
        shown = nodes
    else:
        section("Cluster Health Check")
        shown = show_node_table(state, registrations, None, fmt is OutputFormat.wide)
        _show_faults(faults, jobs, len(readings), why)
        if component is Component.all:
            warn("storage, network: not available in this release")
    if faults or any(not n.healthy for n in shown):
        raise typer.Exit(1)


def _show_faults(
    faults: list[GpuFault], jobs: dict[tuple[str, str], str | None], read: int, why: str
) -> None:
    if not read:
        warn(f"GPU errors not checked: {why or 'no GPU reported'}")
        return
    if not faults:
        info(f"GPU errors: none on the {read} GPUs the dcgm-exporters report")
        return
    section("GPU faults")
    render_table(
        ["node", "gpu", "error", "job", "pod"],
        [
            [
                f.node,
                f.gpu,
                f.error,
                f"{f.namespace}/{job}" if (job := jobs.get((f.namespace, f.pod))) else "-",
                f"{f.namespace}/{f.pod}" if f.pod else "- (free)",
            ]
            for f in faults
        ],
    )
