"""Reservation decisions (reconcile/reservation.py): windows, node choice, Node patches, the
job's outcome, and the Reservation blocker of a waiting job."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

import pytest

from gryvia_operator.api import GryviaAIJob, GryviaReservation
from gryvia_operator.api.reservation import cron_problem
from gryvia_operator.reconcile.pending import WaitContext, wait_status
from gryvia_operator.reconcile.placement import select_nodes
from gryvia_operator.reconcile.reservation import (
    choose_nodes,
    claim_patch,
    decide,
    release_patch,
    reserved_elsewhere,
    steered,
    window,
)
from gryvia_operator.reconcile.views import NodeView
from tests.builders import gpu_node, make_job

T0 = dt.datetime(2026, 12, 1, 21, 0, tzinfo=dt.UTC)


def stamp(minutes: float) -> str:
    return (T0 + dt.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def reservation(
    name: str = "night",
    *,
    schedule: dict[str, Any] | None = None,
    owner: tuple[str, str] = ("team", "ml"),
    gpus: int = 8,
    gpu_type: str = "H100",
    **meta: Any,
) -> GryviaReservation:
    return GryviaReservation.model_validate(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaReservation",
            "metadata": {"name": name, "creationTimestamp": stamp(0), **meta},
            "spec": {
                "owner": {"type": owner[0], "name": owner[1]},
                "resources": {"gpuType": gpu_type, "gpuCount": gpus},
                "schedule": schedule or {"type": "immediate", "endTime": stamp(60)},
            },
        }
    )


def held(node: NodeView, res: str, owner: str = "ml") -> NodeView:
    labels = {**node.labels, "gryvia.io/reserved-for": res, "gryvia.io/reserved-by": owner}
    return replace(node, labels=labels)


def test_immediate_and_scheduled_windows() -> None:
    res = reservation()
    assert window(res, T0 + dt.timedelta(minutes=1)).state == "active"
    assert window(res, T0 + dt.timedelta(minutes=60)).state == "expired"
    sched = reservation(
        schedule={"type": "scheduled", "startTime": stamp(10), "endTime": stamp(20)}
    )
    before = window(sched, T0)
    assert (before.state, before.start) == ("pending", T0 + dt.timedelta(minutes=10))
    assert before.next_change == T0 + dt.timedelta(minutes=10)
    assert window(sched, T0 + dt.timedelta(minutes=10)).state == "active"
    assert window(sched, T0 + dt.timedelta(minutes=20)).state == "expired"


def test_recurring_windows_follow_the_cron_in_utc() -> None:
    rec = {"type": "recurring", "recurrence": {"cron": "0 22 * * *", "duration": "90m"}}
    res = reservation(schedule=rec)
    pending = window(res, T0)  # 21:00, the window opens at 22:00
    assert pending.state == "pending"
    assert pending.start == T0 + dt.timedelta(hours=1)
    at_fire = window(res, T0 + dt.timedelta(hours=1))
    assert (at_fire.state, at_fire.end) == ("active", T0 + dt.timedelta(hours=2, minutes=30))
    late = window(res, T0 + dt.timedelta(hours=2, minutes=29, seconds=59))
    assert late.state == "active"
    after = window(res, T0 + dt.timedelta(hours=2, minutes=30))
    assert after.state == "pending"
    assert after.start == T0 + dt.timedelta(days=1, hours=1)
    bounded = reservation(schedule={**rec, "endTime": stamp(30)})
    assert window(bounded, T0).state == "expired"


def test_cron_rules() -> None:
    assert cron_problem("*/5 * * * *") is None
    assert "5 (minute" in (cron_problem("* * * *") or "")
    assert "names" in (cron_problem("0 22 * * MON") or "")
    assert "@daily" in (cron_problem("@daily") or "")
    assert (cron_problem("61 * * * *") or "").startswith("schedule.recurrence.cron")


def test_node_choice_is_deterministic_all_or_nothing_and_keeps_held_nodes() -> None:
    nodes = [gpu_node("h2", "H100"), gpu_node("h1", "H100"), gpu_node("a1", "A100-80G")]
    claim = choose_nodes(reservation(gpus=8), nodes)
    assert (claim.nodes, claim.gpus) == (("h1",), 8)
    assert choose_nodes(reservation(gpus=8), nodes, held=["h2"]).nodes == ("h2",)
    assert choose_nodes(reservation(gpus=16), nodes).nodes == ("h1", "h2")
    short = choose_nodes(reservation(gpus=24), nodes)
    assert short.nodes == () and "found 16" in short.message
    kept = choose_nodes(reservation(gpus=24), nodes, held=["h1"])
    assert kept.nodes == ("h1",)
    other = [held(nodes[1], "day", "cv"), nodes[0]]
    assert choose_nodes(reservation(gpus=8), other).nodes == ("h2",)
    down = [replace(n, ready=False) for n in nodes]
    assert choose_nodes(reservation(gpus=8), down).nodes == ()


def test_claim_and_release_patches_are_guarded_and_keep_other_taints() -> None:
    node = {
        "metadata": {"name": "h1", "resourceVersion": "42", "labels": {"gryvia.io/gpu": "H100"}},
        "spec": {"taints": [{"key": "other", "effect": "NoExecute"}]},
    }
    patch = claim_patch(node, reservation())
    assert patch is not None
    assert patch["metadata"]["resourceVersion"] == "42"
    assert patch["metadata"]["labels"] == {
        "gryvia.io/reserved-for": "night",
        "gryvia.io/reserved-by": "ml",
    }
    assert patch["spec"]["taints"] == [
        {"key": "other", "effect": "NoExecute"},
        {"key": "gryvia.io/reserved", "value": "ml", "effect": "NoSchedule"},
    ]
    done = {
        "metadata": {**node["metadata"], "labels": {**patch["metadata"]["labels"]}},
        "spec": patch["spec"],
    }
    assert claim_patch(done, reservation()) is None
    release = release_patch(done)
    assert release is not None
    assert release["metadata"]["labels"] == {
        "gryvia.io/reserved-for": None,
        "gryvia.io/reserved-by": None,
    }
    assert release["spec"]["taints"] == [{"key": "other", "effect": "NoExecute"}]
    assert release_patch(node) is None


def job(ns: str = "ml-ns", team: str | None = "ml", gpus: int = 8, **ann: str) -> GryviaAIJob:
    builder = make_job("train", namespace=ns).gpus(gpus).gpu_type("H100")
    if team:
        builder.meta(labels={"gryvia.io/team": team})
    return builder.meta(annotations={"gryvia.io/reservation": "night", **ann}).model()


@pytest.mark.parametrize(
    ("found", "state", "team", "verdict"),
    [
        (True, "active", "ml", "Bound"),
        (True, "pending", "ml", "Waiting"),
        (True, "active", "cv", "OwnerMismatch"),
        (True, "expired", "ml", "Ended"),
        (False, None, "ml", "NotFound"),
    ],
)
def test_job_outcome(found: bool, state: str | None, team: str, verdict: str) -> None:
    use = decide(job(team=team), reservation() if found else None, state)
    assert use is not None and use.verdict == verdict


def test_owner_mismatch_names_what_the_team_owner_looks_at() -> None:
    other = decide(job(team="cv"), reservation(), "active")
    unlabelled = decide(job(team=None), reservation(), "active")
    assert other is not None and unlabelled is not None
    assert "(label gryvia.io/team: cv) is not theirs" in other.message
    assert "(no label gryvia.io/team) is not theirs" in unlabelled.message
    assert "has label gryvia.io/team: ml" in unlabelled.message


def test_a_bound_job_tolerates_the_taint_and_selects_the_nodes() -> None:
    use = decide(job(), reservation(), "active")
    out = steered(job(), use)
    assert out.spec.node_selector == {"gryvia.io/reserved-for": "night"}
    assert [t.model_dump(exclude_none=True) for t in out.spec.tolerations or []] == [
        {"key": "gryvia.io/reserved", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}
    ]
    nodes = [held(gpu_node("h1", "H100"), "night"), gpu_node("h2", "H100")]
    assert select_nodes(out, nodes, []).nodes == ("h1",)
    assert select_nodes(job(team="cv"), nodes, []).nodes == ("h2",)  # ordinary: not h1
    mismatch = decide(job(team="cv"), reservation(), "active")
    assert steered(job(team="cv"), mismatch) == job(team="cv")
    placed = decide(job(), reservation(), "expired", placed=True, was_bound=True)
    assert placed is not None and placed.verdict == "Bound"


def test_a_job_that_fits_only_in_another_owners_reservation_says_so() -> None:
    nodes = [held(gpu_node("h1", "H100"), "night"), held(gpu_node("h2", "H100"), "day", "cv")]
    other = job(ns="x", team="x")
    found = reserved_elsewhere(other, nodes)
    assert found is not None and found[0] == "night"  # the first by node name
    assert "h1 (reservation night for ml)" in found[1]
    assert reserved_elsewhere(other, [*nodes, gpu_node("h3", "H100")]) is None
    ctx = WaitContext(reservations={})
    out = wait_status(other, {"phase": "Pending"}, nodes, [], ctx, T0)
    assert out["pending"]["kind"] == "Reservation"
    assert out["pending"]["message"].startswith("fits only on nodes reserved for others")
    waiting = steered(job(), decide(job(), reservation(), "pending"))
    ctx = WaitContext(reservations={"night": "pending"})
    out = wait_status(waiting, {"phase": "Pending"}, [gpu_node("h3", "H100")], [], ctx, T0)
    assert out["pending"]["message"] == "reservation night is pending"
