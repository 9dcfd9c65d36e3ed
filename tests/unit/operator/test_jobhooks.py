"""Job hooks, pure: transitions from status facts, the Preempted contract (status.preemptions),
no backfill, selectors, delivery ids, the annotation state, payloads, Ready reasons."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gryvia_operator.api.jobhook import STATE_ANNOTATION, GryviaJobHook
from gryvia_operator.reconcile import jobhooks as core

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def hook(events: list[str], **spec: Any) -> GryviaJobHook:
    status = spec.pop("status", None)
    body: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaJobHook",
        "metadata": {
            "name": "h",
            "namespace": "ns",
            "uid": "hook-uid",
            "creationTimestamp": "2026-12-01T11:00:00Z",
        },
        "spec": {"events": events, "webhook": {"url": "https://hooks.example/x"}, **spec},
    }
    if status:
        body["status"] = status
    return GryviaJobHook.model_validate(body)


def job(phase: str, **status: Any) -> dict[str, Any]:
    labels = status.pop("labels", {"team": "a"})
    annotations = status.pop("annotations", {})
    return {
        "kind": "GryviaAIJob",
        "metadata": {
            "name": "j",
            "namespace": status.pop("namespace", "ns"),
            "uid": "job-uid",
            "labels": labels,
            "annotations": annotations,
        },
        "status": {"phase": phase, **status},
    }


def events(items: list[core.Due]) -> list[tuple[str, int]]:
    return [(d.transition.event, d.transition.seq) for d in items]


def test_succeeded_after_running_gives_both_transitions() -> None:
    done = job(
        "Succeeded",
        startTime="2026-12-01T11:30:00Z",
        completionTime="2026-12-01T11:31:00Z",
        message="done",
    )
    assert events(core.due(hook(["Running", "Succeeded", "Failed"]), done)) == [
        ("Running", 0),
        ("Succeeded", 0),
    ]
    assert events(core.due(hook(["Failed"]), done)) == []


def test_no_backfill_of_transitions_before_the_hook_or_its_resume() -> None:
    old = job("Failed", startTime="2026-12-01T10:00:00Z", completionTime="2026-12-01T10:59:59Z")
    assert core.due(hook(["Running", "Failed"]), old) == []
    same = job("Failed", startTime="2026-12-01T10:00:00Z", completionTime="2026-12-01T11:00:00Z")
    assert core.due(hook(["Running", "Failed"]), same) == []  # same second: maybe before
    later = job("Failed", startTime="2026-12-01T10:00:00Z", completionTime="2026-12-01T11:00:01Z")
    assert events(core.due(hook(["Running", "Failed"]), later)) == [("Failed", 0)]
    resumed = hook(["Failed"], status={"activeSince": "2026-12-01T11:30:00Z"})
    assert core.due(resumed, later) == []


def test_suspended_hook_and_other_namespaces_or_labels_send_nothing() -> None:
    failed = job("Failed", completionTime="2026-12-01T11:30:00Z")
    assert core.due(hook(["Failed"], suspend=True), failed) == []
    elsewhere = job("Failed", completionTime="2026-12-01T11:30:00Z", namespace="other")
    assert core.due(hook(["Failed"]), elsewhere) == []
    picky = hook(["Failed"], selector={"matchLabels": {"team": "b"}})
    assert core.due(picky, failed) == []
    expr = hook(
        ["Failed"],
        selector={"matchExpressions": [{"key": "team", "operator": "In", "values": ["a"]}]},
    )
    assert events(core.due(expr, failed)) == [("Failed", 0)]
    absent = hook(
        ["Failed"], selector={"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}
    )
    assert events(core.due(absent, failed)) == [("Failed", 0)]
    assert events(core.due(hook(["Failed"], kinds=["GryviaAIJob"]), failed)) == [("Failed", 0)]


def test_preempted_fires_per_increase_of_status_preemptions() -> None:
    h = hook(["Preempted", "Running"])
    cond = {"type": "Preempted", "status": "True", "lastTransitionTime": "2026-12-01T11:40:00Z"}
    first = job("Queued", preemptions=1, conditions=[cond], startTime="2026-12-01T11:30:00Z")
    (item,) = core.due(h, first)
    assert (item.transition.event, item.transition.seq) == ("Preempted", 1)
    assert item.delivery.startswith("preempted-1-")
    again = job("Running", preemptions=2, conditions=[cond], startTime="2026-12-01T11:50:00Z")
    found = core.due(h, again)
    assert events(found) == [("Running", 2), ("Preempted", 2)]
    assert found[1].delivery.startswith("preempted-2-")
    assert found[1].delivery != item.delivery
    terminal = job("Preempted", completionTime="2026-12-01T11:45:00Z")  # no counter: counts as 1
    assert events(core.due(h, terminal)) == [("Preempted", 1)]


def test_delivery_id_is_stable_and_distinct_per_hook_job_event_and_count() -> None:
    a = core.delivery_id("h1", "j1", "Succeeded", 0)
    assert a == core.delivery_id("h1", "j1", "Succeeded", 0)
    assert a.startswith("succeeded-0-")
    others = {
        core.delivery_id("h2", "j1", "Succeeded", 0),
        core.delivery_id("h1", "j2", "Succeeded", 0),
        core.delivery_id("h1", "j1", "Failed", 0),
        core.delivery_id("h1", "j1", "Succeeded", 1),
    }
    assert a not in others and len(others) == 4


def test_final_state_in_the_annotation_is_never_due_again_delivering_resumes() -> None:
    h = hook(["Failed"])
    failed = job("Failed", completionTime="2026-12-01T11:30:00Z")
    (item,) = core.due(h, failed)
    state = core.record(
        {}, item.delivery, hook="h", event="Failed", phase="delivering", attempts=2, now=NOW
    )
    failed["metadata"]["annotations"] = {STATE_ANNOTATION: core.dump_state(state)}
    (again,) = core.due(h, failed)
    assert again.attempts == 2
    for final in ("delivered", "failed", "refused"):
        done = core.record(
            state, item.delivery, hook="h", event="Failed", phase=final, attempts=3, now=NOW
        )
        failed["metadata"]["annotations"] = {STATE_ANNOTATION: core.dump_state(done)}
        assert core.due(h, failed) == []
    assert core.parse_state("not json") == {}
    assert core.parse_state('["x"]') == {}


def test_payload_and_slack_text() -> None:
    failed = job("Failed", completionTime="2026-12-01T11:30:00Z", message="é" * 600)
    (item,) = core.due(hook(["Failed"]), failed)
    body = core.payload("h", failed, item.transition, item.delivery, 2, NOW)
    assert {k: body[k] for k in ("hook", "event", "kind", "namespace", "name", "uid")} == {
        "hook": "h",
        "event": "Failed",
        "kind": "GryviaAIJob",
        "namespace": "ns",
        "name": "j",
        "uid": "job-uid",
    }
    assert body["time"] == "2026-12-01T11:30:00Z"
    assert body["delivery"] == item.delivery and body["attempt"] == 2
    assert body["labels"] == {"team": "a"}
    assert len(body["message"].encode()) <= 1000
    assert body["message"] == "é" * 500
    assert core.slack_text(failed, item.transition).startswith("GryviaAIJob ns/j Failed: éé")


def test_a_waiting_job_s_payload_carries_its_blocker_and_estimate() -> None:
    blocker = {"kind": "Resources", "resource": "H100", "needed": 8, "freeNow": 0, "message": "m"}
    estimate = {"earliest": "2026-12-01T12:10:00Z", "likely": "2026-12-01T12:20:00Z"}
    requeued = job("Pending", preemptions=1, pending=blocker, estimatedStart=estimate)
    (item,) = core.due(hook(["Preempted"]), requeued)
    body = core.payload("h", requeued, item.transition, item.delivery, 1, NOW)
    assert (body["event"], body["pending"], body["estimatedStart"]) == (
        "Preempted",
        blocker,
        estimate,
    )
    done = job("Failed", completionTime="2026-12-01T11:30:00Z")
    (item,) = core.due(hook(["Failed"]), done)
    assert not {"pending", "estimatedStart"} & set(
        core.payload("h", done, item.transition, "d", 1, NOW)
    )


def test_ready_reasons() -> None:
    h = hook(["Failed"])
    assert core.ready_condition(h, secret_missing=None, invalid="bad")[:2] == (
        "False",
        "InvalidSpec",
    )
    assert core.ready_condition(h, secret_missing="no", invalid=None)[:2] == (
        "False",
        "SecretMissing",
    )
    assert (
        core.ready_condition(hook(["Failed"], suspend=True), secret_missing=None, invalid=None)[1]
        == "Suspended"
    )
    assert core.ready_condition(h, secret_missing=None, invalid=None)[:2] == ("True", "Valid")
    assert core.attempts_allowed(h) == 3 and core.backoff_seconds(h) == 10.0


def _cond(kind: str, reason: str, when: str, status: str = "True") -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": f"{reason} by idle policy p: GPU activity at most 1.0% for the 60 s window",
        "lastTransitionTime": when,
    }


IDLE_EVENTS = ["IdleWarning", "IdleJobSuspended", "IdleJobCancelled", "Stalled"]


def test_idle_warning_action_and_stalled_come_from_true_conditions_at_their_times() -> None:
    warned = _cond("IdleGPUs", "IdleWarning", "2026-12-01T11:10:00Z")
    acted = _cond("IdleAction", "IdleJobSuspended", "2026-12-01T11:11:00Z")
    stalled = _cond("Stalled", "IdleAndSilent", "2026-12-01T11:12:00Z")
    running = job("Suspended", conditions=[warned, acted, stalled], preemptions=1)
    due = core.due(hook(IDLE_EVENTS), running)
    assert [(d.transition.event, d.transition.time) for d in due] == [
        ("IdleWarning", core.parse_time("2026-12-01T11:10:00Z")),
        ("IdleJobSuspended", core.parse_time("2026-12-01T11:11:00Z")),
        ("Stalled", core.parse_time("2026-12-01T11:12:00Z")),
    ]
    assert len({d.delivery for d in due}) == 3
    body = core.payload("h", running, due[1].transition, due[1].delivery, 1, NOW)
    assert body["event"] == "IdleJobSuspended" and body["message"] == acted["message"]
    assert body["time"] == "2026-12-01T11:11:00Z" and body["preemptions"] == 1
    assert core.slack_text(running, due[0].transition).endswith(warned["message"])
    assert events(core.due(hook(["IdleJobCancelled"]), running)) == []


def test_false_conditions_old_ones_and_recorded_ones_are_not_due() -> None:
    cleared = job(
        "Running", conditions=[_cond("IdleGPUs", "NotIdle", "2026-12-01T11:10:00Z", "False")]
    )
    assert core.due(hook(IDLE_EVENTS), cleared) == []
    before = job("Running", conditions=[_cond("Stalled", "IdleAndSilent", "2026-12-01T10:00:00Z")])
    assert core.due(hook(IDLE_EVENTS), before) == []  # no backfill
    first = job("Running", conditions=[_cond("IdleGPUs", "IdleWarning", "2026-12-01T11:10:00Z")])
    (item,) = core.due(hook(IDLE_EVENTS), first)
    state = core.record(
        {}, item.delivery, hook="h", event="IdleWarning", phase="delivered", attempts=1, now=NOW
    )
    first["metadata"]["annotations"] = {STATE_ANNOTATION: core.dump_state(state)}
    assert core.due(hook(IDLE_EVENTS), first) == []
    again = _cond("IdleGPUs", "IdleWarning", "2026-12-01T11:40:00Z")  # warned again later
    first["status"]["conditions"] = [again]
    (second,) = core.due(hook(IDLE_EVENTS), first)
    assert second.delivery != item.delivery
