"""A GryviaAIJob's view of its Kueue Workload (behaviour.md section 5 "Kueue", issue 19)."""

from __future__ import annotations

from typing import Any

from gryvia_operator.reconcile.kueuestatus import workload_view


def _workload(*conditions: tuple[str, str, str, str], admission: Any = None) -> dict[str, Any]:
    status: dict[str, Any] = {
        "conditions": [
            {"type": t, "status": s, "reason": r, "message": m} for t, s, r, m in conditions
        ]
    }
    if admission:
        status["admission"] = admission
    return {"kind": "Workload", "status": status}


ADMISSION = {
    "clusterQueue": "gryvia-vision",
    "podSetAssignments": [{"name": "main", "flavors": {"nvidia.com/gpu": "gryvia-h100"}}],
}


def test_no_workload_yet() -> None:
    view = workload_view(None)
    assert (view.stage, view.phase) == ("NoWorkload", "Queued")
    assert "Waiting for Kueue to create the Workload" in view.message


def test_pending_shows_kueues_reason_with_its_numbers() -> None:
    text = (
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in "
        "flavor gryvia-a100-80g, request > maximum capacity (16 > 8)"
    )
    view = workload_view(_workload(("QuotaReserved", "False", "Pending", text)))
    assert (view.stage, view.phase, view.reason) == ("Pending", "Queued", "Pending")
    assert view.message == f"Queued by Kueue: {text}"


def test_admitted_names_queue_and_flavor_and_leaves_the_phase_to_the_job() -> None:
    view = workload_view(
        _workload(
            ("QuotaReserved", "True", "QuotaReserved", ""),
            ("Admitted", "True", "Admitted", ""),
            admission=ADMISSION,
        )
    )
    assert view.stage == "Admitted" and view.phase is None
    assert view.flavors == {"nvidia.com/gpu": "gryvia-h100"}
    assert (
        view.message
        == "Admitted by ClusterQueue gryvia-vision with flavor gryvia-h100 (nvidia.com/gpu)"
    )


def test_quota_reserved_waits_for_admission_checks() -> None:
    view = workload_view(_workload(("QuotaReserved", "True", "QuotaReserved", "")))
    assert (view.stage, view.phase) == ("QuotaReserved", "Queued")


def test_preempted_says_who_and_why_and_is_requeued() -> None:
    text = (
        "Preempted to accommodate a workload (UID: u1, JobUID: j1) due to reclamation "
        "within the cohort"
    )
    view = workload_view(
        _workload(
            ("Evicted", "True", "Preempted", text),
            ("Admitted", "False", "NoReservation", ""),
            ("QuotaReserved", "False", "Pending", "waiting"),
        )
    )
    assert (view.stage, view.phase, view.reason) == ("Evicted", "Queued", "Preempted")
    assert view.message == f"Preempted by Kueue: {text}; requeued"


def test_evicted_for_pods_not_ready() -> None:
    view = workload_view(
        _workload(("Evicted", "True", "PodsReadyTimeout", "Exceeded the PodsReady timeout"))
    )
    assert view.message.startswith("Evicted by Kueue: Exceeded the PodsReady timeout")


def test_finished_has_no_phase() -> None:
    view = workload_view(_workload(("Finished", "True", "Succeeded", "Job finished successfully")))
    assert (view.stage, view.phase) == ("Finished", None)
