"""A GryviaAIJob's view of its Kueue Workload (behaviour.md section 5 "Kueue", issue 19)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gryvia_operator.reconcile.kueuejob import (
    apply_workload_view,
    kueue_job_status,
    needs_cluster_queue,
)
from gryvia_operator.reconcile.kueuestatus import (
    Preemption,
    preemption_message,
    preemption_of,
    workload_view,
)


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


KUEUE_PREEMPTION = (
    "Preempted to accommodate a workload (UID: w-9, JobUID: job-9) due to reclamation within "
    "the cohort; preemptor path: /gryvia/gryvia-nlp; preemptee path: /gryvia/gryvia-vision"
)


def _preempted_workload() -> dict[str, Any]:
    workload = _workload(
        ("Evicted", "True", "Preempted", KUEUE_PREEMPTION),
        ("Preempted", "True", "InCohortReclamation", KUEUE_PREEMPTION),
        ("QuotaReserved", "False", "Pending", "waiting"),
    )
    workload["status"]["conditions"][1]["lastTransitionTime"] = "2026-12-02T08:00:00Z"
    return workload


def test_preemption_parses_who_and_why_from_kueues_message() -> None:
    found = preemption_of(_preempted_workload())
    assert found == Preemption(
        "InCohortReclamation",
        "reclamation within the cohort",
        "job-9",
        "gryvia-nlp",
        "2026-12-02T08:00:00Z",
    )
    view = workload_view(_preempted_workload())
    assert view.preemption == found
    assert view.message == "Preempted by Kueue: reclamation within the cohort; requeued"


def test_preemption_message_names_the_job_and_its_cluster_queue() -> None:
    found = preemption_of(_preempted_workload())
    assert found is not None
    assert preemption_message(found, "tenant-nlp/claim") == (
        "Preempted by Kueue for tenant-nlp/claim (ClusterQueue gryvia-nlp): "
        "reclamation within the cohort"
    )
    assert preemption_message(found, None) == (
        "Preempted by Kueue for ClusterQueue gryvia-nlp: reclamation within the cohort"
    )


def test_preemption_of_an_unparsable_message_keeps_kueues_text() -> None:
    workload = _workload(("Preempted", "True", "InClusterQueue", "something else"))
    found = preemption_of(workload)
    assert found is not None
    assert (found.why, found.job_uid, found.cluster_queue) == ("something else", "", "")
    assert preemption_of(_workload(("Preempted", "False", "", ""))) is None
    assert preemption_of(None) is None


def test_a_preemption_is_counted_once_and_named_in_the_status() -> None:
    view = workload_view(_preempted_workload())
    status: dict[str, Any] = {"phase": "Running", "conditions": []}
    now = dt.datetime(2026, 12, 2, 8, 0, 5, tzinfo=dt.UTC)
    apply_workload_view(status, view, now, 1, "tenant-nlp/claim")
    apply_workload_view(status, view, now, 1, "tenant-nlp/claim")  # the next pass
    assert status["phase"] == "Queued"
    assert status["preemptions"] == 1
    assert status["message"] == (
        "Preempted by Kueue for tenant-nlp/claim (ClusterQueue gryvia-nlp): reclamation "
        "within the cohort; requeued"
    )
    cond = next(c for c in status["conditions"] if c["type"] == "Preempted")
    assert (cond["status"], cond["reason"]) == ("True", "InCohortReclamation")
    assert cond["lastTransitionTime"] == "2026-12-02T08:00:00Z"
    later = _preempted_workload()
    later["status"]["conditions"][1]["lastTransitionTime"] = "2026-12-02T09:00:00Z"
    apply_workload_view(status, workload_view(later), now, 1, None)
    assert status["preemptions"] == 2


CLUSTER_QUEUE = {
    "kind": "ClusterQueue",
    "metadata": {"name": "gryvia-vision"},
    "spec": {
        "resourceGroups": [
            {
                "flavors": [
                    {
                        "name": "gryvia-h100",
                        "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "16"}],
                    }
                ]
            }
        ]
    },
}


def _admitted(gpus: int, queue: str = "gryvia-vision", *finished: str) -> dict[str, Any]:
    conditions = [
        ("QuotaReserved", "True", "QuotaReserved", ""),
        *[("Finished", "True", f, "") for f in finished],
    ]
    admission = {
        "clusterQueue": queue,
        "podSetAssignments": [
            {
                "name": "main",
                "flavors": {"nvidia.com/gpu": "gryvia-h100"},
                "resourceUsage": {"nvidia.com/gpu": str(gpus)},
            }
        ],
    }
    return _workload(*conditions, admission=admission)


def test_kueue_status_names_queue_flavor_and_borrowed_gpus_once_per_admission() -> None:
    admitted = workload_view(_workload(("Admitted", "True", "Admitted", ""), admission=ADMISSION))
    assert needs_cluster_queue(None, admitted)
    # 24 GPUs held on a nominal 16; another queue's and a finished workload do not count
    held = [
        _admitted(16),
        _admitted(8),
        _admitted(8, "gryvia-nlp"),
        _admitted(8, "gryvia-vision", "Succeeded"),
    ]
    first = kueue_job_status(None, "gryvia", admitted, CLUSTER_QUEUE, 24, held)
    assert first == {
        "queueName": "gryvia",
        "clusterQueue": "gryvia-vision",
        "flavor": "gryvia-h100",
        "borrowedGPUs": 8,
    }
    assert not needs_cluster_queue(first, admitted)
    # kept while the admission stays (the queue's borrowing changes with other jobs)
    assert kueue_job_status(first, "gryvia", admitted, CLUSTER_QUEUE, 24, []) == first
    # at most the job's own GPUs; none while within the nominal quota
    many = [_admitted(32)]
    assert kueue_job_status(None, "gryvia", admitted, CLUSTER_QUEUE, 8, many)["borrowedGPUs"] == 8
    within = kueue_job_status(None, "gryvia", admitted, CLUSTER_QUEUE, 8, [_admitted(8)])
    assert within["borrowedGPUs"] == 0
    pending = workload_view(_workload(("QuotaReserved", "False", "Pending", "waiting")))
    assert kueue_job_status(first, "gryvia", pending, None, 24) == {"queueName": "gryvia"}
    assert not needs_cluster_queue(None, pending)
