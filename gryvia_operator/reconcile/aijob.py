"""The GryviaAIJob reconciler: (job, observed state, now) -> child actions and status.

One pure function, `reconcile_job`, following behaviour reference section 4.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gryvia_operator.api import DurationError, GryviaAIJob, JobPhase
from gryvia_operator.api.names import ANNOTATION_CANCEL
from gryvia_operator.api.priority import requeue_pending
from gryvia_operator.reconcile.children import WORKLOAD_KINDS, desired_children
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.drift import drift_patch
from gryvia_operator.reconcile.env import WorkloadKind
from gryvia_operator.reconcile.jobstorage import storage_refused_status
from gryvia_operator.reconcile.kueuejob import (
    apply_workload_view,
    kueue_batch_job,
    kueue_job_status,
    queue_managed_placement,
)
from gryvia_operator.reconcile.kueuestatus import workload_view
from gryvia_operator.reconcile.names import Cond, Msg, Reason
from gryvia_operator.reconcile.observed import Blocker as Blocker
from gryvia_operator.reconcile.observed import ChildAction as ChildAction
from gryvia_operator.reconcile.observed import Observed as Observed
from gryvia_operator.reconcile.placement import select_nodes
from gryvia_operator.reconcile.priority import (
    carried_retries,
    preemption_survivors,
    requeued_status,
)
from gryvia_operator.reconcile.status import (
    OWNED_STATUS_KEYS,
    WorkloadSummary,
    get_condition,
    set_condition,
    summarize_batch_job,
    summarize_statefulset,
    timestamp,
)
from gryvia_operator.reconcile.views import ChildView

STICKY_PHASES = frozenset({JobPhase.SUCCEEDED, JobPhase.FAILED})
STOPPED_PHASES = frozenset({JobPhase.CANCELLED, JobPhase.PREEMPTED})
CANCEL_TERMINAL = frozenset(
    {JobPhase.SUCCEEDED, JobPhase.FAILED, JobPhase.CANCELLED, JobPhase.REJECTED}
)

DATASET_RETRY_SECONDS = 5.0
"""How often a job waiting for its datasets is looked at (their staging moves on)."""


@dataclass(frozen=True)
class Reconciliation:
    """The outcome: child actions, the desired status (owned keys), and when to look again."""

    actions: tuple[ChildAction, ...]
    status: dict[str, Any]
    requeue_after: float | None = None
    waiting_for_nodes: bool = False
    """True while no node fits: any node or pod change should retry at once."""


def current_status(job: GryviaAIJob) -> dict[str, Any]:
    """The owned keys of the job's status as stored (wire names)."""
    if job.status is None:
        return {}
    dumped = job.status.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {k: dumped[k] for k in OWNED_STATUS_KEYS if k in dumped}


def _deletes(children: tuple[ChildView, ...]) -> tuple[ChildAction, ...]:
    return tuple(ChildAction("delete", c.kind, c.name) for c in children if not c.deleting)


def _terminal(
    status: dict[str, Any],
    phase: JobPhase,
    message: str,
    reason: str,
    gen: int | None,
    now: datetime,
) -> dict[str, Any]:
    status["phase"] = phase.value
    status["message"] = message
    status["completionTime"] = status.get("completionTime") or timestamp(now)
    conditions = status.get("conditions") or []
    status["conditions"] = set_condition(conditions, Cond.READY, "False", reason, message, now, gen)
    return status


