"""`gryvia seff JOB`: a job's efficiency in the shape Slurm's `seff` prints it, for GPUs.

GPU efficiency is the mean GPU activity the operator sampled (`status.metrics`,
docs/gpu-metrics.md); GPU memory efficiency the most frame-buffer memory one of its GPUs used
over the GPU's memory (the node's `nvidia.com/gpu.memory` label, MiB); active GPU-hours are
allocated GPU-hours x the mean activity, and the idle cost the rest of them at the job's rate
(Decimal, in the catalog's currency).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from gryvia_cli.core.jobs import JobSummary, durations
from gryvia_cli.core.slurmfmt import slurm_elapsed

MIB = 1024 * 1024


@dataclass(frozen=True)
class Efficiency:
    """One job's efficiency figures; None where the figure is not known (never sampled, no
    memory label, no price)."""

    job: JobSummary
    nodes: tuple[str, ...]
    wall_seconds: float
    gpu_hours: float
    metrics: dict[str, Any]
    gpu_memory_mib: int | None
    rate: Decimal | None
    """Price of one GPU-hour, in `currency`."""
    currency: str

    @property
    def sampled(self) -> bool:
        """Whether the operator sampled the job's GPUs at least once."""
        return bool(self.metrics.get("samples"))

    @property
    def gpu_efficiency(self) -> float | None:
        """Mean GPU activity over the samples, percent."""
        value = self.metrics.get("meanActivityPercent")
        return float(value) if self.sampled and value is not None else None

    @property
    def memory_efficiency(self) -> float | None:
        """Peak GPU memory used over the GPU's memory, percent."""
        peak = self.metrics.get("peakMemoryUsedBytes")
        if peak is None or not self.gpu_memory_mib:
            return None
        return min(100.0, 100 * float(peak) / MIB / self.gpu_memory_mib)

    @property
    def active_gpu_hours(self) -> float | None:
        """Allocated GPU-hours x the mean activity."""
        mean = self.gpu_efficiency
        return None if mean is None else self.gpu_hours * mean / 100

    @property
    def idle_cost(self) -> Decimal | None:
        """(allocated - active GPU-hours) x the rate, 2 places."""
        active = self.active_gpu_hours
        if active is None or self.rate is None:
            return None
        idle = Decimal(str(round(self.gpu_hours - active, 6)))
        return (idle * self.rate).quantize(Decimal("0.01"))

    def as_dict(self) -> dict[str, Any]:
        """The documented JSON shape of `seff JOB -o json`."""
        j = self.job
        return {
            "namespace": j.namespace,
            "job": j.name,
            "user": j.submitter or None,
            "state": j.phase,
            "nodes": list(self.nodes),
            "gpus": j.total_gpus,
            "gpuType": j.gpu_type or None,
            "wallSeconds": round(self.wall_seconds),
            "gpuEfficiencyPercent": _round(self.gpu_efficiency),
            "p95ActivityPercent": self.metrics.get("p95ActivityPercent") if self.sampled else None,
            "field": self.metrics.get("field") if self.sampled else None,
            "samples": int(self.metrics.get("samples") or 0),
            "gpuMemoryEfficiencyPercent": _round(self.memory_efficiency),
            "peakMemoryUsedBytes": self.metrics.get("peakMemoryUsedBytes"),
            "gpuMemoryMiB": self.gpu_memory_mib,
            "gpuHours": round(self.gpu_hours, 4),
            "activeGpuHours": _round(self.active_gpu_hours, 4),
            "idleCost": None if self.idle_cost is None else float(self.idle_cost),
            "currency": self.currency,
        }


def efficiency(
    job: JobSummary,
    metrics: dict[str, Any],
    nodes: tuple[str, ...],
    gpu_memory_mib: int | None,
    rate_per_gpu_hour: float | None,
    currency: str,
    now: datetime,
) -> Efficiency:
    """The figures of `job` at `now` (UTC): wall time is its running time so far (or in all,
    once ended), GPU-hours its GPUs x that time."""
    wall = durations(job, now)["running"] or 0.0
    rate = None if rate_per_gpu_hour is None else Decimal(str(rate_per_gpu_hour))
    return Efficiency(
        job, nodes, wall, job.total_gpus * wall / 3600, metrics, gpu_memory_mib, rate, currency
    )


def seff_lines(e: Efficiency, cluster: str) -> list[str]:
    """The report, line by line, in seff's order and wording where seff has a line for it."""
    j = e.job
    out = [
        f"Job ID: {j.namespace}/{j.name}",
        f"Cluster: {cluster}",
        f"User/Group: {j.submitter or '-'}/{j.namespace}",
        f"State: {j.phase.upper()}",
        f"Nodes: {len(e.nodes) or j.pods}",
        f"GPUs: {j.total_gpus} x {j.gpu_type or 'any'}",
        f"Job Wall-clock time: {slurm_elapsed(e.wall_seconds)}",
    ]
    if not e.sampled:
        out.append("GPU Efficiency: not sampled (the operator samples GPUs with")
        out.append("  --enable-gpu-metrics where dcgm-exporter runs: docs/gpu-metrics.md)")
    else:
        m = e.metrics
        out.append(
            f"GPU Efficiency: {e.gpu_efficiency:.2f}% (mean of {m.get('samples')} samples,"
            f" p95 {float(m.get('p95ActivityPercent') or 0):.2f}%, {m.get('field')})"
        )
        if e.memory_efficiency is not None:
            peak = float(m["peakMemoryUsedBytes"]) / MIB
            total = (e.gpu_memory_mib or 0) / 1024
            out.append(
                f"GPU Memory Efficiency: {e.memory_efficiency:.2f}% of {total:.2f} GB per GPU"
                f" (peak {peak:.0f} MiB)"
            )
        active = e.active_gpu_hours or 0.0
        idle = f"; idle {e.gpu_hours - active:.4f}"
        if e.idle_cost is not None:
            idle += f" ({e.idle_cost} {e.currency})"
        out.append(f"GPU-hours: {e.gpu_hours:.4f} allocated, {active:.4f} active{idle}")
    out.append("CPU and memory efficiency: not measured (needs the metrics.k8s.io API)")
    return out


def _round(value: float | None, places: int = 2) -> float | None:
    return None if value is None else round(value, places)
