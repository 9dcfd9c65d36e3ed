"""What a preemption by priority leaves in a job's status, read by the operator and the
client alike: whether phase Preempted is a requeue (not an end), and which run a status
belongs to. Plain functions over the stored status (no models), so client views that only
need these stay light.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

COND_PREEMPTED = "Preempted"
"""Condition type on a GryviaAIJob a higher-priority job preempted."""
REASON_PREEMPTED = "PreemptedByPriority"
"""Reason of condition Preempted=True while phase Preempted is not final: the job is requeued
once its pods are gone (clients keep waiting for it)."""
REASON_REQUEUED = "Requeued"
"""Reason of condition Preempted=True once the job is back in the queue."""
REASON_BY_SCHEDULER = "PreemptedByScheduler"
"""Reason of condition Preempted=True when the kube-scheduler evicted pods of the job for a
higher-priority pod on full nodes: the job keeps running, its Job replaces the pods."""


def requeue_pending(status: Mapping[str, Any]) -> bool:
    """True for a job status in phase Preempted by priority (condition Preempted with reason
    PreemptedByPriority): not an end, it goes back to the queue once its pods are gone."""
    if status.get("phase") != "Preempted":
        return False
    found = (c for c in status.get("conditions") or [] if c.get("type") == COND_PREEMPTED)
    cond = next(found, None)
    return cond is not None and cond.get("reason") == REASON_PREEMPTED


def _count(status: Mapping[str, Any], key: str) -> int:
    raw = status.get(key)
    return raw if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0 else 0


def run_index(status: Mapping[str, Any]) -> int:
    """Which run of a job a status belongs to (its usage record, `names.usage_record_name`):
    the requeues, i.e. `preemptions` less `schedulerPreemptions` (those kept the run), less
    one while the job is still stopping after its last preemption."""
    runs = max(_count(status, "preemptions") - _count(status, "schedulerPreemptions"), 0)
    return runs - 1 if runs and requeue_pending(status) else runs
