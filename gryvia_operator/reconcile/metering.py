"""Usage metering: one GryviaUsageRecord per job run, priced from the GPU catalog.

Pure functions (the clock is passed in). Rules: a record `usage-<job uid>` in the job's
namespace; GPU-hours = total GPUs x running time, where running time starts at
`status.startTime` (set when the job's pods start running, so time spent Pending or Queued is
never billed) and ends at `status.completionTime` for a finished job, at deletion for a job
deleted while running, else now; cost = GPU-hours x the rate of the first enabled matching
SKU; a terminal job's record is sealed (`final: true`) and never changed again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.api.helpers import TERMINAL_PHASES
from gryvia_operator.api.names import API_VERSION, LABEL_JOB, LABEL_TENANT, usage_record_name
from gryvia_operator.api.pricing import Rate


def gpu_hours(gpus: int, start: dt.datetime, end: dt.datetime) -> float:
    """Return GPU-hours for `gpus` GPUs held from `start` to `end` (0 when end <= start)."""
    seconds = max(0.0, (end - start).total_seconds())
    return gpus * seconds / 3600.0


def _end_time(
    job: GryviaAIJob, now: dt.datetime, deleted_at: dt.datetime | None
) -> tuple[dt.datetime, bool]:
    status = job.status
    phase = status.phase if status else None
    if phase in TERMINAL_PHASES:
        end = (status.completion_time if status else None) or deleted_at or now
        return end, True
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
) -> dict[str, Any] | None:
    """Return the desired GryviaUsageRecord manifest of `job`'s run, or None if it never ran.

    `gpu_type` is the type billed (the job's `gpuType`, or the type of the nodes it ran on when
    the job accepts any); `rate` None bills 0. Timestamps must be timezone-aware (UTC).
    """
    status = job.status
    start = status.start_time if status else None
    if start is None:
        return None
    end, final = _end_time(job, now, deleted_at)
    gpus = job.spec.total_gpus()
    hours = gpu_hours(gpus, start, end)
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
    if rate:
        spec["sku"] = rate.sku
    if gpu_type:
        spec["gpuType"] = gpu_type
    if final:
        spec["end"] = _rfc3339(end)
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaUsageRecord",
        "metadata": {
            "name": usage_record_name(uid),
            "namespace": job.namespace,
            "labels": {LABEL_TENANT: tenant, LABEL_JOB: job.name},
        },
        "spec": spec,
    }


_IDENTITY = ("tenant", "job", "jobUID", "gpus", "rate", "sku", "gpuType", "currency", "start")


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


def _rfc3339(value: dt.datetime) -> str:
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