def reconcile_job(
    job: GryviaAIJob, observed: Observed, config: ReconcileConfig, now: datetime
) -> Reconciliation:
    """Decide the child actions and the status for `job` (idempotent; no I/O, no clock).

    Order (each step can only stop the ones after it): deleted -> nothing; Succeeded/Failed
    sticky; Cancelled/Preempted -> delete the workload; Rejected -> delete every child; the
    cancel annotation -> Cancelled; Queued without Kueue -> hold; a bad timeout -> Failed;
    the admission gate; a child the API server refused -> Failed; the data claim refused by
    a ResourceQuota -> Pending (retried); placement (Pending, or
    Scheduling before Scheduled=True); then the
    PVC, Service and workload, drift patches, and the status derived from the workload.
    """
    status = current_status(job)
    phase = job.phase
    gen = job.metadata.generation
    if job.metadata.deletion_timestamp is not None:
        return Reconciliation((), status)
    if phase in STICKY_PHASES:
        status["completionTime"] = status.get("completionTime") or timestamp(now)
        return Reconciliation((), status)
    if phase in STOPPED_PHASES and requeue_pending(status):  # preempted by priority
        if observed.workloads or observed.pods:  # wait until its pods are gone
            retry = config.conflict_retry_seconds
            return Reconciliation(_deletes(observed.workloads), status, retry)
        return Reconciliation((), requeued_status(status, now, gen), 0.0)
    if phase in STOPPED_PHASES:
        status["completionTime"] = status.get("completionTime") or timestamp(now)
        return Reconciliation(_deletes(observed.workloads), status)
    if phase == JobPhase.REJECTED:
        owned = (*observed.workloads, *(c for c in (observed.service, observed.pvc) if c))
        owned = tuple(c for c in owned if c.owner_uid)  # never the namespace's shared claim
        return Reconciliation(_deletes(tuple(owned)), status)
    if (job.metadata.annotations or {}).get(ANNOTATION_CANCEL) == "true":
        status = _terminal(status, JobPhase.CANCELLED, Msg.CANCELLED, Reason.CANCELLED, gen, now)
        return Reconciliation(_deletes(observed.workloads), status)
    conditions = status.get("conditions") or []
    try:
        job.spec.timeout_seconds()
    except DurationError as exc:
        status = _terminal(status, JobPhase.FAILED, str(exc), Reason.INVALID_SPEC, gen, now)
        return Reconciliation((), status)
    kueue_managed = observed.kueue_queue is not None and _workload_kind(job, observed) == "job"
    if phase in (JobPhase.PENDING, JobPhase.QUEUED) and not kueue_managed:
        decision = observed.admission
        if decision.verdict != "allow":
            new_phase = JobPhase.QUEUED if decision.verdict == "queue" else JobPhase.REJECTED
            status["phase"], status["message"] = new_phase.value, decision.message
            kind = Cond.REJECTED if decision.verdict == "reject" else Cond.ADMITTED
            state = "True" if decision.verdict == "reject" else "False"
            status["conditions"] = set_condition(
                conditions, kind, state, decision.reason, decision.message, now, gen
            )
            return Reconciliation((), status)
        if decision.reason:  # a quota governs the job: record the reservation
            status["conditions"] = set_condition(
                conditions, Cond.ADMITTED, "True", decision.reason, decision.message, now, gen
            )
        unchecked = get_condition(status.get("conditions") or [], Cond.ADMISSION_UNCHECKED)
        if decision.unchecked or unchecked is not None:  # the admission gate failed open
            status["conditions"] = set_condition(
                status.get("conditions") or [],
                Cond.ADMISSION_UNCHECKED,
                "True" if decision.unchecked else "False",
                "BudgetsUnchecked" if decision.unchecked else "BudgetsChecked",
                decision.unchecked or "nothing left unchecked by the admission gate",
                now,
                gen,
            )
    if observed.refused:
        text = "; ".join(observed.refused)
        status = _terminal(status, JobPhase.FAILED, text, Reason.INVALID_SPEC, gen, now)
        return Reconciliation((), status)
    if observed.storage_refused and not observed.workloads:  # the claim's quota said no
        status = storage_refused_status(status, observed.storage_refused, now, gen)
        return Reconciliation((), status, config.storage_retry_seconds)
    waits_for_data = phase in (JobPhase.PENDING, JobPhase.QUEUED) and not observed.workloads
    if observed.dataset_wait and waits_for_data:  # a dataset is not staged (or not shared) yet
        status = storage_refused_status(
            status, observed.dataset_wait, now, gen, reason=Reason.DATASET_NOT_READY
        )
        return Reconciliation((), status, DATASET_RETRY_SECONDS)
    return _run(job, observed, config, now, status)


def reconcile_invalid(
    status: dict[str, Any], messages: list[str], now: datetime, generation: int | None = None
) -> dict[str, Any]:
    """Status of a job whose spec does not parse (it slipped past the webhook): Failed with
    reason InvalidSpec and the validation messages; terminal phases are left alone."""
    phase = status.get("phase") or ""
    if phase in {p.value for p in (*STICKY_PHASES, *STOPPED_PHASES, JobPhase.REJECTED)}:
        return dict(status)
    out = {k: status[k] for k in OWNED_STATUS_KEYS if k in status}
    text = "invalid spec: " + "; ".join(messages)
    return _terminal(out, JobPhase.FAILED, text, Reason.INVALID_SPEC, generation, now)


def _workload_kind(job: GryviaAIJob, observed: Observed) -> WorkloadKind:
    """An existing owned workload wins (never migrated); else the spec's kind."""
    for child in observed.workloads:
        for kind, k8s_kind in WORKLOAD_KINDS.items():
            if child.kind == k8s_kind:
                return kind
    return job.spec.effective_workload_kind()


def _place(
    job: GryviaAIJob, observed: Observed, status: dict[str, Any], now: datetime
) -> str | None:
    """Run placement into `status`; return the failure message, or None when placed."""
    gen = job.metadata.generation
    conditions = status.get("conditions") or []
    if job.spec.cpu_only:
        status.pop("nodesAllocated", None)
        status["gpusAllocated"] = 0
        status["conditions"] = set_condition(
            conditions, Cond.SCHEDULED, "True", Reason.CPU_ONLY, Msg.CPU_ONLY, now, gen
        )
        return None
    pods = preemption_survivors(observed.node_pods, observed.preempts_below)
    placement = select_nodes(job, observed.nodes, pods)
    if not placement.ok:
        status["conditions"] = set_condition(
            conditions,
            Cond.SCHEDULED,
            "False",
            Reason.SCHEDULING_FAILED,
            placement.message,
            now,
            gen,
        )
        return placement.message
    status["nodesAllocated"] = list(placement.nodes)
    status["gpusAllocated"] = placement.gpus_per_pod
    status["conditions"] = set_condition(
        conditions, Cond.SCHEDULED, "True", Reason.SCHEDULED, Msg.SCHEDULED, now, gen
    )
    return None


