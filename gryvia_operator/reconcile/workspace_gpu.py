"""A workspace's GPU activity, pure: from one sampling pass's exporter readings to each GPU
workspace's reading, and the time its GPUs were last active (docs/workspaces.md).

The GPU sampler (`handlers.gpumetrics`, `--enable-gpu-metrics`) reads every exporter once per
pass for jobs; the same readings give the activity of each workspace pod's GPUs (the pod
`<name>-0`). A workspace with GPUs is active in a pass when that activity, the mean over its
GPUs (`api.dcgm.activity`), is above its `idleGPUActivityPercent`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from gryvia_operator.api.dcgm import GpuReading, activity
from gryvia_operator.api.workspace import DEFAULT_IDLE_GPU_PERCENT, pod_name

WorkspaceKey = tuple[str, str]
"""(namespace, workspace name)."""
STALE_PASSES = 3
"""A reading older than this many sampling passes is not used (the sampler stopped, or its
exporter went away): the workspace falls back to its CPU."""


@dataclass(frozen=True)
class WorkspaceGpu:
    """A workspace's GPUs as the sampler read them last: when, their mean activity (percent)
    and when a reading last found them active (None: never, since the operator started)."""

    sampled_at: datetime
    activity_percent: float
    active_at: datetime | None = None

    def fresh(self, now: datetime, sample_seconds: float) -> bool:
        """True while the reading is recent enough to judge the workspace by
        (STALE_PASSES sampling passes)."""
        return now - self.sampled_at <= timedelta(seconds=STALE_PASSES * sample_seconds)


def workspace_activity(
    readings: Iterable[GpuReading], pod_workspaces: Mapping[tuple[str, str], str]
) -> dict[WorkspaceKey, float]:
    """Mean activity (percent) over the GPUs each workspace's pod holds; `pod_workspaces` maps
    (namespace, pod) to the workspace's name. GPUs without an activity reading are skipped,
    and a workspace none of whose GPUs has one is absent."""
    grouped: dict[WorkspaceKey, list[float]] = {}
    for reading in readings:
        name = pod_workspaces.get((reading.namespace, reading.pod))
        measured = activity(reading) if name else None
        if name and measured is not None:
            grouped.setdefault((reading.namespace, name), []).append(measured[0])
    return {key: sum(values) / len(values) for key, values in grouped.items()}


def advance(
    previous: WorkspaceGpu | None, activity_percent: float, threshold: float, now: datetime
) -> WorkspaceGpu:
    """The workspace's record after a reading at `now`: active then when `activity_percent` is
    above `threshold`, else it keeps the previous active time."""
    active = now if activity_percent > threshold else previous.active_at if previous else None
    return WorkspaceGpu(now, round(activity_percent, 2), active)


def gpu_workspace_pods(
    bodies: Iterable[Mapping[str, Any]],
) -> dict[tuple[str, str], tuple[str, float]]:
    """(namespace, pod) -> (workspace name, its `idleGPUActivityPercent`) of every workspace
    with GPUs among the raw GryviaWorkspace `bodies`."""
    out: dict[tuple[str, str], tuple[str, float]] = {}
    for body in bodies:
        meta, spec = body.get("metadata") or {}, body.get("spec") or {}
        if not spec.get("gpus"):
            continue
        name = str(meta.get("name") or "")
        threshold = float(spec.get("idleGPUActivityPercent", DEFAULT_IDLE_GPU_PERCENT))
        out[(str(meta.get("namespace") or ""), pod_name(name))] = (name, threshold)
    return out


def record_pass(
    known: Mapping[WorkspaceKey, WorkspaceGpu],
    readings: Iterable[GpuReading],
    bodies: Iterable[Mapping[str, Any]],
    now: datetime,
) -> dict[WorkspaceKey, WorkspaceGpu]:
    """The GPU workspaces' records after one sampling pass at `now`: each one whose GPUs were
    read advanced (`advance`), the others kept, those no longer GPU workspaces dropped."""
    pods = gpu_workspace_pods(bodies)
    threshold = {(ns, name): limit for (ns, _), (name, limit) in pods.items()}
    out = {key: value for key, value in known.items() if key in threshold}
    for key, percent in workspace_activity(readings, {k: v[0] for k, v in pods.items()}).items():
        out[key] = advance(out.get(key), percent, threshold[key], now)
    return out
