"""The kube-scheduler's preemption of a job's pods: the Event parsed, the preemptor named, the
job's status counted once per preemption (reconcile/scheduler_preemption.py), and the handler
that reads the Events and writes it (handlers/scheduler_preemption.py, in-memory API)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from gryvia_operator.api.preemption import run_index
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import PODS_BY_JOB
from gryvia_operator.handlers.scheduler_preemption import SchedulerPreemptions
from gryvia_operator.reconcile import jobhooks
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.scheduler_preemption import (
    SchedulerNote,
    Victim,
    parse_note,
    preemptor_label,
    scheduler_preempted_status,
)
from gryvia_operator.reconcile.views import PodView
from tests.unit.operator.fakeapi import FakeApi

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
UID = "6f1c2a4e-0000-4000-8000-000000000001"
RUNNING = {"phase": "Running", "startTime": "2026-12-01T10:00:00Z", "retries": 1}


def _event(message: str, **extra: Any) -> dict[str, Any]:
    return {"reason": "Preempted", "type": "Normal", "message": message, **extra}


def test_the_schedulers_event_names_the_preemptor_uid_and_node() -> None:
    note = parse_note(_event(f"Preempted by pod {UID} on node kwok-h100-0"))
    assert note == SchedulerNote("pod", UID, "kwok-h100-0")
    related = {"kind": "Pod", "namespace": "ml", "name": "other-7"}
    note = f"Preempted by pod {UID} on node n"  # events.k8s.io/v1 names it `note`
    named = parse_note({"reason": "Preempted", "note": note, "related": related})
    assert named is not None and named.related == "ml/other-7"
    assert (
        parse_note(_event(f"Preempted by pod {UID} on node n (in kube-scheduler memory).")) is None
    )
    assert parse_note({"reason": "Killing", "message": "Stopping container trainer"}) is None


def test_the_preemptor_is_its_gryvia_job_else_the_pod_else_its_uid() -> None:
    note = SchedulerNote("pod", UID, "n")
    assert preemptor_label(note, {UID: ("ml/urgent", 10000)}, {}) == ("ml/urgent", True, 10000)
    assert preemptor_label(note, {}, {UID: "infra/probe-1"}) == ("infra/probe-1", False, None)
    assert preemptor_label(note, {}, {}) == (UID, False, None)


def test_a_pod_view_carries_the_schedulers_preemption_time() -> None:
    pod = {
        "metadata": {"namespace": "ml", "name": "fill-0-x", "uid": "u1"},
        "status": {
            "conditions": [
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "PreemptionByScheduler",
                    "lastTransitionTime": "2026-12-01T11:00:00Z",
                }
            ]
        },
    }
    view = PodView.from_pod(pod)
    assert (view.uid, view.preempted_at) == ("u1", "2026-12-01T11:00:00Z")
    evicted = {**pod, "status": {"conditions": [{**pod["status"]["conditions"][0]}]}}
    evicted["status"]["conditions"][0]["reason"] = "EvictionByEvictionAPI"
    assert PodView.from_pod(evicted).preempted_at == ""


def _victim(pod: str, time: str, by: str = "ml/urgent") -> Victim:
    return Victim(pod, time, by, "kwok-h100-0", True, 10000, 1000)


def test_one_preemption_is_counted_once_across_pods_and_passes() -> None:
    first = [
        _victim("fill-0-a", "2026-12-01T11:00:00Z"),
        _victim("fill-1-b", "2026-12-01T11:00:02Z"),
    ]
    decided = scheduler_preempted_status(RUNNING, first)
    assert decided is not None
    status, newest = decided
    assert newest.pod == "fill-1-b"
    assert status["preemptions"] == 1 and status["schedulerPreemptions"] == 1
    assert status["phase"] == "Running" and status["retries"] == 1  # not a failure
    cond = next(c for c in status["conditions"] if c["type"] == "Preempted")
    assert cond["status"] == "True" and cond["reason"] == "PreemptedByScheduler"
    assert cond["message"].startswith("preempted by ml/urgent (priority 10000 > 1000)")
    assert cond["lastTransitionTime"] == "2026-12-01T11:00:02Z"
    # the same pods again (another pass, a restart) and a later pod of the same preemptor
    assert scheduler_preempted_status(status, first) is None
    later = [*first, _victim("fill-2-c", "2026-12-01T11:05:00Z")]
    assert scheduler_preempted_status(status, later) is None
    # another preemptor later is a new preemption
    other = [*later, _victim("fill-0-d", "2026-12-01T12:00:00Z", by="ml/deadline")]
    again = scheduler_preempted_status(status, other)
    assert again is not None and again[0]["preemptions"] == 2
    assert again[0]["schedulerPreemptions"] == 2


def test_two_preemptors_in_one_pass_count_twice_and_the_newest_is_named() -> None:
    victims = [
        _victim("fill-0-a", "2026-12-01T11:00:00Z", by="ml/b"),
        _victim("fill-1-b", "2026-12-01T11:00:00Z", by="ml/a"),
    ]
    decided = scheduler_preempted_status(RUNNING, victims)
    assert decided is not None and decided[0]["preemptions"] == 2
    assert decided[1].preemptor == "ml/b"  # same second: by name, the last one


def test_a_non_gryvia_preemptor_is_named_as_a_pod() -> None:
    victim = Victim("fill-0-a", "2026-12-01T11:00:00Z", "infra/probe-1", "n", False, None, 1000)
    decided = scheduler_preempted_status(RUNNING, [victim])
    assert decided is not None
    cond = next(c for c in decided[0]["conditions"] if c["type"] == "Preempted")
    assert cond["message"].startswith("preempted by infra/probe-1 (a pod, not a Gryvia job)")


def test_nothing_for_ended_or_quota_preempted_jobs_or_older_pods() -> None:
    victim = _victim("fill-0-a", "2026-12-01T11:00:00Z")
    assert scheduler_preempted_status({**RUNNING, "phase": "Succeeded"}, [victim]) is None
    stopping = {
        "phase": "Preempted",
        "preemptions": 1,
        "conditions": [
            {
                "type": "Preempted",
                "status": "True",
                "reason": "PreemptedByPriority",
                "lastTransitionTime": "2026-12-01T10:30:00Z",
                "message": "preempted by ml/high (priority 10000 > 1000)",
            }
        ],
    }
    assert scheduler_preempted_status(stopping, [victim]) is None
    requeued = {**stopping, "phase": "Running"}
    requeued["conditions"] = [{**stopping["conditions"][0], "reason": "Requeued"}]
    older = _victim("fill-0-z", "2026-12-01T10:00:00Z")  # a pod of the run before the requeue
    assert scheduler_preempted_status(requeued, [older]) is None
    decided = scheduler_preempted_status(requeued, [older, victim])
    assert decided is not None and decided[0]["preemptions"] == 2


def test_a_scheduler_preemption_keeps_the_run_and_fires_one_preempted_hook_event() -> None:
    decided = scheduler_preempted_status(RUNNING, [_victim("fill-0-a", "2026-12-01T11:00:00Z")])
    assert decided is not None
    job = {"metadata": {"uid": "j"}, "status": decided[0]}
    assert run_index(decided[0]) == 0  # no new run, no new usage record
    found = {(t.event, t.seq) for t in jobhooks.transitions(job)}
    assert found == {("Running", 0), ("Preempted", 1)}
    requeued = {**decided[0], "preemptions": 2}  # then the quota gate requeues it once
    assert run_index(requeued) == 1


def _victim_pod(name: str, uid: str, time: str) -> PodView:
    return PodView(
        "ml", name, node_name="kwok-h100-0", gpus=8, job="fill", priority=1000,
        uid=uid, preempted_at=time,
    )  # fmt: skip


async def test_the_handler_names_the_preemptor_job_and_counts_its_preemption_once() -> None:
    api, posted = FakeApi(), []
    rt = Runtime(
        api=cast(Any, api),
        config=ReconcileConfig(priorities=True),
        clock=lambda: NOW,
        post_event=lambda _obj, e: posted.append(e),
    )
    victims = [
        _victim_pod("fill-0-a", "v1", "2026-12-01T11:00:00Z"),
        _victim_pod("fill-1-b", "v2", "2026-12-01T11:00:01Z"),
    ]
    urgent = PodView("ml", "urgent-0-x", gpus=8, job="urgent", priority=10000, uid=UID)
    rt.indices.attach({PODS_BY_JOB: {("ml", "fill"): victims, ("ml", "urgent"): [urgent]}})
    job = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAIJob",
        "metadata": {"name": "fill", "namespace": "ml", "generation": 1},
        "status": dict(RUNNING),
    }
    api.put(job)
    for i, pod in enumerate(victims):
        api.put(
            {
                "kind": "Event",
                "metadata": {"name": f"e{i}", "namespace": "ml"},
                "involvedObject": {"kind": "Pod", "name": pod.name, "uid": pod.uid},
                "reason": "Preempted",
                "message": f"Preempted by pod {UID} on node kwok-h100-0",
            }
        )
    marking = SchedulerPreemptions(rt)
    await marking.mark(("ml", "fill"), victims[0])
    status = api.objects[("GryviaAIJob", "ml", "fill")]["status"]
    assert status["preemptions"] == 1 and status["schedulerPreemptions"] == 1
    assert status["retries"] == 1 and status["phase"] == "Running"
    cond = next(c for c in status["conditions"] if c["type"] == "Preempted")
    assert cond["message"].startswith("preempted by ml/urgent (priority 10000 > 1000)")
    assert [(e.type, e.reason) for e in posted] == [("Warning", "Preempted")]
    await marking.mark(("ml", "fill"), victims[1])  # another pass: nothing new
    assert api.objects[("GryviaAIJob", "ml", "fill")]["status"]["preemptions"] == 1
    assert len(posted) == 1
