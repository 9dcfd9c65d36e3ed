"""Usage metering: one GryviaUsageRecord per job run, priced from the GPU catalog.

Pure functions (the clock is passed in). Rules: a record `usage-<job uid>` in the job's
namespace; GPU-hours = billed GPUs x running time. Billed GPUs are the job's `nvidia.com/gpu`
units (`gpus`), except for units held on time-sliced nodes (label `nvidia.com/gpu.replicas`):
those are the physical GPUs they stand for, units / replicas (`billed_physical_gpus`, recorded
as `physicalGPUs`; the rule is `api.timeslicing`). Running time is the span of the job's app
containers (`run_window`, docs/billing.md): from the first container's start
(`state.running.startedAt`, or `terminated.startedAt` / `lastState` once it ended or
restarted) to the last container's `finishedAt`, so time spent Pending, Queued, pulling images
or in init containers is never billed. The start, once recorded, is kept (earlier restarts and
deleted pods are no longer visible). While the job runs the end is now; a finished or deleted
job ends at its containers' last `finishedAt`, else (pods gone) at `status.completionTime`,
at deletion, or now. Without any pod seen the batch Job's start (`status.startTime`) is the
fallback. cost = GPU-hours x the rate of the first enabled matching SKU; with no such SKU the
run is `unpriced: true` (rate and cost 0 mean no price, not free: `api.usagerecord.is_unpriced`).
A terminal job's record is sealed (`final: true`) and never changed again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gryvia_operator.api import GryviaAIJob, timeslicing
from gryvia_operator.api.helpers import TERMINAL_PHASES
from gryvia_operator.api.names import (
    ANNOTATION_RESERVATION,
    ANNOTATION_SUBMITTER,
    API_VERSION,
    LABEL_JOB,
    LABEL_PROJECT,
    LABEL_TENANT,
    usage_record_name,
)
from gryvia_operator.api.pricing import Rate
from gryvia_operator.reconcile.priority import job_run, preempted_at
from gryvia_operator.reconcile.views import PodView


def gpu_hours(gpus: float, start: dt.datetime, end: dt.datetime) -> float:
    """Return GPU-hours for `gpus` GPUs (physical; 0.25 for one unit of a GPU time-sliced
    4 ways) held from `start` to `end` (0 when end <= start)."""
    seconds = max(0.0, (end - start).total_seconds())
    return gpus * seconds / 3600.0


@dataclass(frozen=True)
class RunWindow:
    """When a job's app containers ran, over all its pods (replicas, retries, restarts).

    `start`: the first container start (None: no container has run yet); `end`: the last
    `finishedAt` (None: none ended); `running`: a container runs now; `pods`: pods seen.
    """

    start: dt.datetime | None = None
    end: dt.datetime | None = None
    running: bool = False
    pods: int = 0


def _when(text: str) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None
    except ValueError:
        return None


def run_window(pods: Iterable[PodView]) -> RunWindow:
    """The span the containers of `pods` ran (their `started_at` / `finished_at`)."""
    starts, ends, running, count = [], [], False, 0
    for pod in pods:
        count += 1
        running |= pod.running
        starts += [t for t in (_when(pod.started_at),) if t is not None]
        ends += [t for t in (_when(pod.finished_at),) if t is not None]
    return RunWindow(min(starts, default=None), max(ends, default=None), running, count)


def billed_start(
    window: RunWindow, recorded: dt.datetime | None, job_start: dt.datetime | None
) -> dt.datetime | None:
    """Where billing starts: the earlier of the start already recorded and the containers'
    first start; with neither, the batch Job's start only when no pod is seen (they are gone,
    or were never indexed); None while the pods exist but no container has run."""
    known = [t for t in (recorded, window.start) if t is not None]
    if known:
        return min(known)
    return job_start if window.pods == 0 else None


def billed_physical_gpus(
    units: int,
    pods: Iterable[PodView],
    replicas: Mapping[str, int],
    recorded: float | None = None,
) -> float | None:
    """The physical GPUs (`physicalGPUs`) a job of `units` `nvidia.com/gpu` units is billed
    for, or None to bill its units as whole GPUs.

    `pods`: the job's pods seen (running or ended); `replicas`: node name -> units advertised
    per physical GPU (`api.timeslicing.replicas_of` of the node's labels; a pod on a node not
    in it is skipped). From the pods placed on those nodes: `api.timeslicing.physical_gpus`
    rounded to 6 places (one unit on a node with replicas 4: 0.25), None when it equals
    `units` (no unit was time-sliced). With no such pod (they are gone) the figure `recorded`
    on the stored record is kept, so a run is never re-billed at whole GPUs after its pods go.
    """
    held = [(pod.gpus, replicas[pod.node_name]) for pod in pods if pod.node_name in replicas]
    share = timeslicing.physical_gpus(units, held)
    if share is None:
        return recorded
    return None if share == units else timeslicing.gpu_figure(share)


def _end_time(
    job: GryviaAIJob, window: RunWindow, now: dt.datetime, deleted_at: dt.datetime | None
) -> tuple[dt.datetime, bool]:
    """(end, final): the containers' last finish once none runs, else the job's own times."""
    status = job.status
    phase = status.phase if status else None
    final = phase in TERMINAL_PHASES or deleted_at is not None
    if window.end is not None and not window.running:
        return window.end, final
    if phase in TERMINAL_PHASES:
        return (status.completion_time if status else None) or deleted_at or now, True
    if deleted_at is not None:
        return deleted_at, True
    return now, False


def build_usage_record(
    job: GryviaAIJob,
    *,
    tenant: str,
    rate: Rate | None,
    gpu_type: str | None,
    now: dt.datetime,
    deleted_at: dt.datetime | None = None,
    window: RunWindow | None = None,
    recorded_start: dt.datetime | None = None,
    physical_gpus: float | None = None,
) -> dict[str, Any] | None:
    """Return the desired GryviaUsageRecord manifest of `job`'s run, or None if it never ran.

    `gpu_type` is the type billed (the job's `gpuType`, or the type of the nodes it ran on when
    the job accepts any); `rate` None (no SKU prices it) writes rate and cost 0, and
    `unpriced: true` for a job with GPUs; `window` is `run_window` of the job's pods (None:
    no pod seen); `recorded_start` the `spec.start` of the record already stored;
    `physical_gpus` the physical GPUs billed when they differ from the job's units
    (`billed_physical_gpus`; None: the units are whole GPUs). GPU-hours = billed GPUs x
    running hours, cost = GPU-hours x rate; a sealed record of a sampled job also carries
    active GPU-hours = GPU-hours x its mean activity. Timestamps must be timezone-aware (UTC).
    """
    status = job.status
    if status is None or status.start_time is None:
        return None
    window = window or RunWindow()
    start = billed_start(window, recorded_start, status.start_time)
    if start is None:
        return None
    end, final = _end_time(job, window, now, deleted_at)
    end = max(end, start)
    gpus = job.spec.total_gpus()
    hours = gpu_hours(gpus if physical_gpus is None else physical_gpus, start, end)
    per_hour = rate.per_gpu_hour if rate else 0.0
    uid = job.metadata.uid or ""
    spec: dict[str, Any] = {
        "tenant": tenant,
        "job": job.name,
        "jobUID": uid,
        "gpus": gpus,
        "rate": per_hour,
        "currency": rate.currency if rate else "USD",
        "start": _rfc3339(start),
        "gpuHours": round(hours, 6),
        "cost": round(hours * per_hour, 6),
        "final": final,
    }
    if physical_gpus is not None:
        spec["physicalGPUs"] = physical_gpus
    if rate:
        spec["sku"] = rate.sku
    elif gpus:  # a CPU-only job has nothing to price
        spec["unpriced"] = True
    if gpu_type:
        spec["gpuType"] = gpu_type
    spec.update(_attribution(job))
    if final:
        spec["end"] = _rfc3339(end)
        metrics = status.metrics
        if metrics is not None and metrics.samples and gpus:
            spec["activeGPUHours"] = round(hours * metrics.mean_activity_percent / 100, 6)
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaUsageRecord",
        "metadata": {
            "name": usage_record_name(uid, job_run(job)),
            "namespace": job.namespace,
            "labels": {LABEL_TENANT: tenant, LABEL_JOB: job.name},
        },
        "spec": spec,
    }


MAX_JOB_LABELS = 64
"""The labels a usage record keeps of its job (`spec.jobLabels`, bounded for the API server's
CEL cost estimate): the first 64 by key."""


def _attribution(job: GryviaAIJob) -> dict[str, Any]:
    """Who and what a run's usage is grouped by: `user` (the submitter the webhook stamped),
    `project` (label gryvia.io/project), `reservation` (annotation gryvia.io/reservation: the
    chargeback counts its GPU-hours as used) and `jobLabels` (all of the job's labels); each
    only when the job has it."""
    labels = dict(job.metadata.labels or {})
    annotations = job.metadata.annotations or {}
    user = annotations.get(ANNOTATION_SUBMITTER)
    out: dict[str, Any] = {}
    if user:
        out["user"] = user
    if annotations.get(ANNOTATION_RESERVATION):
        out["reservation"] = annotations[ANNOTATION_RESERVATION]
    if labels.get(LABEL_PROJECT):
        out["project"] = labels[LABEL_PROJECT]
    if labels:
        out["jobLabels"] = dict(sorted(labels.items())[:MAX_JOB_LABELS])
    return out


def sealed_previous_run(
    job: GryviaAIJob, stored: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The record of the run before the job's last preemption, sealed, when the job was
    requeued before a metering pass sealed it (None when there is nothing to seal).

    That run ended when it was preempted (the Preempted condition's time): GPU-hours and cost
    are recomputed from the stored start, billed GPUs (`physicalGPUs`, else `gpus`) and rate
    up to then.
    """
    spec = (stored or {}).get("spec") or {}
    when = preempted_at(job)
    if stored is None or spec.get("final") or when is None or job_run(job) == 0:
        return None
    start = _when(str(spec.get("start") or ""))
    if start is None:
        return None
    end = max(when, start)
    hours = gpu_hours(timeslicing.billed_gpus(spec), start, end)
    rate = float(spec.get("rate") or 0.0)
    sealed = {
        **spec,
        "gpuHours": round(hours, 6),
        "cost": round(hours * rate, 6),
        "final": True,
        "end": _rfc3339(end),
    }
    meta = stored.get("metadata") or {}
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaUsageRecord",
        "metadata": {k: meta[k] for k in ("name", "namespace", "labels") if k in meta},
        "spec": sealed,
    }


