"""`gryvia health [all|gpu|storage]`: GPU node health (GryviaGpuNode phase, driver, CUDA, RDMA,
GPU errors) and storage backend health (GryviaStorage phase and a fresh provisioner probe)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

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
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=1,
            metavar="SECONDS",
            help="storage: how long to wait for the probes.",
        ),
    ] = 120,
    no_probe: Annotated[
        bool,
        typer.Option("--no-probe", help="storage: read the last status, ask for no probe."),
    ] = False,
    output: OutputOpt = None,
) -> None:
    """GPU node and storage health: phase, driver, CUDA, RDMA, GPU errors, storage probes.

    gpu lists GPU nodes with phase, GPUs, memory, driver/CUDA and RDMA, then the GPUs whose
    dcgm-exporter reports an XID or double-bit ECC errors, with the job on each (read through
    the API server's pod proxy, docs/gpu-metrics.md).

    storage asks the operator to probe every storage backend (GryviaStorage) now: it sets
    the annotation gryvia.io/probe to the current UTC time, and the operator creates a claim
    of the backend's class, waits for Bound and deletes it; this waits (at most --timeout,
    progress on stderr) until each backend's status.lastProbeRequest is that time and its
    probe finished. --no-probe only reads the status. The table: NAME, BACKEND, CLASS,
    CAPACITY, USED, FREE, RDMA, PROVISIONER, PROBE (bind time or why it failed), STATUS.

    all (the default) is gpu, then storage read without a probe (fast). network has no Gryvia
    kind in this release and is reported as such.

    Exit 1 if any GPU node is unhealthy, any GPU reports an error, or any storage backend is
    not Ready or its probe did not finish in time; no storage backend at all is a warning.

    Examples:
      gryvia health
      gryvia health gpu -o json
      gryvia health storage
      gryvia health storage --no-probe -o yaml

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: HealthReport, items: [{name, gpu_type, gpus,
    memory_gb, driver, cuda, rdma, phase, message, source, node_ready, schedulable, node_exists,
    healthy}], gpuFaults: [{node, gpu, uuid, error, namespace, pod, job}], gpusRead, storage:
    [{name, backend, storageClass, capacity, used, free, rdma, provisioner,
    provisionerAnswering, phase, message, probe, probeTimedOut, healthy}]} (storage alone: only
    the storage list, without the GPU keys).
    """
    from gryvia_operator.api.names import CLI_API_VERSION

    state = session(ctx)
    fmt = state.fmt(output)
    if component is Component.network:
        warn("network: not available in this release (no Gryvia kind for it)")
        return
    healthy = True
    report: dict[str, Any] = {"apiVersion": CLI_API_VERSION, "kind": "HealthReport"}
    if component in (Component.all, Component.gpu):
        healthy = _gpu_health(state, fmt, report)
    if component in (Component.all, Component.storage):
        healthy = _storage_health(state, fmt, report, component, timeout, no_probe) and healthy
    if fmt in MACHINE_FORMATS:
        render_data(report, fmt)
    elif component is Component.all:
        warn("network: not available in this release")
    if not healthy:
        raise typer.Exit(1)


def _gpu_health(state: Any, fmt: OutputFormat, report: dict[str, Any]) -> bool:
    """The GPU part: the node table and the GPU faults printed (or put in `report` for a
    machine format); whether every node is healthy and no GPU reports an error."""
    from gryvia_cli.core.gpuuse import gpu_faults
    from gryvia_cli.views.gpumetrics import fault_jobs, read_gpus
    from gryvia_cli.views.nodes import show_node_table
    from gryvia_cli.views.reads import read_optional

    access = state.access()
    registrations = read_optional(access, r.GPUNODE)
    read = read_gpus(access, (), (), state.prometheus_url())
    readings, why = read.readings, read.note
    faults = gpu_faults(readings)
    jobs = fault_jobs(access, faults)
    if fmt in MACHINE_FORMATS:
        from gryvia_cli.core.nodes import gpu_nodes

        nodes = gpu_nodes(registrations, access.items(r.NODE))
        report["items"] = [vars(n) | {"healthy": n.healthy} for n in nodes]
        report["gpuFaults"] = [f.as_dict(jobs.get((f.namespace, f.pod))) for f in faults]
        report["gpusRead"] = len(readings)
        shown = nodes
    else:
        section("Cluster Health Check")
        shown = show_node_table(state, registrations, None, fmt is OutputFormat.wide)
        _show_faults(faults, jobs, len(readings), why)
    return not faults and all(n.healthy for n in shown)


def _storage_health(
    state: Any,
    fmt: OutputFormat,
    report: dict[str, Any],
    component: Component,
    timeout: float,
    no_probe: bool,
) -> bool:
    """The storage part: probe (only for `health storage` without --no-probe), then the
    backends' table printed (or put in `report`); whether all are Ready and answered."""
    from gryvia_cli.output import spinner
    from gryvia_cli.views.storagehealth import check_storage, render_storage_health

    probe = component is Component.storage and not no_probe
    if probe:
        with spinner("reading the storage backends") as say:
            found = check_storage(
                state.access(), probe=True, timeout=timeout, now=state.now, progress=say
            )
    else:
        found = check_storage(
            state.access(), probe=False, timeout=timeout, now=state.now, progress=lambda _: None
        )
    if fmt in MACHINE_FORMATS:
        report["storage"] = found.items()
    else:
        section("Storage")
        render_storage_health(found)
    return found.healthy


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
