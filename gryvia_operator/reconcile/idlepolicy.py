"""The pure decision of a GryviaIdlePolicy: which covered jobs are idle, which to warn, which to
suspend or cancel, and the policy's status (docs/idle-policies.md).

A job is judged only on a fresh sample (`status.metrics.lastSampleTime` at most
`STALE_SECONDS`, or the window if longer, before now): no sample, or an old one, is no proof of
idleness. Its idle period starts at the first idle sample the policy sees after an active one
(`status.jobs[].idleSince`); a job idle for `windowSeconds` is warned, and a job still idle
`graceSeconds` after the warning is suspended or cancelled. What was done is read back from the
job's annotation `gryvia.io/idle` (`api.idlepolicy.ANNOTATION_IDLE`), written in the same patch
as the action: that, not the policy's status, decides whether to warn or act again.

The job's conditions say the same for people and for job hooks (`reconcile.jobhooks`):
`IdleGPUs` (True, reason `IdleWarning`, since the warning) and `IdleAction` (True, reason
`IdleJobSuspended` or `IdleJobCancelled`, since the action), each naming the policy, the
measured activity and the window, with the record's times as lastTransitionTime; both go
False (reason `NotIdle`) when the record is gone (the job was active again). They are
derived from the record on every pass until the job shows them, so an operator stopped
between the record's write and theirs writes them on its next pass, with the same times (a
suspended or cancelled job is still looked at for that, `CoveredJob.running` False).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from gryvia_operator.api.controlled import cancel_patch
from gryvia_operator.api.idlepolicy import (
    ANNOTATION_IDLE,
    MAX_LISTED_JOBS,
    GryviaIdlePolicy,
    IdleAction,
    IdleJob,
)
from gryvia_operator.api.jobmetrics import JobGpuMetrics
from gryvia_operator.reconcile.status import JobEvent, get_condition

IDLE_CONDITION = "IdleGPUs"
"""The job condition of an idle warning (reason `IdleWarning`)."""
ACTION_CONDITION = "IdleAction"
"""The job condition of the action after it (reason `IdleJobSuspended` / `IdleJobCancelled`)."""
ACTION_REASONS = {"suspend": "IdleJobSuspended", "cancel": "IdleJobCancelled"}

STALE_SECONDS = 300.0
"""A sample older than this (or than the window, if longer) is not judged."""


@dataclass(frozen=True)
class IdleRecord:
    """What an idle policy did to a job (the job's `gryvia.io/idle` annotation)."""

    policy: str
    warned_at: datetime
    activity_percent: float
    action: IdleAction | None = None
    acted_at: datetime | None = None

    def to_annotation(self) -> str:
        """The annotation's JSON value (times RFC 3339 UTC)."""
        out: dict[str, Any] = {
            "policy": self.policy,
            "warnedAt": _stamp(self.warned_at),
            "activityPercent": round(self.activity_percent, 1),
        }
        if self.action is not None and self.acted_at is not None:
            out |= {"action": self.action, "actedAt": _stamp(self.acted_at)}
        return json.dumps(out, separators=(",", ":"))

    @classmethod
    def parse(cls, text: str | None) -> IdleRecord | None:
        """The record of an annotation value; None when absent or not one of ours."""
        try:
            raw = json.loads(text or "")
            action = raw.get("action")
            return cls(
                policy=str(raw["policy"]),
                warned_at=datetime.fromisoformat(raw["warnedAt"]),
                activity_percent=float(raw.get("activityPercent", 0.0)),
                action=action if action in ("suspend", "cancel") else None,
                acted_at=datetime.fromisoformat(raw["actedAt"]) if raw.get("actedAt") else None,
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


@dataclass(frozen=True)
class CoveredJob:
    """A running job in the policy's scope, as the policy sees it."""

    namespace: str
    name: str
    job_type: str
    exempt: bool
    metrics: JobGpuMetrics | None
    record: IdleRecord | None
    body: dict[str, Any] = field(default_factory=dict, compare=False)
    """The job's object, for the Events posted on it (and its conditions)."""
    running: bool = True
    """False for a job no longer running that holds this policy's record: only its
    conditions are brought in line with the record."""


@dataclass
class IdlePlan:
    """Patches of jobs as (namespace, name, merge patch), conditions to put into their
    status as (namespace, name, conditions; after the patches), Events on jobs as (job,
    event), Events on the policy, its status, and when to look again (None: on the next
    change)."""

    status: dict[str, Any]
    patches: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    conditions: list[tuple[str, str, list[dict[str, Any]]]] = field(default_factory=list)
    job_events: list[tuple[CoveredJob, JobEvent]] = field(default_factory=list)
    events: list[JobEvent] = field(default_factory=list)
    wake_at: datetime | None = None


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _record_patch(record: IdleRecord | None, action: IdleAction | None = None) -> dict[str, Any]:
    """The job's merge patch: its `gryvia.io/idle` record (None removes it), and with `action`
    the suspend (`spec.suspend`) or the cancel annotation in the same write."""
    value = None if record is None else record.to_annotation()
    annotations: dict[str, Any] = {ANNOTATION_IDLE: value}
    patch: dict[str, Any] = {"metadata": {"annotations": annotations}}
    if action == "suspend":
        patch["spec"] = {"suspend": True}
    elif action == "cancel":
        annotations |= cancel_patch()["metadata"]["annotations"]
    return patch


def _earliest(a: datetime | None, b: datetime) -> datetime:
    return b if a is None else min(a, b)


def reconcile_idle_policy(
    policy: GryviaIdlePolicy, jobs: Sequence[CoveredJob], now: datetime
) -> IdlePlan:
    """The plan for one policy over the running jobs of its scope (`jobs`) at `now` (UTC).

    Exempt jobs and jobs of types the policy does not cover are skipped; a job another policy
    warned is left to that policy. The status lists the idle jobs, idle longest first (at most
    `MAX_LISTED_JOBS`).
    """
    spec, name = policy.spec, policy.name
    before = {
        (j.namespace, j.job): j for j in ((policy.status.jobs if policy.status else None) or [])
    }
    window = timedelta(seconds=spec.window_seconds)
    grace = timedelta(seconds=spec.grace_seconds)
    fresh = timedelta(seconds=max(STALE_SECONDS, spec.window_seconds))
    plan = IdlePlan(status={})
    listed: list[dict[str, Any]] = []
    covered = 0
    for job in jobs:
        if job.exempt or (spec.job_types is not None and job.job_type not in spec.job_types):
            continue
        m, record = job.metrics, job.record
        if not job.running:
            if record is not None and record.policy == name:
                _sync_conditions(plan, policy, job, record, now)
            continue
        covered += 1
        if record is not None and record.policy != name:
            continue
        if m is None or now - m.last_sample_time > fresh:
            continue
        if m.last_activity_percent >= spec.threshold_percent:
            if record is not None:
                plan.patches.append((job.namespace, job.name, _record_patch(None)))
            _sync_conditions(plan, policy, job, None, now)
            continue
        seen = before.get((job.namespace, job.name))
        record = _caught_up(name, record, seen)
        since = seen.idle_since if seen is not None else m.last_sample_time
        peak = max(m.last_activity_percent, seen.activity_percent if seen is not None else 0.0)
        what = (
            f"GPU activity at most {peak:.1f}% ({m.field}) since {_stamp(since)}, below the "
            f"threshold {spec.threshold_percent:g}% of idle policy {name}"
        )
        if record is None and now - since >= window:
            record = IdleRecord(name, now, peak)
            plan.patches.append((job.namespace, job.name, _record_patch(record)))
            text = f"{what}: idle for {spec.window_seconds} s"
            if spec.action != "warn":
                text += f"; it will be {spec.action}ed after {spec.grace_seconds} s more"
            plan.job_events.append((job, JobEvent("Warning", "IdleGPUs", text)))
            plan.events.append(JobEvent("Normal", "JobWarned", f"{job.namespace}/{job.name}"))
        elif record is None:
            plan.wake_at = _earliest(plan.wake_at, since + window)
        if record is not None and record.action is None and spec.action != "warn":
            if now - record.warned_at >= grace:
                done = IdleRecord(name, record.warned_at, peak, spec.action, now)
                patch = _record_patch(done, spec.action)
                plan.patches.append((job.namespace, job.name, patch))
                verb = f"{spec.action}ed" if spec.action == "cancel" else "suspended"
                text = f"{what}; {verb} {spec.grace_seconds} s after the warning"
                reason = "IdleJobSuspended" if spec.action == "suspend" else "IdleJobCancelled"
                plan.job_events.append((job, JobEvent("Warning", reason, text)))
                plan.events.append(JobEvent("Normal", reason, f"{job.namespace}/{job.name}"))
                record = done
            else:
                plan.wake_at = _earliest(plan.wake_at, record.warned_at + grace)
        _sync_conditions(plan, policy, job, record, now)
        listed.append(_listed(job, since, peak, record, what))
    listed.sort(key=lambda j: (j["idleSince"], j["namespace"], j["job"]))
    plan.status = {
        "phase": "Active",
        "message": f"{len(listed)} of {covered} covered running jobs idle",
        "coveredJobs": covered,
        "jobs": listed[:MAX_LISTED_JOBS],
    }
    return plan


def _listed(
    job: CoveredJob, since: datetime, peak: float, record: IdleRecord | None, what: str
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "job": job.name,
        "namespace": job.namespace,
        "idleSince": _stamp(since),
        "activityPercent": round(peak, 1),
        "message": what[:1024],
    }
    if record is not None:
        entry["warnedAt"] = _stamp(record.warned_at)
        if record.action is not None and record.acted_at is not None:
            entry |= {"action": record.action, "actedAt": _stamp(record.acted_at)}
    return entry


def _caught_up(name: str, record: IdleRecord | None, seen: IdleJob | None) -> IdleRecord | None:
    """The job's record, completed from the policy's last status where the index has not
    caught up with the annotation this policy wrote (the warning, or the action after it)."""
    if seen is None or seen.warned_at is None:
        return record
    if record is None:
        return IdleRecord(name, seen.warned_at, seen.activity_percent, seen.action, seen.acted_at)
    if record.action is None and seen.action is not None and seen.warned_at == record.warned_at:
        return IdleRecord(name, record.warned_at, seen.activity_percent, seen.action, seen.acted_at)
    return record


def idle_conditions(
    policy: GryviaIdlePolicy, record: IdleRecord | None, now: datetime
) -> list[dict[str, Any]]:
    """The job's `IdleGPUs` and `IdleAction` conditions as `record` says (True since its
    times), or both False (reason `NotIdle`, since `now`) without one."""
    spec, name = policy.spec, policy.name
    measured = (
        f"GPU activity at most {record.activity_percent if record else 0.0:.1f}% for the "
        f"{spec.window_seconds} s window of idle policy {name} (threshold "
        f"{spec.threshold_percent:g}%)"
    )
    if record is None:
        busy = f"GPU activity not below the threshold {spec.threshold_percent:g}% for the "
        busy += f"{spec.window_seconds} s window of idle policy {name}"
        return [
            _condition(kind, "False", "NotIdle", busy, now)
            for kind in (IDLE_CONDITION, ACTION_CONDITION)
        ]
    text = f"{measured}: warned"
    if spec.action != "warn":
        text += f"; it will be {_done(spec.action)} {spec.grace_seconds} s after the warning"
    out = [_condition(IDLE_CONDITION, "True", "IdleWarning", text, record.warned_at)]
    if record.action is not None and record.acted_at is not None:
        acted = f"{measured} and {spec.grace_seconds} s after "
        acted += f"the warning at {_stamp(record.warned_at)}: {_done(record.action)}"
        reason = ACTION_REASONS[record.action]
        out.append(_condition(ACTION_CONDITION, "True", reason, acted, record.acted_at))
    return out


def _done(action: IdleAction) -> str:
    return "cancelled" if action == "cancel" else "suspended"


def _condition(kind: str, status: str, reason: str, message: str, when: datetime) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message[:1024],
        "lastTransitionTime": _stamp(when),
    }


def _sync_conditions(
    plan: IdlePlan,
    policy: GryviaIdlePolicy,
    job: CoveredJob,
    record: IdleRecord | None,
    now: datetime,
) -> None:
    """Put the job's idle conditions into the plan where its status does not show them yet.
    Without a record only conditions now True are set False (a job never warned gets none)."""
    have = (job.body.get("status") or {}).get("conditions") or []
    changed = []
    for cond in idle_conditions(policy, record, now):
        old = get_condition(have, cond["type"]) or {}
        if record is None and old.get("status") != "True":
            continue
        if any(old.get(k) != v for k, v in cond.items()):
            changed.append(cond)
    if changed:
        plan.conditions.append((job.namespace, job.name, changed))
