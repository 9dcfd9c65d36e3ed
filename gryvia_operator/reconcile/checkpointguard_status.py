"""A checkpoint guard's status, pure: its jobs' committed steps and the newest restore, written
again only when more than the time changed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from gryvia_operator.reconcile.checkpointguard import JobCheckpoints

MAX_LISTED_JOBS = 256


@dataclass
class GuardView:
    """One guard's status inputs: its jobs' records and the newest restore."""

    jobs: dict[str, JobCheckpoints] = field(default_factory=dict)
    last_restore: dict[str, Any] | None = None


def guard_status(view: GuardView, now: datetime) -> dict[str, Any]:
    """The guard's status: Ready/Valid, each job's committed steps, the newest restore."""
    stamp = now.isoformat().replace("+00:00", "Z")
    jobs = [
        {
            "job": name,
            "steps": list(state.steps),
            **({"lastCommitTime": state.last_commit} if state.last_commit else {}),
            "restores": state.restores,
        }
        for name, state in sorted(view.jobs.items())
    ][:MAX_LISTED_JOBS]
    status: dict[str, Any] = {
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Valid",
                "message": f"guarding {len(jobs)} job(s)",
                "lastTransitionTime": stamp,
            }
        ],
        "jobs": jobs,
    }
    if view.last_restore is not None:
        status["lastRestore"] = view.last_restore
    return status


def _timeless(status: Mapping[str, Any]) -> dict[str, Any]:
    """`status` without its conditions' lastTransitionTime."""
    conditions = [
        {k: v for k, v in c.items() if k != "lastTransitionTime"}
        for c in status.get("conditions") or []
    ]
    return {**status, "conditions": conditions}


def reconcile_guard(previous: Mapping[str, Any], view: GuardView, now: datetime) -> dict[str, Any]:
    """The guard's status for `view`: `guard_status`, or `previous` unchanged when only the
    time would change (a guard's status is written when its jobs, the newest restore or the
    message change, and each such write stamps the condition with `now`). The newest restore
    is kept from `previous` while `view` knows none (the operator remembers restores only
    since it started)."""
    kept = previous.get("lastRestore")
    if view.last_restore is None and kept is not None:
        view = replace(view, last_restore=dict(kept))
    status = guard_status(view, now)
    if _timeless(status) == _timeless(previous):
        return dict(previous)
    return status
