"""A job's status from its workload: phase, Ready condition, counts; conditions and patches."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gryvia_operator.api import JobPhase
from gryvia_operator.reconcile.names import Msg, Reason
from gryvia_operator.reconcile.views import ChildView, PodView

OWNED_STATUS_KEYS = (
    "phase",
    "message",
    "conditions",
    "startTime",
    "completionTime",
    "nodesAllocated",
    "gpusAllocated",
    "retries",
    "replicasReady",
    "pending",
    "estimatedStart",
    "preemptions",
    "schedulerPreemptions",
    "carriedRetries",
    "kueue",
)
"""status keys the AIJob reconciler writes; every other key belongs to someone else."""


def timestamp(now: datetime) -> str:
    """RFC 3339 in UTC with whole seconds, as Kubernetes writes times."""
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class ReadyState:
    """The Ready condition's status, reason and message."""

    status: str
    reason: str
    message: str


@dataclass(frozen=True)
class WorkloadSummary:
    """What a workload says about its job."""

    phase: JobPhase
    message: str
    ready: ReadyState
    retries: int = 0
    replicas_ready: int = 0
    start_time: str | None = None
    completion_time: str | None = None


def _condition(conditions: Any, kind: str) -> Mapping[str, Any] | None:
    for cond in conditions or []:
        if isinstance(cond, Mapping) and cond.get("type") == kind and cond.get("status") == "True":
            return cond
    return None


def _readiness(ready: int, total: int) -> ReadyState:
    if total > 0 and ready >= total:
        return ReadyState("True", Reason.READY, Msg.ALL_READY)
    if ready > 0:
        return ReadyState(
            "False", Reason.PARTIALLY_READY, Msg.PARTIALLY_READY.format(ready=ready, total=total)
        )
    return ReadyState("False", Reason.PODS_NOT_READY, Msg.NOT_READY.format(total=total))


def summarize_batch_job(
    view: ChildView | None, expected: int, *, suspend: bool = False
) -> WorkloadSummary:
    """Summarise a batch Job (None: just created, with `suspend` as its spec says).

    Complete -> Succeeded; Failed -> Failed with `<Reason>: <Message> (<failed>/<expected>
    pod(s) failed)`; suspended -> Scheduling; ready pods or succeeded indexes -> Running;
    otherwise Scheduling.
    """
    suspended_state = ReadyState("False", Reason.SUSPENDED, Msg.SUSPENDED)
    if view is None:
        if suspend:
            return WorkloadSummary(JobPhase.SCHEDULING, Msg.SUSPENDED, suspended_state)
        not_ready = _readiness(0, expected)
        return WorkloadSummary(JobPhase.SCHEDULING, not_ready.message, not_ready)
    status, conditions = view.status, view.status.get("conditions")
    failed = int(status.get("failed") or 0)
    ready = int(status.get("ready") or 0)
    succeeded = int(status.get("succeeded") or 0)
    started = status.get("startTime")

    def summary(
        phase: JobPhase, message: str, state: ReadyState, end: str | None = None
    ) -> WorkloadSummary:
        return WorkloadSummary(phase, message, state, failed, ready, started, end)

    complete = _condition(conditions, "Complete")
    if complete is not None:
        end = status.get("completionTime") or complete.get("lastTransitionTime")
        done = ReadyState("False", Reason.COMPLETED, Msg.COMPLETED)
        return summary(JobPhase.SUCCEEDED, Msg.COMPLETED, done, end)
    failure = _condition(conditions, "Failed")
    if failure is not None:
        text = Msg.JOB_FAILED.format(
            reason=failure.get("reason") or "Failed",
            message=failure.get("message") or "the Job failed",
            failed=failed,
            expected=expected,
        )
        state = ReadyState("False", Reason.FAILED, text)
        return summary(JobPhase.FAILED, text, state, failure.get("lastTransitionTime"))
    if view.spec.get("suspend") or _condition(conditions, "Suspended") is not None:
        return summary(JobPhase.SCHEDULING, Msg.SUSPENDED, suspended_state)
    state = _readiness(ready, expected)
    if ready > 0 or succeeded > 0:
        message = Msg.RUNNING.format(ready=ready, total=expected)
        if succeeded:
            message += Msg.SUCCEEDED_SO_FAR.format(succeeded=succeeded)
        return summary(JobPhase.RUNNING, message, state)
    return summary(JobPhase.SCHEDULING, state.message, state)


