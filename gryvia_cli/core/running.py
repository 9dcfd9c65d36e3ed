"""`gryvia queue --running`: the running jobs and how busy their GPUs are, idlest first, as the
operator sampled them (`status.metrics`, docs/gpu-metrics.md): the question an admin asks of
a full cluster ("which jobs hold GPUs and do nothing with them?"), answered beside the queue
of those waiting for the GPUs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gryvia_cli.core import timefmt
from gryvia_cli.core.cells import Marked
from gryvia_cli.core.jobs import JobSummary, durations, gpu_text

IDLE_PERCENT = 10.0
"""A running job's last sample under this is marked idle (the console's Jobs view marks the
same)."""

RUNNING_COLUMNS = ("name", "user", "gpus", "running", "gpu%", "mean%", "samples")
RUNNING_WIDE_COLUMNS = (*RUNNING_COLUMNS, "tensor%", "field", "last sample")


@dataclass(frozen=True)
class RunningJob:
    """A running job with the GPU summary the operator keeps (None where never sampled):
    activities in percent 0..100, `running_seconds` since its start."""

    job: JobSummary
    running_seconds: float | None
    last: float | None
    mean: float | None
    tensor: float | None
    samples: int
    field: str
    last_sample: str

    @property
    def idle(self) -> bool:
        """True when sampled and the last sample is under IDLE_PERCENT."""
        return self.last is not None and self.last < IDLE_PERCENT

    def as_dict(self) -> dict[str, Any]:
        """The documented JSON item of `queue --running -o json`."""
        return {
            "namespace": self.job.namespace,
            "name": self.job.name,
            "user": self.job.submitter or None,
            "gpuType": self.job.gpu_type or None,
            "gpus": self.job.total_gpus,
            "runningSeconds": self.running_seconds,
            "gpuActivityPercent": self.last,
            "meanGpuActivityPercent": self.mean,
            "tensorActivityPercent": self.tensor,
            "samples": self.samples,
            "field": self.field or None,
            "lastSampleTime": self.last_sample or None,
            "idle": self.idle,
        }


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def running_jobs(jobs: Iterable[JobSummary], now: datetime) -> list[RunningJob]:
    """The Running jobs of `jobs`, idlest first (lowest last sample; never sampled last,
    then by name)."""
    out = []
    for job in jobs:
        if job.phase != "Running":
            continue
        m = job.metrics
        samples = m.get("samples")
        out.append(
            RunningJob(
                job=job,
                running_seconds=durations(job, now)["running"],
                last=_number(m.get("lastActivityPercent")),
                mean=_number(m.get("meanActivityPercent")),
                tensor=_number(m.get("tensorActivityPercent")),
                samples=samples if isinstance(samples, int) and samples > 0 else 0,
                field=str(m.get("field") or ""),
                last_sample=str(m.get("lastSampleTime") or ""),
            )
        )
    return sorted(
        out,
        key=lambda r: (r.last is None, r.last or 0.0, r.job.namespace, r.job.name),
    )


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}%"


def running_row(entry: RunningJob, *, all_namespaces: bool, wide: bool, now: datetime) -> list[Any]:
    """One table row in RUNNING_COLUMNS (RUNNING_WIDE_COLUMNS with `wide`) order, the
    namespace second with `all_namespaces`."""
    seconds = entry.running_seconds
    last = _percent(entry.last)
    row: list[Any] = [
        entry.job.name,
        entry.job.submitter or "-",
        gpu_text(entry.job),
        "-" if seconds is None else timefmt.human_duration(seconds),
        Marked(f"{last} idle", "warn") if entry.idle else last,
        _percent(entry.mean),
        str(entry.samples) if entry.samples else "-",
    ]
    if wide:
        row += [
            _percent(entry.tensor),
            entry.field or "-",
            timefmt.age(entry.last_sample, now) if entry.last_sample else "-",
        ]
    if all_namespaces:
        row.insert(1, entry.job.namespace)
    return row
