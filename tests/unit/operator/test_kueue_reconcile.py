"""reconcile_job with a Kueue queue: one admission authority (Kueue), no Gryvia placement, the
Job created suspended with Kueue's labels, and the Workload's state on the job."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gryvia_operator.reconcile.admission import AdmissionDecision
from gryvia_operator.reconcile.aijob import Observed, reconcile_job
from gryvia_operator.reconcile.children import build_batch_job, build_headless_service
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.kueuejob import kueue_batch_job
from gryvia_operator.reconcile.views import ChildView
from tests.builders import gpu_node, make_job

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
NODES = (gpu_node("h100-a", "H100"),)
HOLD = AdmissionDecision("queue", "QuotaExceeded", "vision has 0 of 8 GPUs free")


def _cond(status: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(c for c in status["conditions"] if c["type"] == kind)


def _job(priority: int = 75):  # type: ignore[no-untyped-def]
    return make_job("train", "tenant-vision").gpus(8).gpu_type("H100").set(priority=priority)


def _existing(*, suspended: bool, workload: dict[str, Any] | None, **job_status: Any) -> Observed:
    job = _job().model()
    batch = kueue_batch_job(build_batch_job(job), "gryvia", 75)
    batch["spec"]["suspend"] = suspended
    batch["status"] = job_status
    children = [build_headless_service(job), batch]
    for child in children:
        child["metadata"]["uid"] = "u-" + child["kind"]
    views = [ChildView.from_object(c) for c in children]
    return Observed(
        workloads=(views[1],),
        service=views[0],
        nodes=NODES,
        kueue_queue="gryvia",
        kueue_workload=workload,
        admission=HOLD,
    )


def test_queued_job_skips_the_gate_and_placement_and_creates_a_suspended_labelled_job() -> None:
    observed = Observed(nodes=(), kueue_queue="gryvia", admission=HOLD)
    result = reconcile_job(_job().model(), observed, ReconcileConfig(), NOW)
    created = {a.kind: a.body for a in result.actions}
    job = created["Job"]
    assert job["spec"]["suspend"] is True
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "gryvia"
    assert job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "gryvia-priority-70"
    status = result.status
    assert _cond(status, "Scheduled")["reason"] == "QueueManaged"
    assert status["gpusAllocated"] == 0 and "nodesAllocated" not in status
    assert status["phase"] == "Queued"
    assert status["message"] == "Waiting for Kueue to create the Workload"
    assert _cond(status, "KueueAdmitted")["status"] == "False"
    assert not result.waiting_for_nodes  # no nodes free: Kueue decides, not placement


def test_pending_workload_reason_is_the_jobs_message() -> None:
    text = "couldn't assign flavors to pod set main: insufficient unused quota"
    workload = {
        "status": {
            "conditions": [
                {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": text}
            ]
        }
    }
    result = reconcile_job(
        _job().model(), _existing(suspended=True, workload=workload), ReconcileConfig(), NOW
    )
    assert result.status["phase"] == "Queued"
    assert result.status["message"] == f"Queued by Kueue: {text}"
    assert _cond(result.status, "KueueAdmitted")["reason"] == "Pending"
    assert result.actions == ()


def test_admitted_job_is_not_suspended_again_and_runs() -> None:
    workload = {
        "status": {
            "conditions": [{"type": "Admitted", "status": "True", "reason": "Admitted"}],
            "admission": {
                "clusterQueue": "gryvia-vision",
                "podSetAssignments": [{"flavors": {"nvidia.com/gpu": "gryvia-h100"}}],
            },
        }
    }
    observed = _existing(suspended=False, workload=workload, ready=1, active=1)
    result = reconcile_job(_job().model().model_copy(), observed, ReconcileConfig(), NOW)
    assert result.actions == ()  # Gryvia does not patch suspend back: Kueue owns it
    assert result.status["phase"] == "Running"
    admitted = _cond(result.status, "KueueAdmitted")
    assert admitted["status"] == "True"
    assert "gryvia-h100" in admitted["message"]


def test_without_a_queue_the_gate_still_holds_the_job() -> None:
    observed = Observed(nodes=NODES, admission=HOLD)
    result = reconcile_job(_job().model(), observed, ReconcileConfig(), NOW)
    assert result.actions == ()
    assert result.status["phase"] == "Queued"
    assert result.status["message"] == HOLD.message


def test_a_statefulset_job_is_never_queue_managed() -> None:
    job = _job().workload_kind("statefulset").model()
    observed = Observed(nodes=NODES, kueue_queue="gryvia", admission=HOLD)
    result = reconcile_job(job, observed, ReconcileConfig(), NOW)
    assert result.status["phase"] == "Queued"
    assert result.status["message"] == HOLD.message


def test_a_job_kueue_holds_waits_for_kueue_not_for_gryvias_quota() -> None:
    from gryvia_operator.reconcile.pending import WaitContext, wait_status

    text = "Queued by Kueue: insufficient quota for nvidia.com/gpu in flavor gryvia-a100-80g"
    status = {
        "phase": "Queued",
        "message": text,
        "conditions": [
            {"type": "KueueAdmitted", "status": "False", "reason": "Pending", "message": text}
        ],
    }
    out = wait_status(_job().model(), status, NODES, (), WaitContext(), NOW)
    assert out["pending"]["kind"] == "Kueue"
    assert out["pending"]["message"] == text