def summarize_statefulset(
    view: ChildView | None, pods: Sequence[PodView], expected: int
) -> WorkloadSummary:
    """Summarise a StatefulSet: Running once a replica is ready; Succeeded when every pod
    succeeded; Failed when all pods ended and one failed (rare with restartPolicy Always)."""
    ready = int(view.status.get("readyReplicas") or 0) if view is not None else 0
    state = _readiness(ready, expected)
    terminal = [p for p in pods if p.terminal]
    if pods and len(terminal) == len(pods) and len(pods) >= expected:
        failed = sum(1 for p in pods if p.phase == "Failed")
        if failed == 0:
            done = ReadyState("False", Reason.COMPLETED, Msg.COMPLETED)
            message = Msg.SUCCEEDED.format(total=len(pods))
            return WorkloadSummary(JobPhase.SUCCEEDED, message, done, replicas_ready=0)
        text = Msg.PODS_FAILED.format(failed=failed, total=len(pods))
        return WorkloadSummary(
            JobPhase.FAILED, text, ReadyState("False", Reason.FAILED, text), retries=failed
        )
    if ready > 0:
        message = Msg.RUNNING.format(ready=ready, total=expected)
        return WorkloadSummary(JobPhase.RUNNING, message, state, replicas_ready=ready)
    return WorkloadSummary(JobPhase.SCHEDULING, state.message, state, replicas_ready=ready)


def set_condition(
    conditions: Iterable[Mapping[str, Any]],
    kind: str,
    status: str,
    reason: str,
    message: str,
    now: datetime,
    generation: int | None = None,
) -> list[dict[str, Any]]:
    """Return `conditions` with condition `kind` set; lastTransitionTime moves only when the
    status changes. Other conditions are kept as they are, in order."""
    out: list[dict[str, Any]] = []
    found = False
    for cond in conditions:
        if cond.get("type") != kind:
            out.append(dict(cond))
            continue
        found = True
        changed = cond.get("status") != status
        when = timestamp(now) if changed else cond.get("lastTransitionTime") or timestamp(now)
        out.append(_make(kind, status, reason, message, when, generation))
    if not found:
        out.append(_make(kind, status, reason, message, timestamp(now), generation))
    return out


def _make(
    kind: str, status: str, reason: str, message: str, when: str, generation: int | None
) -> dict[str, Any]:
    cond: dict[str, Any] = {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": when,
    }
    if generation is not None:
        cond["observedGeneration"] = generation
    return cond


def put_conditions(
    wanted: Iterable[Mapping[str, Any]], conditions: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Return `conditions` with each condition of `wanted` in place of the one of its type
    (appended when absent), as given: its lastTransitionTime is the caller's. Other
    conditions are kept as they are, in order."""
    todo = {str(c.get("type")): dict(c) for c in wanted}
    out = [dict(todo.pop(str(c.get("type")), c)) for c in conditions]
    return out + list(todo.values())


def get_condition(conditions: Iterable[Mapping[str, Any]], kind: str) -> Mapping[str, Any] | None:
    """The condition of type `kind`, or None."""
    return next((c for c in conditions if c.get("type") == kind), None)


def status_patch(current: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch from `current` to `desired` over the keys the reconciler owns.

    Keys missing from `desired` are removed (null) only when present in `current`; keys the
    reconciler does not own are never touched. Empty when nothing changes.
    """
    patch: dict[str, Any] = {}
    for key in OWNED_STATUS_KEYS:
        want, have = desired.get(key), current.get(key)
        if want != have:
            patch[key] = want
    return patch


@dataclass(frozen=True)
class JobEvent:
    """A Kubernetes Event to post on the job."""

    type: str
    reason: str
    message: str


WARNING_PHASES = frozenset({JobPhase.FAILED, JobPhase.REJECTED, JobPhase.PREEMPTED})


def phase_event(old: str | None, new: Mapping[str, Any]) -> JobEvent | None:
    """The Event for a phase change (reason = the new phase), or None when it did not change."""
    phase = new.get("phase")
    if not phase or phase == (old or ""):
        return None
    kind = "Warning" if phase in WARNING_PHASES else "Normal"
    scheduled = get_condition(new.get("conditions") or [], "Scheduled")
    if phase == JobPhase.PENDING and scheduled is not None and scheduled.get("status") == "False":
        kind = "Warning"
    text = f"{old or 'new'} -> {phase}"
    if new.get("message"):
        text += f": {new['message']}"
    return JobEvent(kind, str(phase), text)
