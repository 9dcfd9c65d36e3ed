"""Priorities and preemption: pure rules (no I/O, no clock).

- which PriorityClass a job's pods get (`job_priority_class`);
- the PriorityClass a GryviaPriority owns (`desired_priority_class`);
- which running jobs of a full quota a waiting higher-priority job preempts (`choose_victims`);
- the victim's status (`preempted_status`: phase Preempted, condition Preempted naming the
  preemptor, `status.preemptions` + 1) and its requeue once its pods are gone
  (`requeued_status`: phase Pending, retry count carried in `status.carriedRetries`).

docs/priorities.md describes the rules for people.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gryvia_operator.api import GryviaAIJob, GryviaPriority, JobPhase
from gryvia_operator.api.controlled import owner_reference
from gryvia_operator.api.names import (
    ANNOTATION_PRIORITY_CLASS,
    LABEL_MANAGED_BY,
    LABEL_PRIORITY,
)
from gryvia_operator.api.priority import (
    COND_PREEMPTED,
    REASON_BY_SCHEDULER,
    REASON_PREEMPTED,
    REASON_REQUEUED,
    band_for,
)
from gryvia_operator.reconcile.status import get_condition, set_condition, timestamp
from gryvia_operator.reconcile.views import PodView

MANAGED_BY = "gryvia-priority-controller"
_DROPPED_ON_REQUEUE = (
    "completionTime",
    "startTime",
    "nodesAllocated",
    "gpusAllocated",
    "replicasReady",
)
_RUN_CONDITIONS = ("Scheduled", "Admitted", "AdmissionUnchecked")


def job_priority_class(job: GryviaAIJob, enabled: bool) -> str | None:
    """The PriorityClass of the job's pods, None for the cluster default.

    With priorities enabled: `spec.priorityClassName`, else the annotation
    `gryvia.io/priority-class`, else the table row of `spec.priority` (`api.priority`);
    disabled: the annotation only (what the operator always did).
    """
    annotated = (job.metadata.annotations or {}).get(ANNOTATION_PRIORITY_CLASS) or None
    if not enabled:
        return annotated
    if job.spec.priority_class_name:
        return job.spec.priority_class_name
    if annotated:
        return annotated
    band = band_for(job.spec.priority)
    return band.name if band else None


def priority_value(
    spec: Mapping[str, Any], annotations: Mapping[str, str], values: Mapping[str, int]
) -> int:
    """The numeric priority a job body's spec stands for (used to compare jobs).

    `values`: GryviaPriority name -> value. The named class (spec, then annotation) counts
    when known; a name that is not (yet) known counts as 0. Without a name, the table row of
    `spec.priority`, else 0.
    """
    name = spec.get("priorityClassName") or annotations.get(ANNOTATION_PRIORITY_CLASS)
    if name:
        return values.get(str(name), 0)
    raw = spec.get("priority")
    band = band_for(raw) if isinstance(raw, int) and not isinstance(raw, bool) else None
    if band is None:
        return 0
    return values.get(band.name, band.value)


def desired_priority_class(prio: GryviaPriority) -> dict[str, Any]:
    """The PriorityClass `prio` owns: same name, value, preemptionPolicy and description,
    a controller owner reference (deleted with it) and Gryvia's labels."""
    spec = prio.spec
    body: dict[str, Any] = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {
            "name": prio.name,
            "labels": {LABEL_MANAGED_BY: MANAGED_BY, LABEL_PRIORITY: prio.name},
            "ownerReferences": [owner_reference(prio)],
        },
        "value": spec.value,
        "preemptionPolicy": spec.preemption_policy,
        "globalDefault": False,
        "description": spec.description or f"Gryvia priority {prio.name}",
    }
    return body


def class_drift(desired: Mapping[str, Any], have: Mapping[str, Any]) -> str:
    """How an existing PriorityClass differs from `desired`: "" (same), "patch" (labels,
    owner or description: patchable) or "replace" (value or preemptionPolicy: immutable in
    Kubernetes, so delete and create)."""
    if have.get("value") != desired["value"]:
        return "replace"
    if (have.get("preemptionPolicy") or "PreemptLowerPriority") != desired["preemptionPolicy"]:
        return "replace"
    meta, want = have.get("metadata") or {}, desired["metadata"]
    labels = meta.get("labels") or {}
    if any(labels.get(k) != v for k, v in want["labels"].items()):
        return "patch"
    uids = {r.get("uid") for r in meta.get("ownerReferences") or []}
    if want["ownerReferences"][0]["uid"] not in uids:
        return "patch"
    return "patch" if have.get("description") != desired["description"] else ""


def owned_by_other(have: Mapping[str, Any], uid: str) -> bool:
    """True when an existing PriorityClass was not made by Gryvia for the GryviaPriority `uid`
    (someone else's class of the same name: never taken over)."""
    meta = have.get("metadata") or {}
    if (meta.get("labels") or {}).get(LABEL_MANAGED_BY) == MANAGED_BY:
        return False
    return not any(r.get("uid") == uid for r in meta.get("ownerReferences") or [])


@dataclass(frozen=True)
class RunningJob:
    """A job that holds quota GPUs: a preemption candidate."""

    namespace: str
    name: str
    value: int
    gpus: int
    started: str = ""
    """status.startTime ("" when not started): newer runs are preempted first."""

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return f"{self.namespace}/{self.name}"


