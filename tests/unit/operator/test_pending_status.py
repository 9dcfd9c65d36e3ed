"""Issue 20: `status.pending` and `status.estimatedStart` of waiting jobs, field by field."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gryvia_operator.api import GryviaQuota
from gryvia_operator.api.jobfacts import JobFacts, history, job_facts
from gryvia_operator.reconcile.pending import WaitContext, wait_status
from gryvia_operator.reconcile.quotas import job_view, quota_state
from gryvia_operator.reconcile.views import PodView
from tests.builders import gpu_node, make_job, make_pod

T0 = dt.datetime(2026, 12, 1, 14, 0, tzinfo=dt.UTC)
NODES = [gpu_node("h1", "H100"), gpu_node("h2", "H100")]


def stamp(minutes: float) -> str:
    return (T0 + dt.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def running_job(name: str, gpus: int, *, started: float, timeout: str | None) -> dict[str, Any]:
    builder = make_job(name).gpus(gpus).gpu_type("H100").phase("Running")
    builder = builder.status(startTime=stamp(started), nodesAllocated=["h1"])
    if timeout:
        builder = builder.timeout(timeout)
    body = builder.obj()
    body["metadata"]["creationTimestamp"] = stamp(started - 1)
    return body


def waiting_job(name: str, gpus: int, *, created: float, gpu_type: str = "H100") -> Any:
    builder = make_job(name).gpus(gpus).gpu_type(gpu_type)
    body = builder.obj()
    body["metadata"]["creationTimestamp"] = stamp(created)
    return body


def model(body: dict[str, Any]) -> Any:
    from gryvia_operator.api import GryviaAIJob

    return GryviaAIJob.model_validate(body)


def context(*bodies: dict[str, Any], **extra: Any) -> WaitContext:
    return WaitContext(jobs=tuple(job_facts(b) for b in bodies), **extra)


def test_resources_blocker_names_numbers_ahead_and_holders() -> None:
    c = running_job("c", 4, started=-10, timeout="30m")  # ends at +20
    d = running_job("d", 8, started=-55, timeout="2h")  # ends at +65
    a = waiting_job("a", 8, created=-5)
    me = waiting_job("me", 8, created=-1)
    pods = [
        make_pod("c-0").on("h1").gpus(4).job("c").view(),
        make_pod("d-0").on("h2").gpus(8).job("d").view(),
    ]
    out = wait_status(model(me), {"phase": "Pending"}, NODES, pods, context(c, d, a, me), T0)
    assert out["pending"] == {
        "kind": "Resources",
        "resource": "H100",
        "needed": 8,
        "freeNow": 4,
        "ahead": {"count": 1, "names": ["a"]},
        "holders": [
            {"name": "c", "gpus": 4, "expectedEnd": stamp(20), "basis": "timeout"},
        ],
        "message": "needs 8 H100 on 1 node(s), 4 free on nodes that could take its pods",
    }
    # alone it would take h1 when c ends (+20); a goes first there, so it waits for d (+65)
    assert out["estimatedStart"] == {"earliest": stamp(20), "likely": stamp(65)}


def test_same_inputs_give_the_same_status_at_a_later_time() -> None:
    c = running_job("c", 8, started=-10, timeout="30m")
    me = waiting_job("me", 8, created=-1)
    pods = [make_pod("c-0").on("h1").gpus(8).job("c").view()]
    nodes = [gpu_node("h1", "H100")]
    first = wait_status(model(me), {"phase": "Pending"}, nodes, pods, context(c, me), T0)
    later = T0 + dt.timedelta(minutes=3)
    again = wait_status(model(me), {"phase": "Pending"}, nodes, pods, context(c, me), later)
    assert first == again


def test_a_holder_without_timeout_makes_the_start_unknown() -> None:
    c = running_job("c", 8, started=-10, timeout=None)
    me = waiting_job("me", 8, created=-1)
    pods = [make_pod("c-0").on("h1").gpus(8).job("c").view()]
    out = wait_status(
        model(me), {"phase": "Pending"}, [gpu_node("h1", "H100")], pods, context(c, me), T0
    )
    assert out["estimatedStart"] == {
        "unknownReason": "job c has no timeout and no finished job like it "
        "(same tenant and GPU type)"
    }
    assert out["pending"]["holders"] == [{"name": "c", "gpus": 8, "basis": "unknown"}]


def test_history_of_similar_jobs_gives_the_end_of_a_job_without_timeout() -> None:
    old = make_job("old").gpus(8).gpu_type("H100").phase("Succeeded")
    old = old.status(startTime=stamp(-100), completionTime=stamp(-70)).obj()
    c = running_job("c", 8, started=-10, timeout=None)
    me = waiting_job("me", 8, created=-1)
    facts = [job_facts(b) for b in (old, c, me)]
    assert history(facts, "ml", "H100") == dt.timedelta(minutes=30)
    pods = [make_pod("c-0").on("h1").gpus(8).job("c").view()]
    out = wait_status(
        model(me), {"phase": "Pending"}, [gpu_node("h1", "H100")], pods, context(old, c, me), T0
    )
    assert out["estimatedStart"] == {"earliest": stamp(20), "likely": stamp(20)}
    assert out["pending"]["holders"][0]["basis"] == "history"


def test_no_such_gpu_type_and_too_large() -> None:
    me = waiting_job("me", 8, created=-1, gpu_type="B200")
    out = wait_status(model(me), {"phase": "Pending"}, NODES, [], context(me), T0)
    assert out["pending"] == {
        "kind": "NoSuchGPUType",
        "resource": "B200",
        "needed": 8,
        "message": 'no node has GPU type "B200" (types here: H100) and no catalog SKU prices it',
    }
    assert out["estimatedStart"] == {
        "unknownReason": 'never: no node has GPU type "B200" (types here: H100) and no catalog '
        "SKU prices it"
    }
    big = waiting_job("big", 16, created=-1)
    out = wait_status(model(big), {"phase": "Pending"}, NODES, [], context(big), T0)
    assert out["pending"]["kind"] == "TooLarge"
    assert out["pending"]["message"] == "each pod needs 16 H100, the largest H100 node has 8"
    priced = wait_status(
        model(me), {"phase": "Pending"}, NODES, [], context(me, sku_types=("B200",)), T0
    )
    assert priced["pending"]["kind"] == "Resources"
    assert priced["pending"]["freeNow"] == 0
    assert priced["estimatedStart"] == {"unknownReason": "no usable node can take its pods (B200)"}


def _quota(max_gpus: int, *, spent_limit: float | None = None) -> GryviaQuota:
    spec: dict[str, Any] = {"team": "ml", "namespaces": ["ml"], "gpuQuota": {"maxGPUs": max_gpus}}
    if spent_limit is not None:
        spec["budget"] = {"monthlyBudget": spent_limit, "hardLimit": True}
    return GryviaQuota.model_validate({"metadata": {"name": "ml"}, "spec": spec})


def test_quota_blocker_with_holders_and_estimate() -> None:
    c = running_job("c", 6, started=-10, timeout="40m")  # ends at +30
    me = waiting_job("me", 4, created=-1)
    state = quota_state(_quota(8), [job_view(c), job_view(me)])
    out = wait_status(
        model(me), {"phase": "Queued"}, NODES, [], context(c, me, quotas=(state,)), T0
    )
    assert out["pending"] == {
        "kind": "Quota",
        "resource": "quota ml",
        "needed": 4,
        "freeInQuota": 2,
        "ahead": {"count": 0},
        "holders": [{"name": "c", "gpus": 6, "expectedEnd": stamp(30), "basis": "timeout"}],
        "message": "team ml uses 6 of 8 GPUs, this job needs 4",
    }
    assert out["estimatedStart"] == {"earliest": stamp(30), "likely": stamp(30)}


def test_priority_blocker_when_the_quota_has_room_but_earlier_jobs_wait() -> None:
    c = running_job("c", 4, started=-10, timeout="40m")
    first = waiting_job("first", 8, created=-5)
    me = waiting_job("me", 2, created=-1)
    jobs = [job_view(b) for b in (c, first, me)]
    state = quota_state(_quota(8), jobs)
    out = wait_status(
        model(me), {"phase": "Queued"}, NODES, [], context(c, first, me, quotas=(state,)), T0
    )
    assert out["pending"]["kind"] == "Priority"
    assert out["pending"]["ahead"] == {"count": 1, "names": ["first"]}
    assert out["pending"]["freeInQuota"] == 4
    # first starts when c ends (+30) and has no timeout: after it, unknown
    assert out["estimatedStart"]["unknownReason"]


def test_budget_blocker_renews_with_the_month() -> None:
    me = waiting_job("me", 4, created=-1)
    state = quota_state(_quota(8, spent_limit=100.0), [job_view(me)], spent=120.0)
    out = wait_status(model(me), {"phase": "Queued"}, NODES, [], context(me, quotas=(state,)), T0)
    assert out["pending"] == {
        "kind": "Budget",
        "resource": "budget ml",
        "needed": 4,
        "freeInQuota": 8,
        "message": "the monthly budget of team ml is spent (120.00 USD, hard limit); "
        "it renews 2027-01-01",
    }
    assert out["estimatedStart"] == {
        "earliest": "2027-01-01T00:00:00Z",
        "likely": "2027-01-01T00:00:00Z",
    }


def test_reservation_blocker_for_a_reservation_the_job_waits_for() -> None:
    body = waiting_job("me", 8, created=-1)
    body["metadata"]["annotations"] = {"gryvia.io/reservation": "night"}
    unwatched = wait_status(model(body), {"phase": "Pending"}, NODES, [], context(body), T0)
    assert unwatched["pending"]["kind"] == "Resources"  # reservations off
    none = context(body, reservations={})  # not the owner's, or none: the job runs outside it
    out = wait_status(model(body), {"phase": "Pending"}, NODES, [], none, T0)
    assert out["pending"]["kind"] == "Resources"
    pend = context(body, reservations={"night": "pending"})
    out = wait_status(model(body), {"phase": "Pending"}, NODES, [], pend, T0)
    assert out["pending"]["message"] == "reservation night is pending"
    active = context(body, reservations={"night": "active"})
    out = wait_status(model(body), {"phase": "Pending"}, NODES, [], active, T0)
    assert out["pending"]["kind"] == "Resources"


def test_suspended_and_kueue() -> None:
    body = make_job("me").gpus(8).gpu_type("H100").suspend().obj()
    out = wait_status(model(body), {"phase": "Scheduling"}, NODES, [], context(body), T0)
    assert out["pending"]["kind"] == "Suspended"
    body["spec"]["queueName"] = "team-q"
    out = wait_status(model(body), {"phase": "Scheduling"}, NODES, [], context(body), T0)
    assert out["pending"]["kind"] == "Kueue"


def test_a_job_that_starts_drops_both_keys() -> None:
    me = waiting_job("me", 8, created=-1)
    before = {"phase": "Running", "pending": {"kind": "Resources"}, "estimatedStart": {}}
    out = wait_status(model(me), before, NODES, [], context(me), T0)
    assert "pending" not in out and "estimatedStart" not in out
    assert out["phase"] == "Running"


def test_job_facts_projection() -> None:
    body = running_job("c", 8, started=-10, timeout="30m")
    facts = job_facts(body)
    assert facts == JobFacts(
        namespace="ml",
        name="c",
        phase="Running",
        created=T0 - dt.timedelta(minutes=11),
        gpu_type="H100",
        per_pod=8,
        timeout_seconds=1800,
        start=T0 - dt.timedelta(minutes=10),
        placed=True,
    )
    assert facts.holds and facts.total == 8


def test_an_older_job_that_never_fits_is_not_ahead() -> None:
    c = running_job("c", 8, started=-10, timeout="30m")
    huge = waiting_job("huge", 16, created=-30)  # 16 per pod: no node has that many
    older = waiting_job("older", 8, created=-20)
    me = waiting_job("me", 8, created=-1)
    pods = [make_pod("c-0").on("h1").gpus(8).job("c").view()]
    nodes = [gpu_node("h1", "H100")]
    out = wait_status(model(me), {"phase": "Pending"}, nodes, pods, context(c, huge, older, me), T0)
    assert out["pending"]["ahead"] == {"count": 1, "names": ["older"]}
    # older takes h1 when c ends (+20) and has no timeout: after it, unknown
    assert out["estimatedStart"]["earliest"] == stamp(20)
    assert "older" in out["estimatedStart"]["unknownReason"]


def test_a_hold_without_a_quota_state_keeps_the_gate_message() -> None:
    me = waiting_job("me", 4, created=-1)
    held = {"phase": "Queued", "message": "budget team-a is over its hard limit"}
    out = wait_status(model(me), held, NODES, [], context(me), T0)
    assert out["pending"] == {
        "kind": "Budget",
        "needed": 4,
        "message": "budget team-a is over its hard limit",
    }
    assert out["estimatedStart"] == {"unknownReason": "budget team-a is over its hard limit"}


def test_a_placed_job_whose_pod_is_unschedulable_waits_for_resources() -> None:
    c = running_job("c", 8, started=-10, timeout="30m")
    me = make_job("me").gpus(8).gpu_type("H100").obj()
    me["metadata"]["creationTimestamp"] = stamp(-1)
    bound = [make_pod("c-0").on("h1").gpus(8).job("c").view()]
    mine = make_pod("me-0").gpus(8).job("me").obj()
    mine["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    ]
    own = [PodView.from_pod(mine)]
    nodes = [gpu_node("h1", "H100")]
    placed = {"phase": "Scheduling", "nodesAllocated": ["h1"]}
    out = wait_status(model(me), placed, nodes, bound, context(c, me), T0, own)
    assert out["pending"]["kind"] == "Resources"
    assert out["estimatedStart"] == {"earliest": stamp(20), "likely": stamp(20)}
    # just created, not yet judged by the scheduler: not waiting
    fresh = [make_pod("me-0").gpus(8).job("me").view()]
    out = wait_status(model(me), placed, nodes, bound, context(c, me), T0, fresh)
    assert "pending" not in out
