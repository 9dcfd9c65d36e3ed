"""`gryvia seff JOB`: one job's GPU efficiency in the shape of Slurm's seff."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.options import NamespaceOpt, OutputOpt
from gryvia_cli.cli.session import Session, session
from gryvia_cli.output import MACHINE_FORMATS, emit, render_data

app = typer.Typer()


@app.command("seff", rich_help_panel="Workloads")
def seff(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The job (GryviaAIJob) name.")],
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """A job's efficiency as Slurm's seff prints it: state, wall time, GPU efficiency.

    GPU Efficiency is the job's mean GPU activity as the operator sampled it from
    dcgm-exporter (with its p95, the sample count and the DCGM field, docs/gpu-metrics.md);
    GPU Memory Efficiency the most memory one of its GPUs used over the GPU's memory; then
    allocated and active GPU-hours and what the idle part cost at the job's rate. A job the
    operator never sampled says so. CPU and memory efficiency need the metrics.k8s.io API
    and are not measured.

    Examples:
      gryvia seff llama-ddp -n tenant-nlp
      gryvia seff llama-ddp -o json

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: SeffReport, namespace, job, user, state,
    nodes, gpus, gpuType, wallSeconds, gpuEfficiencyPercent, p95ActivityPercent, field, samples,
    gpuMemoryEfficiencyPercent, peakMemoryUsedBytes, gpuMemoryMiB, gpuHours, activeGpuHours,
    idleCost, currency}; null where not known.
    """
    from gryvia_cli.core.seff import efficiency, seff_lines
    from gryvia_cli.views.job import job_snapshot

    state = session(ctx)
    fmt = state.fmt(output)
    ns = state.resolve_namespace(namespace)
    snap = job_snapshot(state, name, ns, gpus=False)
    cost = snap.cost
    per_gpu = (
        cost.per_hour / snap.summary.total_gpus
        if cost is not None and cost.per_hour and snap.summary.total_gpus
        else None
    )
    figures = efficiency(
        snap.summary,
        dict((snap.job.get("status") or {}).get("metrics") or {}),
        snap.nodes,
        _gpu_memory_mib(state, snap.nodes),
        per_gpu,
        cost.currency if cost is not None else "USD",
        state.now(),
    )
    if fmt in MACHINE_FORMATS:
        from gryvia_operator.api.names import CLI_API_VERSION

        doc = {"apiVersion": CLI_API_VERSION, "kind": "SeffReport"}
        render_data(doc | figures.as_dict(), fmt)
        return
    for line in seff_lines(figures, state.access().context.name):
        emit(line)


def _gpu_memory_mib(state: Session, nodes: tuple[str, ...]) -> int | None:
    """The GPU memory of the first node the job ran on (GFD's `nvidia.com/gpu.memory`)."""
    from gryvia_cli.errors import GryviaError
    from gryvia_cli.kube import resources as r

    for node in nodes:
        try:
            labels = state.access().get(r.NODE, node).get("metadata", {}).get("labels") or {}
        except GryviaError:
            continue
        value = str(labels.get("nvidia.com/gpu.memory") or "")
        if value.isdigit():
            return int(value)
    return None
