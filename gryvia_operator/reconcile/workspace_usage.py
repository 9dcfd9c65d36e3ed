"""GryviaWorkspace metering, pure: one GryviaUsageRecord per workspace run, as jobs have.

Rule: run n (status.runs, from 1) is recorded as `usage-<workspace uid>` for n = 1 and
`usage-<workspace uid>-<n-1>` after (`api.names.usage_record_name`), in the workspace's
namespace, labelled gryvia.io/workspace and gryvia.io/tenant, with `spec.job` the workspace's
name. Billed from `status.startedAt` (the pod first seen Running) to now while it runs, and to
`status.stoppedAt` once it stopped (then sealed, `final: true`). GPU-hours = `spec.gpus` x
hours; cost = GPU-hours x the catalog's rate for `spec.gpuType` (no rate: 0). A CPU-only
workspace gets a record of 0 GPU-hours: its running time is still visible. Time-sliced
(physical-GPU) billing of jobs is not applied to workspaces.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from gryvia_operator.api.names import API_VERSION, LABEL_TENANT, usage_record_name
from gryvia_operator.api.pricing import Rate
from gryvia_operator.api.workspace import LABEL_WORKSPACE, GryviaWorkspace
from gryvia_operator.reconcile.metering import gpu_hours
from gryvia_operator.reconcile.workspace import parse_time, rfc3339


def build_workspace_usage(
    ws: GryviaWorkspace, status: dict[str, Any], *, tenant: str, rate: Rate | None, now: dt.datetime
) -> dict[str, Any] | None:
    """The usage record of the workspace's current (or last) run given the `status` this pass
    writes; None before the first run. `now` must be aware (UTC)."""
    runs = int(status.get("runs") or 0)
    start = parse_time(status.get("startedAt"))
    if runs < 1 or start is None:
        return None
    running = status.get("phase") == "Running"
    end = now if running else (parse_time(status.get("stoppedAt")) or now)
    end = max(end, start)
    hours = gpu_hours(ws.spec.gpus, start, end)
    per_hour = rate.per_gpu_hour if rate else 0.0
    uid = ws.metadata.uid or ""
    spec: dict[str, Any] = {
        "tenant": tenant,
        "job": ws.name,
        "jobUID": uid,
        "gpus": ws.spec.gpus,
        "rate": per_hour,
        "currency": rate.currency if rate else "USD",
        "start": rfc3339(start),
        "gpuHours": round(hours, 6),
        "cost": round(hours * per_hour, 6),
        "final": not running,
    }
    if rate:
        spec["sku"] = rate.sku
    if ws.spec.gpu_type:
        spec["gpuType"] = ws.spec.gpu_type
    if not running:
        spec["end"] = rfc3339(end)
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaUsageRecord",
        "metadata": {
            "name": usage_record_name(uid, runs - 1),
            "namespace": ws.namespace,
            "labels": {LABEL_TENANT: tenant, LABEL_WORKSPACE: ws.name},
        },
        "spec": spec,
    }
