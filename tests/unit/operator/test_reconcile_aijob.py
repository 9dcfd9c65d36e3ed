"""reconcile_job: the gate order, placement, children, drift, blockers and status."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gryvia_operator.reconcile.admission import AdmissionDecision
from gryvia_operator.reconcile.aijob import Blocker, Observed, reconcile_invalid, reconcile_job
from gryvia_operator.reconcile.children import build_batch_job, build_headless_service
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.views import ChildView
from tests.builders import gpu_node, make_child, make_job

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
CONFIG = ReconcileConfig()
NODES = (gpu_node("h100-a", "H100"), gpu_node("l40-a", "L40", 4))


def _run(builder, observed: Observed | None = None):  # type: ignore[no-untyped-def]
    return reconcile_job(builder.model(), observed or Observed(nodes=NODES), CONFIG, NOW)


def _verbs(result) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(a.verb, a.kind) for a in result.actions]


def _cond(status: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(c for c in status["conditions"] if c["type"] == kind)


def _existing(job_builder) -> Observed:  # type: ignore[no-untyped-def]
    job = job_builder.model()
    children = [build_headless_service(job), build_batch_job(job)]
    for child in children:
        child["metadata"]["uid"] = "u-" + child["kind"]
    views = [ChildView.from_object(c) for c in children]
    return Observed(workloads=(views[1],), service=views[0], nodes=NODES)


def test_new_gpu_job_is_placed_and_children_created() -> None:
    result = _run(make_job("t").gpus(8).gpu_type("H100"))
    assert _verbs(result) == [("create", "Service"), ("create", "Job")]
    status = result.status
    assert status["phase"] == "Scheduling"
    assert status["nodesAllocated"] == ["h100-a"]
    assert status["gpusAllocated"] == 8
    assert _cond(status, "Scheduled")["reason"] == "Scheduled"
    assert _cond(status, "Ready")["reason"] == "PodsNotReady"
    assert result.requeue_after is None
    assert not result.waiting_for_nodes


def test_cpu_only_job_skips_placement() -> None:
    result = _run(make_job().gpus(0))
    assert _cond(result.status, "Scheduled")["reason"] == "CPUOnly"
    assert result.status["gpusAllocated"] == 0
    assert "nodesAllocated" not in result.status


def test_no_fit_stays_pending_and_retries() -> None:
    result = _run(make_job().gpus(8).gpu_type("V100"))
    assert result.actions == ()
    assert result.status["phase"] == "Pending"
    assert result.status["message"].startswith('no nodes meet the job requirements (gpuType="V100"')
    scheduled = _cond(result.status, "Scheduled")
    assert (scheduled["status"], scheduled["reason"]) == ("False", "SchedulingFailed")
    assert result.requeue_after == 30.0
    assert result.waiting_for_nodes


def test_storage_adds_a_pvc_first() -> None:
    result = _run(make_job().gpus(0).storage("rwx"))
    assert _verbs(result)[0] == ("create", "PersistentVolumeClaim")


def test_existing_children_are_not_created_again() -> None:
    job = make_job("t").gpus(8).gpu_type("H100").phase("Scheduling")
    result = _run(job, _existing(job))
    assert result.actions == ()
    assert result.status["phase"] == "Scheduling"


def test_existing_workload_skips_placement_even_if_nodes_are_full() -> None:
    job = make_job("t").gpus(8).gpu_type("V100")
    result = _run(job, _existing(job))
    assert result.actions == ()
    assert result.status["phase"] == "Scheduling"


def test_drift_of_suspend_is_patched() -> None:
    job = make_job("t").gpus(0).phase("Scheduling")
    observed = _existing(job.suspend(True))
    result = _run(make_job("t").gpus(0).phase("Scheduling"), observed)
    assert [(a.verb, a.kind, dict(a.body)) for a in result.actions] == [
        ("patch", "Job", {"spec": {"suspend": False}})
    ]


def test_workload_status_flows_into_the_job() -> None:
    job = make_job("t").gpus(0).phase("Scheduling")
    base = _existing(job)
    assert base.workloads
    running = make_child("Job", "t", "t").status(ready=1, startTime="2025-03-01T11:00:00Z").view()
    result = _run(job, Observed(workloads=(running,), service=base.service))
    assert result.status["phase"] == "Running"
    assert result.status["startTime"] == "2025-03-01T11:00:00Z"
    assert result.status["replicasReady"] == 1
    failed = (
        make_child("Job", "t", "t")
        .status(failed=1)
        .condition("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
        .view()
    )
    result = _run(job, Observed(workloads=(failed,), service=base.service))
    assert result.status["phase"] == "Failed"
    assert "BackoffLimitExceeded" in result.status["message"]
    assert result.status["retries"] == 1
    assert result.status["completionTime"] == "2025-01-01T01:00:00Z"
    assert result.status["startTime"] == "2025-03-01T12:00:00Z"


def test_running_never_goes_back_to_scheduling() -> None:
    job = make_job("t").gpus(0).phase("Running")
    result = _run(job, _existing(job))
    assert result.status["phase"] == "Running"


def test_terminal_phases_are_sticky() -> None:
    for phase in ("Succeeded", "Failed"):
        job = make_job("t").gpus(0).phase(phase).status(completionTime="2025-01-01T00:00:00Z")
        result = _run(job, _existing(job))
        assert result.actions == ()
        assert result.status["phase"] == phase
        assert result.status["completionTime"] == "2025-01-01T00:00:00Z"
    job = make_job("t").gpus(0).phase("Succeeded")
    assert _run(job).status["completionTime"] == "2025-03-01T12:00:00Z"


def test_cancel_annotation_deletes_the_workload_and_keeps_the_rest() -> None:
    job = make_job("t").gpus(0).phase("Running").annotate("gryvia.io/cancel", "true")
    result = _run(job, _existing(job))
    assert _verbs(result) == [("delete", "Job")]
    assert result.status["phase"] == "Cancelled"
    assert result.status["message"] == "Cancelled by request (annotation gryvia.io/cancel)"
    assert result.status["completionTime"] == "2025-03-01T12:00:00Z"
    assert _cond(result.status, "Ready")["reason"] == "Cancelled"


def test_cancel_is_a_no_op_on_terminal_jobs() -> None:
    job = make_job("t").gpus(0).phase("Succeeded").annotate("gryvia.io/cancel", "true")
    assert _run(job, _existing(job)).status["phase"] == "Succeeded"


def test_cancelled_by_status_deletes_the_workload_again() -> None:
    job = make_job("t").gpus(0).phase("Cancelled")
    result = _run(job, _existing(job))
    assert _verbs(result) == [("delete", "Job")]
    assert "completionTime" in result.status
    assert _run(make_job("t").gpus(0).phase("Cancelled")).actions == ()


def test_rejected_deletes_every_child() -> None:
    job = make_job("t").gpus(0).phase("Rejected")
    assert sorted(_verbs(_run(job, _existing(job)))) == [("delete", "Job"), ("delete", "Service")]


def test_quota_gate_holds_rejects_and_releases() -> None:
    held = AdmissionDecision(
        "queue", "QuotaExceeded", "waiting for quota: team ml uses 8 of 8 GPUs"
    )
    result = _run(make_job("t").gpus(8), Observed(nodes=NODES, admission=held))
    assert result.actions == ()
    assert result.status["phase"] == "Queued"
    assert result.status["message"] == "waiting for quota: team ml uses 8 of 8 GPUs"
    assert _cond(result.status, "Admitted")["status"] == "False"

    released = AdmissionDecision("allow", "QuotaReserved", "admitted within the quota of team ml")
    queued = make_job("t").gpus(0).phase("Queued")
    again = _run(queued, Observed(nodes=NODES, admission=released))
    assert _verbs(again) == [("create", "Service"), ("create", "Job")]
    assert _cond(again.status, "Admitted")["reason"] == "QuotaReserved"

    no = AdmissionDecision("reject", "GpuTypeNotAllowed", 'GPU type "L40" is not allowed')
    rejected = _run(make_job("t").gpus(1), Observed(nodes=NODES, admission=no))
    assert rejected.status["phase"] == "Rejected" and rejected.actions == ()
    assert _cond(rejected.status, "Rejected")["reason"] == "GpuTypeNotAllowed"


def test_bad_timeout_fails_the_job() -> None:
    result = _run(make_job().gpus(0).timeout("0s"))
    assert result.status["phase"] == "Failed"
    assert result.status["message"].startswith("spec.timeout:")
    assert _cond(result.status, "Ready")["reason"] == "InvalidSpec"


def test_deleting_job_does_nothing() -> None:
    job = make_job().gpus(0)
    model = job.model()
    model.metadata.deletion_timestamp = NOW
    assert reconcile_job(model, Observed(), CONFIG, NOW).actions == ()


def test_blocked_children_are_reported_not_created() -> None:
    job = make_job("t").gpus(0)
    blocked = Observed(blocked=(Blocker("Job", "t", previous_owner=False),))
    result = _run(job, blocked)
    assert _verbs(result) == [("create", "Service")]
    assert result.status["message"] == (
        "Job ml/t already exists and is not owned by this GryviaAIJob"
    )
    assert _cond(result.status, "Ready")["reason"] == "ChildConflict"
    assert result.requeue_after == CONFIG.conflict_retry_seconds
    previous = _run(job, Observed(blocked=(Blocker("Service", "t-headless", True),)))
    assert "deleted GryviaAIJob of the same name" in previous.status["message"]


def test_deleting_child_waits() -> None:
    job = make_job("t").gpus(0).phase("Scheduling")
    gone = make_child("Job", "t", "t").deleting().view()
    result = _run(job, Observed(workloads=(gone,)))
    assert ("create", "Job") not in _verbs(result)
    assert result.requeue_after == CONFIG.conflict_retry_seconds


def test_existing_statefulset_wins_over_spec_kind() -> None:
    job = make_job("t").gpus(0).phase("Running")
    sts = make_child("StatefulSet", "t-training", "t").status(readyReplicas=1).view()
    result = _run(job, Observed(workloads=(sts,)))
    assert ("create", "Job") not in _verbs(result)
    assert result.status["phase"] == "Running"


def test_other_status_keys_and_conditions_survive() -> None:
    job = make_job("t").gpus(0).condition("BudgetWarning", "True")
    result = _run(job)
    types = [c["type"] for c in result.status["conditions"]]
    assert types[0] == "BudgetWarning"


def test_same_input_same_output() -> None:
    job = make_job("t").gpus(8).gpu_type("H100")
    assert _run(job) == _run(job)


def test_invalid_spec_status() -> None:
    status = reconcile_invalid({}, ["spec.type is required"], NOW)
    assert status["phase"] == "Failed"
    assert status["message"] == "invalid spec: spec.type is required"
    assert reconcile_invalid({"phase": "Succeeded"}, ["x"], NOW) == {"phase": "Succeeded"}


def test_refused_child_fails_the_job() -> None:
    refused = Observed(refused=("Job ml/t was refused by the API server: bad volume",))
    result = _run(make_job("t").gpus(0), refused)
    assert result.actions == ()
    assert result.status["phase"] == "Failed"
    assert result.status["message"] == "Job ml/t was refused by the API server: bad volume"
    assert _cond(result.status, "Ready")["reason"] == "InvalidSpec"
