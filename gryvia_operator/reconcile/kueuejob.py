"""A GryviaAIJob whose batch Job Kueue admits: no placement by Gryvia, the Job created suspended
with Kueue's labels, suspension left to Kueue, and the Workload's state in the job's status.

Pure; rules from behaviour.md sections 4-6 ("Kueue"). One admission authority per job: a job in
a Kueue queue skips Gryvia's own quota gate and placement (the reconciler's `Observed.kueue_queue`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any, Final

from gryvia_operator.api.preemption import COND_PREEMPTED
from gryvia_operator.reconcile.kueue import GPU_RESOURCE, job_labels
from gryvia_operator.reconcile.kueuestatus import Preemption, WorkloadView, preemption_message
from gryvia_operator.reconcile.names import Cond
from gryvia_operator.reconcile.status import set_condition

KUEUE_ADMITTED: Final = "KueueAdmitted"
"""Condition type: False while Kueue holds the job (reason = Kueue's), True once admitted."""
QUEUE_MANAGED: Final = "QueueManaged"
QUEUE_MANAGED_MESSAGE: Final = "Placement is left to Kueue and kube-scheduler"


def queue_managed_placement(status: dict[str, Any], now: datetime, generation: int | None) -> None:
    """Record in `status` that Gryvia places nothing: Scheduled=True/QueueManaged, no nodes,
    gpusAllocated 0 (behaviour.md section 4, step 8)."""
    status.pop("nodesAllocated", None)
    status["gpusAllocated"] = 0
    status["conditions"] = set_condition(
        status.get("conditions") or [],
        Cond.SCHEDULED,
        "True",
        QUEUE_MANAGED,
        QUEUE_MANAGED_MESSAGE,
        now,
        generation,
    )


def kueue_batch_job(job: Mapping[str, Any], queue: str, priority: int | None) -> dict[str, Any]:
    """The batch Job `job` as Kueue must receive it: labels `kueue.x-k8s.io/queue-name` (and the
    priority class of the job's band) and `spec.suspend: true`, on the Job and its pod template
    metadata left as built. Returns a new dict."""
    out = dict(job)
    meta = dict(out.get("metadata") or {})
    meta["labels"] = {**(meta.get("labels") or {}), **job_labels(queue, priority)}
    out["metadata"] = meta
    out["spec"] = {**(out.get("spec") or {}), "suspend": True}
    return out


def _gpus(quantity: Any) -> int:
    try:
        return int(float(str(quantity if quantity is not None else 0)))
    except ValueError:
        return 0


def _nominal(cluster_queue: Mapping[str, Any], flavor: str) -> int | None:
    for group in (cluster_queue.get("spec") or {}).get("resourceGroups") or []:
        for entry in group.get("flavors") or []:
            if entry.get("name") != flavor:
                continue
            for res in entry.get("resources") or []:
                if res.get("name") == GPU_RESOURCE:
                    return _gpus(res.get("nominalQuota"))
    return None


def cluster_queue_borrowed(
    cluster_queue: Mapping[str, Any] | None,
    workloads: Iterable[Mapping[str, Any]],
    flavor: str,
) -> int | None:
    """GPUs (`nvidia.com/gpu`) of `flavor` the ClusterQueue holds over its nominal quota: the
    GPUs of the admitted, unfinished `workloads` it admitted in that flavor (their
    `status.admission.podSetAssignments[].resourceUsage`) minus the flavor's nominalQuota in
    its spec. Read from the Workloads rather than the ClusterQueue's status, which Kueue
    updates after the admission. None without the ClusterQueue or the flavor in its spec."""
    if cluster_queue is None:
        return None
    nominal = _nominal(cluster_queue, flavor)
    if nominal is None:
        return None
    name = (cluster_queue.get("metadata") or {}).get("name")
    used = 0
    for workload in workloads:
        status = workload.get("status") or {}
        admission = status.get("admission") or {}
        conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        if admission.get("clusterQueue") != name or conditions.get("Finished") == "True":
            continue
        if conditions.get("QuotaReserved") != "True":
            continue
        for pod_set in admission.get("podSetAssignments") or []:
            if (pod_set.get("flavors") or {}).get(GPU_RESOURCE) == flavor:
                used += _gpus((pod_set.get("resourceUsage") or {}).get(GPU_RESOURCE))
    return max(used - nominal, 0)


def kueue_job_status(
    previous: Mapping[str, Any] | None,
    queue: str,
    view: WorkloadView,
    cluster_queue: Mapping[str, Any] | None,
    job_gpus: int,
    workloads: Iterable[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """`status.kueue` of a job in Kueue queue `queue`: `queueName`, and while admitted the
    `clusterQueue`, the GPU `flavor` and `borrowedGPUs` (the GPUs the ClusterQueue holds over
    its nominal quota of the flavor, at most `job_gpus`: `cluster_queue_borrowed` of
    `cluster_queue`, the ClusterQueue object, and `workloads`, the Workloads of the job's
    namespace; taken once per admission and kept while the admission stays the same)."""
    out: dict[str, Any] = {"queueName": queue}
    if view.stage != "Admitted":
        return out
    flavor = view.flavors.get(GPU_RESOURCE) or next(iter(sorted(view.flavors.values())), "")
    if view.cluster_queue:
        out["clusterQueue"] = view.cluster_queue
    if flavor:
        out["flavor"] = flavor
    old = previous or {}
    same = old.get("clusterQueue") == out.get("clusterQueue") and old.get("flavor") == flavor
    if same and old.get("borrowedGPUs") is not None:
        out["borrowedGPUs"] = old["borrowedGPUs"]
        return out
    borrowed = cluster_queue_borrowed(cluster_queue, workloads, flavor) if flavor else None
    if borrowed is not None:
        out["borrowedGPUs"] = min(borrowed, job_gpus)
    return out


def needs_cluster_queue(previous: Mapping[str, Any] | None, view: WorkloadView) -> bool:
    """True when `kueue_job_status` needs the ClusterQueue object: the Workload is admitted
    and the job's status has no borrowed GPUs for this admission yet."""
    if view.stage != "Admitted":
        return False
    old = previous or {}
    flavor = view.flavors.get(GPU_RESOURCE) or next(iter(sorted(view.flavors.values())), "")
    same = old.get("clusterQueue") == view.cluster_queue and old.get("flavor") == flavor
    return not (same and old.get("borrowedGPUs") is not None)


def apply_preemption(
    status: dict[str, Any],
    preemption: Preemption,
    preemptor: str | None,
    generation: int | None,
) -> str:
    """Record Kueue's preemption of the job in `status`: condition Preempted=True with Kueue's
    reason (e.g. InCohortReclamation) and a message naming who (`preemptor`, the GryviaAIJob
    `namespace/name` whose Workload took the quota, and its ClusterQueue) and why, its
    lastTransitionTime that of the Workload's Preempted condition; `preemptions` + 1 once per
    preemption (a new transition time), so the job hooks' Preempted event fires. Returns the
    message."""
    message = preemption_message(preemption, preemptor)
    conditions = status.get("conditions") or []
    old = next((c for c in conditions if c.get("type") == COND_PREEMPTED), None)
    when = preemption.since or (old or {}).get("lastTransitionTime") or ""
    if old is None or old.get("lastTransitionTime") != when or old.get("status") != "True":
        status["preemptions"] = int(status.get("preemptions") or 0) + 1
    cond: dict[str, Any] = {
        "type": COND_PREEMPTED,
        "status": "True",
        "reason": preemption.reason,
        "message": message,
        "lastTransitionTime": when,
    }
    if generation is not None:
        cond["observedGeneration"] = generation
    status["conditions"] = [c for c in conditions if c.get("type") != COND_PREEMPTED] + [cond]
    return message


def apply_workload_view(
    status: dict[str, Any],
    view: WorkloadView,
    now: datetime,
    generation: int | None,
    preemptor: str | None = None,
) -> None:
    """Write Kueue's state into `status` after the Job's summary: while Kueue holds the job,
    phase Queued with Kueue's message (the Job's "suspended" summary says less); condition
    KueueAdmitted True once admitted (message names the ClusterQueue and flavor), else False
    with Kueue's reason. A job already Running keeps its phase when Kueue evicts it only once
    the Job is suspended again (the Job summary then says Scheduling). An eviction by
    preemption also sets condition Preempted (`apply_preemption`, who = `preemptor`)."""
    if view.preemption is not None and view.stage == "Evicted":
        text = apply_preemption(status, view.preemption, preemptor, generation)
        view = replace(view, message=f"{text}; requeued")
    conditions = status.get("conditions") or []
    if view.stage in ("Admitted", "Finished"):
        if view.stage == "Admitted":
            status["conditions"] = set_condition(
                conditions, KUEUE_ADMITTED, "True", view.reason, view.message, now, generation
            )
        return
    phase = status.get("phase")
    if phase in ("Succeeded", "Failed") or (phase == "Running" and view.stage != "Evicted"):
        return
    status["phase"] = view.phase or status.get("phase")
    status["message"] = view.message
    status["conditions"] = set_condition(
        conditions, KUEUE_ADMITTED, "False", view.reason, view.message, now, generation
    )