def _run(
    job: GryviaAIJob,
    observed: Observed,
    config: ReconcileConfig,
    now: datetime,
    status: dict[str, Any],
) -> Reconciliation:
    kind = _workload_kind(job, observed)
    k8s_kind = WORKLOAD_KINDS[kind]
    workload = next((w for w in observed.workloads if w.kind == k8s_kind), None)
    phase = job.phase
    scheduled = get_condition(status.get("conditions") or [], Cond.SCHEDULED)
    needs_placement = workload is None and (
        phase in (JobPhase.PENDING, JobPhase.QUEUED)
        or (phase == JobPhase.SCHEDULING and (scheduled or {}).get("status") != "True")
    )
    queue = observed.kueue_queue if kind == "job" else None
    if needs_placement and queue is not None:
        queue_managed_placement(status, now, job.metadata.generation)
    elif needs_placement:
        failure = _place(job, observed, status, now)
        if failure is not None:
            status["phase"], status["message"] = JobPhase.PENDING.value, failure
            return Reconciliation(
                (), status, config.scheduling_retry_seconds, waiting_for_nodes=True
            )
    actions: list[ChildAction] = []
    blocked = {(b.kind, b.name): b for b in observed.blocked}
    current = {
        (c.kind, c.name): c for c in (*observed.workloads, observed.service, observed.pvc) if c
    }
    requeue: float | None = None
    problems: list[str] = []
    for child in desired_children(job, config, kind, observed.data_claim):
        key = (str(child["kind"]), str(child["metadata"]["name"]))
        if queue is not None and key[0] == "Job":
            child = kueue_batch_job(child, queue, job.spec.priority)
        have = current.get(key)
        if key in blocked:
            template = Msg.PREVIOUS_OWNER if blocked[key].previous_owner else Msg.NOT_OWNED
            problems.append(template.format(kind=key[0], namespace=job.namespace, name=key[1]))
            requeue = config.conflict_retry_seconds
        elif have is None:
            actions.append(ChildAction("create", key[0], key[1], child))
        elif have.deleting:
            requeue = config.conflict_retry_seconds  # recreate once it is gone
        elif queue is not None and key[0] == "Job":
            pass  # Kueue alone suspends and resumes the Job
        elif not have.owner_uid:
            pass  # the namespace's shared claim: the first job sized it, no job patches it
        else:
            patch = drift_patch(child, have)
            if patch is not None:
                actions.append(ChildAction("patch", key[0], key[1], patch))
    summary = _summary(job, kind, workload, observed)
    _apply_summary(job, status, summary, now)
    if queue is not None:
        view = workload_view(observed.kueue_workload)
        apply_workload_view(status, view, now, job.metadata.generation, observed.kueue_preemptor)
        status["kueue"] = kueue_job_status(
            status.get("kueue"),
            queue,
            view,
            observed.kueue_cluster_queue,
            job.spec.total_gpus(),
            observed.kueue_queue_workloads,
        )
    if problems:
        text = "; ".join(problems)
        status["message"] = text
        status["conditions"] = set_condition(
            status.get("conditions") or [],
            Cond.READY,
            "False",
            Reason.CHILD_CONFLICT,
            text,
            now,
            job.metadata.generation,
        )
    return Reconciliation(tuple(actions), status, requeue)


def _summary(
    job: GryviaAIJob, kind: WorkloadKind, workload: ChildView | None, observed: Observed
) -> WorkloadSummary:
    expected = job.spec.pod_count()
    if kind == "job":
        return summarize_batch_job(workload, expected, suspend=job.spec.suspend)
    return summarize_statefulset(workload, observed.pods, expected)


def _apply_summary(
    job: GryviaAIJob, status: dict[str, Any], summary: WorkloadSummary, now: datetime
) -> None:
    """Write the workload summary into `status`; a Running job never goes back to Scheduling."""
    phase = summary.phase
    message = summary.message
    if job.phase == JobPhase.RUNNING and phase == JobPhase.SCHEDULING:
        phase = JobPhase.RUNNING
    status["phase"] = phase.value
    status["message"] = message
    status["retries"] = summary.retries + carried_retries(job)
    status["replicasReady"] = summary.replicas_ready
    if phase in (JobPhase.RUNNING, JobPhase.SUCCEEDED, JobPhase.FAILED):
        status["startTime"] = status.get("startTime") or summary.start_time or timestamp(now)
    if phase in (JobPhase.SUCCEEDED, JobPhase.FAILED):
        status["completionTime"] = (
            status.get("completionTime") or summary.completion_time or timestamp(now)
        )
    ready = summary.ready
    status["conditions"] = set_condition(
        status.get("conditions") or [],
        Cond.READY,
        ready.status,
        ready.reason,
        ready.message,
        now,
        job.metadata.generation,
    )
