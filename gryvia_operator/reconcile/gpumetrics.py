"""The pure half of GPU sampling: from one pass's exporter readings to each running job's
sample, and from a job's summary and a new sample to its next summary (`status.metrics`).

A job's sample is the mean activity over the GPUs its pods hold in that pass
(`api.dcgm.activity`: the profiling field where served, else `DCGM_FI_DEV_GPU_UTIL`), the mean
tensor activity where served, and the most memory one of its GPUs used. The summary keeps a
running mean and a histogram of 20 bins of 5 %, which the p95 is read from, and for each
replica a ring of its last 20 activities (`replicas`: the console's line over time).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gryvia_operator.api.dcgm import (
    FIELD_ECC_DBE,
    FIELD_FB_FREE,
    FIELD_FB_USED,
    FIELD_XID_ERRORS,
    GpuReading,
    activity,
    memory_used_bytes,
    tensor_activity,
)
from gryvia_operator.api.jobmetrics import (
    MAX_REPLICAS,
    RECENT_SAMPLES,
    JobGpuMetrics,
    ReplicaActivity,
)

BINS = 20
"""Histogram bins of `status.metrics.activityHistogram`, 5 % each."""
IDLE_PERCENT = 5.0
"""A sample under this activity is idle (`status.metrics.idleSince`)."""
STALLED = "Stalled"
"""The job condition of a job idle and silent for the window (docs/gpu-metrics.md)."""

JobKey = tuple[str, str]
"""(namespace, job name)."""


@dataclass(frozen=True)
class JobSample:
    """One pass's reading of one job's GPUs: percentages 0..100, bytes."""

    activity_percent: float
    field: str
    tensor_percent: float | None
    peak_memory_bytes: int | None
    gpus: int
    replicas: Mapping[int, float] = dataclasses.field(default_factory=dict)
    """Mean activity of each replica's GPUs, by replica number (pods with one)."""


def job_samples(
    readings: Iterable[GpuReading],
    pod_jobs: Mapping[tuple[str, str], str],
    pod_replicas: Mapping[tuple[str, str], int] | None = None,
) -> dict[JobKey, JobSample]:
    """Each job's sample from the readings of GPUs held by its pods; `pod_jobs` maps
    (namespace, pod) to the job's name, `pod_replicas` to the pod's replica number. GPUs
    without an activity reading are skipped; a job's field is the profiling field only when
    every GPU of it served it."""
    replica_of = pod_replicas or {}
    grouped: dict[JobKey, list[GpuReading]] = {}
    for reading in readings:
        job = pod_jobs.get((reading.namespace, reading.pod))
        if job and activity(reading) is not None:
            grouped.setdefault((reading.namespace, job), []).append(reading)
    samples = {}
    for key, gpus in grouped.items():
        measured = [m for m in (activity(g) for g in gpus) if m is not None]
        tensors = [t for t in (tensor_activity(g) for g in gpus) if t is not None]
        memory = [b for b in (memory_used_bytes(g) for g in gpus) if b is not None]
        fields = {f for _, f in measured}
        by_replica: dict[int, list[float]] = {}
        for gpu in gpus:
            replica, value = replica_of.get((gpu.namespace, gpu.pod)), activity(gpu)
            if replica is not None and value is not None:
                by_replica.setdefault(replica, []).append(value[0])
        samples[key] = JobSample(
            activity_percent=sum(v for v, _ in measured) / len(measured),
            field=fields.pop() if len(fields) == 1 else min(fields),
            tensor_percent=sum(tensors) / len(tensors) if tensors else None,
            peak_memory_bytes=max(memory) if memory else None,
            gpus=len(measured),
            replicas={r: sum(v) / len(v) for r, v in by_replica.items()},
        )
    return samples


