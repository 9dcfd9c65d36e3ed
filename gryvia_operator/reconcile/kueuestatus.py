"""What a GryviaAIJob shows of its Kueue Workload: Queued with Kueue's reason, Admitted with the
flavor, Evicted or Preempted with Kueue's message. Pure; rules from behaviour.md section 5
("Kueue") and issue 19 (status that explains Kueue)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

KueueStage = Literal["NoWorkload", "Pending", "QuotaReserved", "Admitted", "Evicted", "Finished"]

_PREEMPTION = re.compile(
    r"\(UID: (?P<uid>[^,]*), JobUID: (?P<job_uid>[^)]*)\) due to (?P<why>[^;]+)"
    r"(?:; preemptor path: (?P<path>[^;]*))?"
)
"""Kueue v0.17's preemption message (pkg/scheduler/preemption, `preemptionMessage`):
`Preempted to accommodate a workload (UID: <w>, JobUID: <j>) due to <why>; preemptor path:
/<cohort>/<ClusterQueue>; preemptee path: ...`."""


@dataclass(frozen=True)
class Preemption:
    """Who preempted a Workload and why, from its `Preempted` condition.

    `reason`: Kueue's reason (InClusterQueue, InCohortReclamation,
    InCohortReclaimWhileBorrowing, InCohortFairSharing); `why`: Kueue's words for it
    ("reclamation within the cohort"); `job_uid`: UID of the preemptor's batch Job ("" when
    Kueue's message does not say); `cluster_queue`: the preemptor's ClusterQueue (last element
    of the preemptor path, "" when unknown); `since`: the condition's lastTransitionTime (RFC
    3339, one value per preemption)."""

    reason: str
    why: str
    job_uid: str
    cluster_queue: str
    since: str


def preemption_of(workload: Mapping[str, Any] | None) -> Preemption | None:
    """The Workload's last preemption while its `Preempted` condition is True, else None."""
    if workload is None:
        return None
    cond = _condition((workload.get("status") or {}).get("conditions") or [], "Preempted")
    if not _true(cond):
        return None
    assert cond is not None
    message = str(cond.get("message") or "")
    match = _PREEMPTION.search(message)
    job_uid = why = path = ""
    if match:
        job_uid = "" if match["job_uid"] == "UNKNOWN" else match["job_uid"]
        why = match["why"].strip()
        path = (match["path"] or "").strip()
    queue = "" if path in ("", "UNKNOWN") else path.rstrip("/").rsplit("/", 1)[-1]
    return Preemption(
        str(cond.get("reason") or "Preempted"),
        why or message or "preempted",
        job_uid,
        queue,
        str(cond.get("lastTransitionTime") or ""),
    )


def preemption_message(preemption: Preemption, preemptor: str | None) -> str:
    """`Preempted by Kueue for <namespace/job> (ClusterQueue <cq>): <why>` (who and why);
    `preemptor` is the GryviaAIJob owning the preemptor's batch Job, None when unknown (then
    the ClusterQueue alone, or nothing, names who)."""
    who = []
    if preemptor:
        who.append(preemptor)
    if preemption.cluster_queue:
        queue = f"ClusterQueue {preemption.cluster_queue}"
        who.append(f"({queue})" if preemptor else queue)
    head = "Preempted by Kueue" + (f" for {' '.join(who)}" if who else "")
    return f"{head}: {preemption.why}"


@dataclass(frozen=True)
class WorkloadView:
    """One Workload as the job shows it.

    `stage`: where Kueue is; `phase`: the GryviaAIJob phase it implies while Kueue holds the
    job (`Queued`), None once admitted (the Job's own state decides); `reason` and `message`
    for the job's KueueAdmitted condition; `flavors`: resource -> flavor of the admission
    (e.g. {"nvidia.com/gpu": "gryvia-h100"}); `cluster_queue` of the admission; `preemption`
    when Kueue evicted it to make room for another Workload.
    """

    stage: KueueStage
    phase: str | None
    reason: str
    message: str
    flavors: Mapping[str, str]
    cluster_queue: str = ""
    preemption: Preemption | None = None
    """Who preempted the Workload and why, when its eviction was a preemption."""


def _condition(conditions: Sequence[Mapping[str, Any]], kind: str) -> Mapping[str, Any] | None:
    for cond in conditions:
        if cond.get("type") == kind:
            return cond
    return None


def _true(cond: Mapping[str, Any] | None) -> bool:
    return bool(cond) and cond is not None and cond.get("status") == "True"


def admitted_flavors(workload: Mapping[str, Any]) -> dict[str, str]:
    """resource -> flavor over the admission's pod sets ({} when not admitted)."""
    admission = (workload.get("status") or {}).get("admission") or {}
    out: dict[str, str] = {}
    for pod_set in admission.get("podSetAssignments") or []:
        out.update(pod_set.get("flavors") or {})
    return out


def workload_view(workload: Mapping[str, Any] | None) -> WorkloadView:
    """The job's view of `workload` (a kueue.x-k8s.io Workload object, or None before Kueue
    created it).

    Order: finished; evicted (preempted or other reasons) while not re-admitted -> Queued with
    Kueue's message ("requeued"); admitted -> no phase (the Job decides), message names the
    ClusterQueue and flavors; quota reserved -> Queued "waiting for admission checks"; else
    Queued with the QuotaReserved condition's message (Kueue's reason with the numbers, e.g.
    "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor
    gryvia-a100-80g, request > maximum capacity (16 > 8)").
    """
    if workload is None:
        return WorkloadView(
            "NoWorkload",
            "Queued",
            "WorkloadNotCreated",
            "Waiting for Kueue to create the Workload",
            {},
        )
    status = workload.get("status") or {}
    conditions = status.get("conditions") or []
    flavors = admitted_flavors(workload)
    queue = (status.get("admission") or {}).get("clusterQueue", "")
    finished = _condition(conditions, "Finished")
    if _true(finished):
        assert finished is not None
        return WorkloadView(
            "Finished", None, "Finished", str(finished.get("message", "")), flavors, queue
        )
    admitted = _condition(conditions, "Admitted")
    evicted = _condition(conditions, "Evicted")
    if _true(evicted) and not _true(admitted):
        assert evicted is not None
        reason = str(evicted.get("reason") or "Evicted")
        verb = "Preempted" if reason == "Preempted" else "Evicted"
        text = str(evicted.get("message") or reason)
        preemption = preemption_of(workload) if reason == "Preempted" else None
        if preemption is not None:
            text = preemption.why
        return WorkloadView(
            "Evicted", "Queued", reason, f"{verb} by Kueue: {text}; requeued", {}, "", preemption
        )
    if _true(admitted):
        shown = ", ".join(f"{flavor} ({res})" for res, flavor in sorted(flavors.items()))
        where = f"ClusterQueue {queue}" if queue else "Kueue"
        text = f"Admitted by {where}" + (f" with flavor {shown}" if shown else "")
        return WorkloadView("Admitted", None, "Admitted", text, flavors, queue)
    reserved = _condition(conditions, "QuotaReserved")
    if _true(reserved):
        return WorkloadView(
            "QuotaReserved",
            "Queued",
            "QuotaReserved",
            "Quota reserved, waiting for admission checks",
            flavors,
            queue,
        )
    reason = str((reserved or {}).get("reason") or "Pending")
    text = str((reserved or {}).get("message") or "waiting for Kueue to consider the Workload")
    return WorkloadView("Pending", "Queued", reason, f"Queued by Kueue: {text}", {})