def choose_victims(
    value: int, need_gpus: int, need_slots: int, candidates: Iterable[RunningJob]
) -> tuple[RunningJob, ...]:
    """The fewest-lowest jobs to preempt so a waiting job of priority `value` fits: only jobs
    of strictly lower priority; lowest priority first, then the most recently started (least
    work lost), then by key. Taken until at least `need_gpus` GPUs and `need_slots` running
    slots are freed. Empty when nothing is needed or the lower jobs cannot free enough (then
    nobody is preempted: no preemption that does not let the job in)."""
    if need_gpus <= 0 and need_slots <= 0:
        return ()
    lower = [c for c in candidates if c.value < value and c.gpus > 0]
    lower.sort(key=lambda c: c.key)
    lower.sort(key=lambda c: c.started, reverse=True)
    lower.sort(key=lambda c: c.value)
    chosen: list[RunningJob] = []
    freed = 0
    for job in lower:
        if freed >= need_gpus and len(chosen) >= need_slots:
            break
        chosen.append(job)
        freed += job.gpus
    if freed < need_gpus or len(chosen) < need_slots:
        return ()
    return tuple(chosen)


def preemption_message(preemptor: str, value: int, victim_value: int) -> str:
    """`preempted by <ns/name> (priority 10000 > 1000); requeued once its pods are gone`."""
    return (
        f"preempted by {preemptor} (priority {value} > {victim_value}); "
        "requeued once its pods are gone"
    )


def preempted_status(
    status: Mapping[str, Any],
    message: str,
    now: datetime,
    generation: int | None = None,
) -> dict[str, Any]:
    """The victim's status after preemption: phase Preempted with `message`, condition
    Preempted=True/PreemptedByPriority with the same message (naming the preemptor),
    `preemptions` + 1 (the job hooks' Preempted event fires on that increase)."""
    out = dict(status)
    out["phase"] = JobPhase.PREEMPTED.value
    out["message"] = message
    out["preemptions"] = int(out.get("preemptions") or 0) + 1
    kept = [c for c in out.get("conditions") or [] if c.get("type") != COND_PREEMPTED]
    out["conditions"] = set_condition(  # a fresh lastTransitionTime: when this run ended
        kept,
        COND_PREEMPTED,
        "True",
        REASON_PREEMPTED,
        message,
        now,
        generation,
    )
    return out


def requeued_status(
    status: Mapping[str, Any], now: datetime, generation: int | None = None
) -> dict[str, Any]:
    """The status of a preempted job put back in the queue: phase Pending, its retry count
    kept (`carriedRetries` = `retries` so far), run fields and the Scheduled/Admitted
    conditions cleared (it is placed and admitted again), condition Preempted kept as the
    record of who preempted it (reason Requeued)."""
    out = {k: v for k, v in status.items() if k not in _DROPPED_ON_REQUEUE}
    retries = int(out.get("retries") or 0)
    out["retries"] = retries
    out["carriedRetries"] = retries
    conditions = [c for c in out.get("conditions") or [] if c.get("type") not in _RUN_CONDITIONS]
    cond = get_condition(conditions, COND_PREEMPTED) or {}
    text = str(cond.get("message") or "preempted").split(";")[0]
    message = f"{text}; requeued at {timestamp(now)}, waiting to run again"
    out["conditions"] = set_condition(
        conditions, COND_PREEMPTED, "True", REASON_REQUEUED, message, now, generation
    )
    out["phase"] = JobPhase.PENDING.value
    out["message"] = message
    return out


def carried_retries(job: GryviaAIJob) -> int:
    """Failed pods of runs before the last preemption (`status.carriedRetries`, 0 if unset)."""
    return (job.status.carried_retries or 0) if job.status else 0


def remaining_backoff(job: GryviaAIJob) -> int:
    """backoffLimit of the job's batch Job: `retryLimit` less the carried retries (>= 0)."""
    return max(job.spec.retry_limit - carried_retries(job), 0)


def need_for(
    gpus: int, allocated: int, max_gpus: int, running: int, max_running: int | None
) -> tuple[int, int]:
    """(GPUs, running slots) a job of `gpus` GPUs lacks under one quota: GPUs beyond
    `max_gpus` and, with `max_running` set, the slots beyond it."""
    need_gpus = max(allocated + gpus - max_gpus, 0)
    need_slots = max(running + 1 - max_running, 0) if max_running else 0
    return need_gpus, need_slots


def job_run(job: GryviaAIJob) -> int:
    """`api.priority.run_index` of a job model: the run its pods and usage record belong to."""
    status = job.status
    if status is None or not status.preemptions:
        return 0
    runs = max(status.preemptions - (status.scheduler_preemptions or 0), 0)
    stopping = status.phase == JobPhase.PREEMPTED and any(
        c.type == COND_PREEMPTED and c.reason == REASON_PREEMPTED for c in status.conditions or []
    )
    return runs - 1 if runs and stopping else runs


def preempted_at(job: GryviaAIJob) -> datetime | None:
    """When the job was last preempted by the quota gate (its Preempted condition's
    lastTransitionTime); None when never, or when the kube-scheduler's preemption (which ends
    no run) replaced that condition since."""
    conditions = job.status.conditions if job.status else None
    cond = next((c for c in conditions or [] if c.type == COND_PREEMPTED), None)
    if cond is None or cond.reason == REASON_BY_SCHEDULER:
        return None
    return cond.last_transition_time


def preemption_survivors(pods: Iterable[PodView], below: int | None) -> tuple[PodView, ...]:
    """The bound pods a job's placement must leave alone: all of them (`below` None), else
    those of priority `below` or more (the scheduler may preempt the others for it)."""
    if below is None:
        return tuple(pods)
    return tuple(p for p in pods if p.priority >= below)