def fold(previous: JobGpuMetrics | None, sample: JobSample, now: datetime) -> JobGpuMetrics:
    """The job's summary after `sample`, taken at `now` (UTC). A previous summary with another
    field (the exporter changed) is started afresh rather than mixed."""
    if previous is not None and previous.field != sample.field:
        previous = None
    count = 0 if previous is None else previous.samples
    histogram = list(previous.activity_histogram or []) if previous else []
    histogram = (histogram + [0] * BINS)[:BINS]
    histogram[_bin(sample.activity_percent)] += 1
    mean = top = sample.activity_percent
    tensor = sample.tensor_percent
    peak = sample.peak_memory_bytes
    if previous is not None:
        mean = (previous.mean_activity_percent * count + sample.activity_percent) / (count + 1)
        top = max(top, previous.max_activity_percent or 0.0)
        if tensor is not None and previous.tensor_activity_percent is not None:
            tensor = (previous.tensor_activity_percent * count + tensor) / (count + 1)
        elif tensor is None:
            tensor = previous.tensor_activity_percent
        if previous.peak_memory_used_bytes is not None:
            peak = max(peak or 0, previous.peak_memory_used_bytes)
    idle_since = None
    if sample.activity_percent < IDLE_PERCENT:
        idle_since = (previous.idle_since if previous else None) or now
    return JobGpuMetrics(
        idle_since=idle_since,
        field=sample.field,
        samples=count + 1,
        last_sample_time=now,
        last_activity_percent=round(sample.activity_percent, 2),
        mean_activity_percent=round(mean, 2),
        p95_activity_percent=min(p95(histogram) or 0.0, round(top, 2)),
        max_activity_percent=round(top, 2),
        tensor_activity_percent=None if tensor is None else round(tensor, 2),
        peak_memory_used_bytes=peak,
        gpus=sample.gpus,
        activity_histogram=histogram,
        replicas=recent_by_replica(previous.replicas if previous else None, sample.replicas),
    )


def recent_by_replica(
    previous: list[ReplicaActivity] | None, sample: Mapping[int, float]
) -> list[ReplicaActivity] | None:
    """Each replica's ring after `sample`: its activity (a whole percent) appended, the oldest
    dropped past RECENT_SAMPLES; a replica this sample did not read keeps its ring. The first
    MAX_REPLICAS replicas by number; None when no replica was ever read."""
    rings = {r.replica: list(r.recent_activity_percent) for r in previous or []}
    for replica, value in sample.items():
        whole = min(100, max(0, round(value)))
        rings[replica] = [*rings.get(replica, []), whole][-RECENT_SAMPLES:]
    if not rings:
        return None
    kept = sorted(rings)[:MAX_REPLICAS]
    return [ReplicaActivity(replica=r, recent_activity_percent=rings[r]) for r in kept]


def p95(histogram: list[int]) -> float | None:
    """The upper edge of the bin holding the 95th percentile of the samples, in percent
    (nearest-rank); None with no samples."""
    total = sum(histogram)
    if total == 0:
        return None
    rank = -(-95 * total // 100)  # ceil(0.95 * total)
    seen = 0
    for index, count in enumerate(histogram):
        seen += count
        if seen >= rank:
            return float((index + 1) * 100 // BINS)
    return 100.0


def _bin(percent: float) -> int:
    return min(BINS - 1, max(0, int(percent * BINS // 100)))


def stall_message(
    metrics: JobGpuMetrics,
    last_log: datetime | None,
    started: datetime | None,
    now: datetime,
    window_seconds: float,
) -> str | None:
    """The `Stalled` condition's message when the job's GPUs have been idle for
    `window_seconds` and its log silent as long (its newest line, else its start, that long
    ago); None when it is not stalled. Times are UTC."""
    idle = metrics.idle_since
    quiet = last_log or started
    if idle is None or quiet is None:
        return None
    if min((now - idle).total_seconds(), (now - quiet).total_seconds()) < window_seconds:
        return None
    return (
        f"GPU activity {metrics.last_activity_percent:.1f} % ({metrics.field}) since"
        f" {_stamp(idle)} and no log line since {_stamp(quiet)}: idle and silent for more than"
        f" {window_seconds:.0f}s"
    )


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def node_gpu_status(readings: Iterable[GpuReading]) -> dict[str, list[dict[str, Any]]]:
    """Each node's `status.gpuStatus` (by the exporter's `Hostname`), GPUs by index: index,
    uuid, memoryTotal (MiB) and health, `Failed` with the `xid` or `eccDoubleBit` its exporter
    reports, else `Healthy`. Only what changes with a fault is in it, so a node's entries are
    rewritten when a GPU fails or recovers, not on every pass."""
    nodes: dict[str, list[dict[str, Any]]] = {}
    for reading in sorted(readings, key=lambda r: (r.hostname, r.gpu)):
        values = reading.values
        xid = int(values.get(FIELD_XID_ERRORS, 0) or 0)
        dbe = int(values.get(FIELD_ECC_DBE, 0) or 0)
        entry: dict[str, Any] = {
            "index": reading.gpu,
            "uuid": reading.uuid,
            "health": "Failed" if xid or dbe else "Healthy",
        }
        used, free = values.get(FIELD_FB_USED), values.get(FIELD_FB_FREE)
        if used is not None and free is not None:
            entry["memoryTotal"] = used + free
        if xid:
            entry["xid"] = xid
        if dbe:
            entry["eccDoubleBit"] = dbe
        nodes.setdefault(reading.hostname, []).append(entry)
    return nodes
