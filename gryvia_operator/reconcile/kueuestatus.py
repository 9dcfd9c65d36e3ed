"""What a GryviaAIJob shows of its Kueue Workload: Queued with Kueue's reason, Admitted with the
flavor, Evicted or Preempted with Kueue's message. Pure; rules from behaviour.md section 5
("Kueue") and issue 19 (status that explains Kueue)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

KueueStage = Literal["NoWorkload", "Pending", "QuotaReserved", "Admitted", "Evicted", "Finished"]


@dataclass(frozen=True)
class WorkloadView:
    """One Workload as the job shows it.

    `stage`: where Kueue is; `phase`: the GryviaAIJob phase it implies while Kueue holds the
    job (`Queued`), None once admitted (the Job's own state decides); `reason` and `message`
    for the job's KueueAdmitted condition; `flavors`: resource -> flavor of the admission
    (e.g. {"nvidia.com/gpu": "gryvia-h100"}); `cluster_queue` of the admission.
    """

    stage: KueueStage
    phase: str | None
    reason: str
    message: str
    flavors: Mapping[str, str]
    cluster_queue: str = ""


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
        return WorkloadView("Evicted", "Queued", reason, f"{verb} by Kueue: {text}; requeued", {})
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
