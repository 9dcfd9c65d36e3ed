"""Pure priority rules: the class of a job's pods, the owned PriorityClass, victim choice,
the Preempted status and the requeue that keeps the retry count."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gryvia_operator.api import GryviaPriority
from gryvia_operator.api.priority import PRIORITY_TABLE, band_for, requeue_pending
from gryvia_operator.reconcile import priority as rules
from gryvia_operator.reconcile.aijob import Observed, reconcile_job
from gryvia_operator.reconcile.children import build_batch_job
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.podtemplate import build_pod_template
from gryvia_operator.reconcile.views import ChildView
from tests.builders import make_job

NOW = datetime(2026, 12, 1, 22, 0, tzinfo=UTC)
ON = ReconcileConfig(priorities=True)


@pytest.mark.parametrize(
    ("priority", "name"),
    [(0, None), (1, "gryvia-low"), (29, "gryvia-low"), (30, "gryvia-normal"),
     (69, "gryvia-normal"), (70, "gryvia-high"), (100, "gryvia-high")],
)  # fmt: skip
def test_table_maps_every_priority(priority: int, name: str | None) -> None:
    band = band_for(priority)
    assert (band.name if band else None) == name
    job = make_job().set(priority=priority).model()
    assert rules.job_priority_class(job, True) == name
    assert rules.job_priority_class(job, False) is None  # disabled: nothing changes


def test_table_covers_one_to_hundred_without_gaps() -> None:
    covered = [p for b in PRIORITY_TABLE for p in range(b.low, b.high + 1)]
    assert covered == list(range(1, 101))
    assert [b.value for b in PRIORITY_TABLE] == sorted(b.value for b in PRIORITY_TABLE)


def test_named_class_wins_then_annotation_then_table() -> None:
    job = make_job().set(priority=90, priorityClassName="urgent")
    job = job.annotate("gryvia.io/priority-class", "legacy")
    assert rules.job_priority_class(job.model(), True) == "urgent"
    annotated = make_job().set(priority=90).annotate("gryvia.io/priority-class", "legacy")
    assert rules.job_priority_class(annotated.model(), True) == "legacy"
    assert rules.job_priority_class(annotated.model(), False) == "legacy"


def test_pod_template_carries_the_class_and_backoff_the_carried_retries() -> None:
    job = make_job().set(priority=10).retry_limit(3).status(carriedRetries=2).model()
    assert (
        build_pod_template(job, kind="job", config=ON)["spec"]["priorityClassName"] == "gryvia-low"
    )
    assert (
        "priorityClassName"
        not in build_pod_template(job, kind="job", config=ReconcileConfig())["spec"]
    )
    assert build_batch_job(job)["spec"]["backoffLimit"] == 1


def test_priority_value_compares_jobs() -> None:
    known = {"urgent": 50000, "gryvia-low": 1000}
    assert rules.priority_value({"priorityClassName": "urgent"}, {}, known) == 50000
    assert rules.priority_value({"priorityClassName": "missing"}, {}, known) == 0
    assert rules.priority_value({"priority": 10}, {}, known) == 1000
    assert rules.priority_value({"priority": 90}, {}, known) == 10000  # table default value
    assert rules.priority_value({}, {}, known) == 0


def test_owned_priority_class_and_its_drift() -> None:
    prio = GryviaPriority.model_validate(
        {
            "metadata": {"name": "urgent", "uid": "u1"},
            "spec": {"value": 50000, "preemptionPolicy": "Never"},
        }
    )
    body = rules.desired_priority_class(prio)
    assert (body["kind"], body["value"], body["preemptionPolicy"]) == (
        "PriorityClass",
        50000,
        "Never",
    )
    assert body["metadata"]["ownerReferences"][0]["uid"] == "u1"
    assert rules.class_drift(body, body) == ""
    assert rules.class_drift(body, {**body, "value": 1}) == "replace"
    assert rules.class_drift(body, {**body, "preemptionPolicy": "PreemptLowerPriority"}) == (
        "replace"
    )
    assert rules.class_drift(body, {**body, "description": "x"}) == "patch"
    assert not rules.owned_by_other(body, "u1")
    assert rules.owned_by_other({"metadata": {"name": "urgent"}}, "u1")


def _run(name: str, value: int, gpus: int, started: str = "") -> rules.RunningJob:
    return rules.RunningJob("ml", name, value, gpus, started)


def test_victims_lowest_first_then_newest_and_only_when_enough() -> None:
    jobs = [
        _run("a", 1000, 2, "2026-12-01T10:00:00Z"),
        _run("b", 1000, 2, "2026-12-01T11:00:00Z"),
        _run("c", 5000, 4),
        _run("d", 20000, 8),
    ]
    assert [v.name for v in rules.choose_victims(10000, 2, 0, jobs)] == ["b"]
    assert [v.name for v in rules.choose_victims(10000, 3, 0, jobs)] == ["b", "a"]
    assert [v.name for v in rules.choose_victims(10000, 6, 0, jobs)] == ["b", "a", "c"]
    assert rules.choose_victims(10000, 9, 0, jobs) == ()  # d is higher: cannot free 9
    assert rules.choose_victims(1000, 2, 0, jobs) == ()  # equal priority never preempts
    assert rules.choose_victims(10000, 0, 0, jobs) == ()
    assert [v.name for v in rules.choose_victims(10000, 0, 1, jobs)] == ["b"]  # a job slot


def test_need_for_counts_gpus_and_running_slots() -> None:
    assert rules.need_for(4, 8, 8, 2, None) == (4, 0)
    assert rules.need_for(4, 2, 8, 3, 3) == (0, 1)
    assert rules.need_for(4, 2, 8, 1, 3) == (0, 0)


def test_preempted_then_requeued_keeps_retries() -> None:
    running = {
        "phase": "Running",
        "retries": 1,
        "startTime": "2026-12-01T21:00:00Z",
        "nodesAllocated": ["l40-a"],
        "conditions": [
            {"type": "Admitted", "status": "True", "reason": "QuotaReserved", "message": "m"}
        ],
    }
    message = rules.preemption_message("ml/high", 10000, 1000)
    out = rules.preempted_status(running, message, NOW)
    assert out["phase"] == "Preempted" and out["preemptions"] == 1
    assert "preempted by ml/high (priority 10000 > 1000)" in out["message"]
    assert requeue_pending(out)
    assert rules.preempted_status(out, message, NOW)["preemptions"] == 2
    back = rules.requeued_status(out, NOW)
    assert (back["phase"], back["retries"], back["carriedRetries"]) == ("Pending", 1, 1)
    assert "startTime" not in back and "nodesAllocated" not in back
    types = {c["type"]: c for c in back["conditions"]}
    assert "Admitted" not in types
    assert types["Preempted"]["reason"] == "Requeued"
    assert "preempted by ml/high" in types["Preempted"]["message"]
    assert not requeue_pending(back)


def test_reconcile_deletes_the_workload_then_requeues() -> None:
    status = rules.preempted_status({"phase": "Running", "retries": 2}, "preempted by x", NOW)
    builder = make_job().retry_limit(3).status(**status)
    job = builder.model()
    child = build_batch_job(job)
    child["metadata"]["uid"] = "u-job"
    view = ChildView.from_object(child)
    first = reconcile_job(job, Observed(workloads=(view,)), ON, NOW)
    assert [(a.verb, a.kind) for a in first.actions] == [("delete", "Job")]
    assert first.status["phase"] == "Preempted"
    assert first.requeue_after is not None  # looks again until the pods are gone
    second = reconcile_job(job, Observed(), ON, NOW)
    assert second.status["phase"] == "Pending" and second.status["carriedRetries"] == 2
    plain = make_job().status(phase="Preempted").model()  # not by priority: stays stopped
    assert reconcile_job(plain, Observed(), ON, NOW).status["phase"] == "Preempted"


def test_each_run_has_its_own_usage_record_and_the_previous_is_sealed() -> None:
    from datetime import timedelta

    from gryvia_operator.api.names import usage_record_name
    from gryvia_operator.api.pricing import Rate
    from gryvia_operator.api.priority import run_index
    from gryvia_operator.reconcile.metering import build_usage_record, sealed_previous_run

    started = NOW - timedelta(hours=2)
    running = {"phase": "Running", "startTime": started.strftime("%Y-%m-%dT%H:%M:%SZ")}
    first = make_job().gpus(2).uid("u1").status(**running).model()
    rate = Rate("l40", "L40", 2.5)
    rec = build_usage_record(first, tenant="t", rate=rate, gpu_type="L40", now=NOW)
    assert rec is not None and rec["metadata"]["name"] == "usage-u1"

    preempted_time = NOW - timedelta(hours=1)
    stopping = rules.preempted_status(running, "preempted by ml/high", preempted_time)
    assert run_index(stopping) == 0  # still the first run while its pods stop
    back = rules.requeued_status(stopping, NOW)
    assert run_index(back) == 1
    requeued = make_job().gpus(2).uid("u1").status(**back).model()
    assert rules.job_run(requeued) == 1 and rules.preempted_at(requeued) == preempted_time
    sealed = sealed_previous_run(requeued, rec)
    assert sealed is not None and sealed["metadata"]["name"] == "usage-u1"
    assert sealed["spec"]["final"] is True
    assert sealed["spec"]["end"] == preempted_time.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert sealed["spec"]["gpuHours"] == pytest.approx(2.0)  # 2 GPUs x 1 hour
    assert sealed["spec"]["cost"] == pytest.approx(5.0)
    assert sealed_previous_run(requeued, sealed) is None  # sealed once, never again
    again = {**back, "phase": "Running", "startTime": NOW.strftime("%Y-%m-%dT%H:%M:%SZ")}
    second = make_job().gpus(2).uid("u1").status(**again).model()
    rec2 = build_usage_record(second, tenant="t", rate=rate, gpu_type="L40", now=NOW)
    assert rec2 is not None and rec2["metadata"]["name"] == usage_record_name("u1", 1)
    assert rec2["metadata"]["name"] == "usage-u1-1"


def test_placement_leaves_only_pods_of_equal_or_higher_priority() -> None:
    from gryvia_operator.reconcile.placement import select_nodes
    from gryvia_operator.reconcile.views import PodView
    from tests.builders import gpu_node

    node = gpu_node("h100-a", "H100", 8)
    pods = (PodView("ml", "low-0", node_name="h100-a", phase="Running", gpus=8, priority=1000),)
    job = make_job("urgent").gpus(8).gpu_type("H100").model()
    assert not select_nodes(job, (node,), rules.preemption_survivors(pods, None)).ok
    assert select_nodes(job, (node,), rules.preemption_survivors(pods, 10000)).ok
    assert not select_nodes(job, (node,), rules.preemption_survivors(pods, 1000)).ok
    assert PodView.from_pod({"metadata": {}, "spec": {"priority": 42}}).priority == 42
