"""Status derivation from workloads, conditions, status patches and phase events."""

from __future__ import annotations

from datetime import UTC, datetime

from gryvia_operator.api import JobPhase
from gryvia_operator.reconcile.status import (
    phase_event,
    set_condition,
    status_patch,
    summarize_batch_job,
    summarize_statefulset,
    timestamp,
)
from tests.builders import ChildBuilder, make_child, make_pod

NOW = datetime(2025, 1, 2, 3, 4, 5, 678, tzinfo=UTC)


def _job() -> ChildBuilder:
    return make_child("Job", "train")


def test_timestamp_is_whole_seconds_utc() -> None:
    assert timestamp(NOW) == "2025-01-02T03:04:05Z"


def test_new_job_is_scheduling_or_suspended() -> None:
    assert summarize_batch_job(None, 2).phase == JobPhase.SCHEDULING
    suspended = summarize_batch_job(None, 2, suspend=True)
    assert suspended.message == "Job is suspended (waiting to be admitted)"
    assert suspended.ready.reason == "Suspended"


def test_complete_job_succeeds_with_completion_time() -> None:
    view = (
        _job()
        .status(succeeded=2, completionTime="2025-01-01T02:00:00Z")
        .condition("Complete")
        .view()
    )
    summary = summarize_batch_job(view, 2)
    assert summary.phase == JobPhase.SUCCEEDED
    assert summary.completion_time == "2025-01-01T02:00:00Z"
    assert summary.ready.reason == "Completed"


def test_failed_job_message_has_reason_and_counts() -> None:
    view = (
        _job()
        .status(failed=1)
        .condition("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
        .view()
    )
    summary = summarize_batch_job(view, 1)
    assert summary.phase == JobPhase.FAILED
    assert summary.message == (
        "BackoffLimitExceeded: Job has reached the specified backoff limit (1/1 pod(s) failed)"
    )
    assert summary.retries == 1
    assert summary.completion_time == "2025-01-01T01:00:00Z"


def test_suspended_job() -> None:
    view = _job().spec(suspend=True).view()
    assert summarize_batch_job(view, 1).ready.reason == "Suspended"
    by_condition = _job().condition("Suspended").view()
    assert summarize_batch_job(by_condition, 1).phase == JobPhase.SCHEDULING


def test_running_by_ready_pods_or_succeeded_indexes() -> None:
    ready = summarize_batch_job(_job().status(ready=1, startTime="2025-01-01T00:00:01Z").view(), 2)
    assert ready.phase == JobPhase.RUNNING
    assert ready.ready.reason == "PartiallyReady"
    assert ready.ready.message == "1/2 replicas are ready"
    assert ready.start_time == "2025-01-01T00:00:01Z"
    assert ready.replicas_ready == 1
    all_ready = summarize_batch_job(_job().status(ready=2).view(), 2)
    assert (all_ready.ready.status, all_ready.ready.reason) == ("True", "Ready")
    one_done = summarize_batch_job(_job().status(succeeded=1).view(), 2)
    assert one_done.phase == JobPhase.RUNNING
    assert one_done.message == "0/2 replicas ready, 1 succeeded"
    idle = summarize_batch_job(_job().status(active=2).view(), 2)
    assert (idle.phase, idle.ready.reason) == (JobPhase.SCHEDULING, "PodsNotReady")


def test_statefulset_summary() -> None:
    sts = make_child("StatefulSet", "s-training", "s")
    assert summarize_statefulset(sts.view(), [], 2).phase == JobPhase.SCHEDULING
    running = summarize_statefulset(sts.status(readyReplicas=2).view(), [], 2)
    assert (running.phase, running.ready.status) == (JobPhase.RUNNING, "True")
    done = [make_pod(f"p{i}").phase("Succeeded").view() for i in range(2)]
    assert summarize_statefulset(sts.view(), done, 2).phase == JobPhase.SUCCEEDED
    mixed = [make_pod("a").phase("Succeeded").view(), make_pod("b").phase("Failed").view()]
    failed = summarize_statefulset(sts.view(), mixed, 2)
    assert (failed.phase, failed.message) == (JobPhase.FAILED, "1/2 pod(s) failed")


def test_set_condition_keeps_transition_time_when_status_unchanged() -> None:
    first = set_condition([], "Ready", "False", "PodsNotReady", "0/1", NOW, 1)
    assert first[0]["lastTransitionTime"] == "2025-01-02T03:04:05Z"
    assert first[0]["observedGeneration"] == 1
    later = datetime(2025, 1, 3, tzinfo=UTC)
    same = set_condition(first, "Ready", "False", "Suspended", "x", later)
    assert same[0]["lastTransitionTime"] == "2025-01-02T03:04:05Z"
    assert same[0]["reason"] == "Suspended"
    flipped = set_condition(first, "Ready", "True", "Ready", "ok", later)
    assert flipped[0]["lastTransitionTime"] == "2025-01-03T00:00:00Z"


def test_set_condition_keeps_other_conditions() -> None:
    others = [{"type": "KueueAdmitted", "status": "True"}]
    out = set_condition(others, "Scheduled", "True", "Scheduled", "", NOW)
    assert [c["type"] for c in out] == ["KueueAdmitted", "Scheduled"]


def test_status_patch_touches_only_owned_changed_keys() -> None:
    current = {"phase": "Pending", "message": "m", "retries": 0, "dataset": {"name": "x"}}
    desired = {"phase": "Running", "message": "m", "retries": 0}
    assert status_patch(current, desired) == {"phase": "Running"}
    assert status_patch({"nodesAllocated": ["a"]}, {}) == {"nodesAllocated": None}
    assert status_patch(desired, desired) == {}


def test_phase_event() -> None:
    assert phase_event("Running", {"phase": "Running"}) is None
    event = phase_event(None, {"phase": "Scheduling", "message": "0/1"})
    assert event is not None
    assert (event.type, event.reason, event.message) == (
        "Normal",
        "Scheduling",
        "new -> Scheduling: 0/1",
    )
    failed = phase_event("Running", {"phase": "Failed"})
    assert failed is not None and failed.type == "Warning"
    pending = phase_event(
        "",
        {
            "phase": "Pending",
            "conditions": [{"type": "Scheduled", "status": "False"}],
        },
    )
    assert pending is not None and pending.type == "Warning"