_IDENTITY = (
    "tenant",
    "job",
    "jobUID",
    "gpus",
    "physicalGPUs",
    "rate",
    "sku",
    "gpuType",
    "currency",
    "start",
    "unpriced",
)
"""Fields whose change rewrites an open record at once. `physicalGPUs` is absent from the
records of jobs that held no time-sliced unit, on both sides, so it never rewrites those."""


def needs_update(
    existing: Mapping[str, Any] | None,
    desired: Mapping[str, Any],
    *,
    age_seconds: float | None = None,
    refresh_seconds: float = 0.0,
) -> bool:
    """True when the stored record should be replaced by `desired`.

    A sealed record (`spec.final`) is never changed. A missing record, one being sealed, or one
    whose pricing or identity changed is written at once. An open record whose only change is
    its running GPU-hours and cost is refreshed when it was written `refresh_seconds` or more
    ago (`age_seconds` None: unknown, so due) — that keeps records within a minute of the truth
    while spreading the writes of thousands of running jobs over the minute.
    """
    if existing is None:
        return True
    spec = existing.get("spec") or {}
    if spec.get("final"):
        return False
    want = desired["spec"]
    if dict(spec) == dict(want):
        return False
    if want.get("final") or any(spec.get(k) != want.get(k) for k in _IDENTITY):
        return True
    return age_seconds is None or age_seconds >= refresh_seconds


def spec_patch(existing: Mapping[str, Any] | None, desired: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch of a record's spec that makes it `desired["spec"]`: its fields,
    and null for each field the stored record has and the desired one no longer does (a
    `physicalGPUs` whose pods moved to unshared nodes, a `sku` whose SKU went away, the
    `unpriced` of a run a SKU now prices), which a
    merge patch of the desired spec alone would leave in place."""
    want = dict(desired["spec"])
    have = (existing or {}).get("spec") or {}
    return {**want, **{key: None for key in have if key not in want}}


def _rfc3339(value: dt.datetime) -> str:
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
