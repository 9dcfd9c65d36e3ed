"""One reservation's reconcile (`reconcile.reservation_pass`): turns oldest first whatever
order the reservations come in, guarded Node patches, the status and its times, a window
that cannot be computed, a deleted reservation, and the orphan sweep."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gryvia_operator.api import GryviaReservation
from gryvia_operator.reconcile.reservation_pass import (
    ReservationObserved,
    orphans,
    previous_status,
    reconcile_reservation,
    take_turns,
    touched,
)
from gryvia_operator.reconcile.views import NodeView
from tests.builders import gpu_node
from tests.unit.operator.test_reservations import T0, held, reservation, stamp

NOW = T0 + dt.timedelta(minutes=5)


def body(node: NodeView, version: str = "7") -> dict[str, Any]:
    """The Node as a GET returns it (labels and resourceVersion)."""
    return {
        "metadata": {"name": node.name, "resourceVersion": version, "labels": dict(node.labels)}
    }


def with_status(res: GryviaReservation, status: dict[str, Any]) -> GryviaReservation:
    return GryviaReservation.model_validate(
        {**res.model_dump(mode="json", exclude_none=True), "status": status}
    )


def observed(
    reservations: list[GryviaReservation], nodes: list[NodeView], read: bool = True
) -> ReservationObserved:
    bodies = {n.name: body(n) for n in nodes} if read else {}
    return ReservationObserved(tuple(reservations), tuple(nodes), bodies)


def test_the_older_reservation_claims_first_whatever_the_order() -> None:
    nodes = [gpu_node("h1", "H100"), gpu_node("h2", "H100")]
    older = reservation("b-older", creationTimestamp=stamp(0))
    newer = reservation("a-newer", creationTimestamp=stamp(1))
    for order in ([older, newer], [newer, older]):
        turns = take_turns(order, nodes, NOW)
        assert (turns["b-older"].chosen, turns["a-newer"].chosen) == (("h1",), ("h2",))
    seen = observed([newer, older], nodes)
    plan = reconcile_reservation(newer, seen, NOW)
    assert [name for name, _ in plan.node_patches] == ["h2"]
    assert plan.status["allocatedNodes"] == ["h2"] and plan.status["state"] == "active"
    assert touched(newer, seen, NOW) == ["h2"]


def test_claims_are_guarded_and_the_status_says_when_the_nodes_were_taken() -> None:
    nodes = [gpu_node("h1", "H100")]
    plan = reconcile_reservation(reservation(), observed([], nodes), NOW)
    (name, patch), *rest = plan.node_patches
    assert (name, rest) == ("h1", [])
    assert patch["metadata"]["resourceVersion"] == "7"
    assert patch["metadata"]["labels"]["gryvia.io/reserved-for"] == "night"
    assert plan.status == {
        "state": "active",
        "allocatedNodes": ["h1"],
        "allocatedGPUs": 8,
        "message": f"held until {stamp(60)}",
        "actualStartTime": "2026-12-01T21:05:00Z",
        "actualEndTime": None,
    }
    assert plan.next_change == T0 + dt.timedelta(minutes=60)
    unread = reconcile_reservation(reservation(), observed([], nodes, read=False), NOW)
    assert unread.node_patches == [] and unread.status["allocatedNodes"] == ["h1"]


def test_a_status_fed_back_is_written_the_same_so_the_writer_skips_it() -> None:
    nodes = [held(gpu_node("h1", "H100"), "night")]
    first = reconcile_reservation(reservation(), observed([], nodes), NOW).status
    again = with_status(reservation(), {k: v for k, v in first.items() if v is not None})
    later = NOW + dt.timedelta(minutes=1)
    assert reconcile_reservation(again, observed([], nodes), later).status == first
    invalid = with_status(reservation(), {**first, "phase": "Invalid", "message": "bad"})
    assert "phase" not in previous_status(invalid)


def test_a_closed_window_releases_first_and_records_the_end() -> None:
    nodes = [held(gpu_node("h1", "H100"), "night"), gpu_node("h2", "H100")]
    started = with_status(reservation(), {"state": "active", "actualStartTime": stamp(1)})
    after = T0 + dt.timedelta(minutes=61)
    plan = reconcile_reservation(started, observed([], nodes), after)
    assert [name for name, _ in plan.node_patches] == ["h1"]
    assert plan.node_patches[0][1]["metadata"]["labels"]["gryvia.io/reserved-for"] is None
    assert plan.status["state"] == "expired" and plan.status["allocatedNodes"] == []
    assert plan.status["actualStartTime"] == stamp(1)
    assert plan.status["actualEndTime"] == "2026-12-01T22:01:00Z"


def test_a_window_it_cannot_compute_keeps_the_nodes_and_says_why() -> None:
    bad = reservation(schedule={"type": "scheduled", "startTime": stamp(0)})
    before = with_status(bad, {"state": "active", "allocatedNodes": ["h1"], "allocatedGPUs": 8})
    nodes = [held(gpu_node("h1", "H100"), "night")]
    plan = reconcile_reservation(before, observed([], nodes), NOW)
    assert plan.node_patches == []
    assert plan.status == {
        "state": "pending",
        "allocatedNodes": ["h1"],
        "allocatedGPUs": 8,
        "message": "schedule.startTime and schedule.endTime are required",
    }


def test_a_deleted_reservation_releases_every_node_it_holds() -> None:
    gone = reservation(deletionTimestamp=stamp(2))
    nodes = [held(gpu_node("h1", "H100"), "night"), held(gpu_node("h2", "H100"), "other")]
    seen = observed([], nodes)
    assert touched(gone, seen, NOW) == ["h1"]
    plan = reconcile_reservation(gone, seen, NOW)
    assert [name for name, _ in plan.node_patches] == ["h1"]
    assert "night" not in take_turns([gone], nodes, NOW)


def test_orphans_are_nodes_held_for_a_reservation_that_is_gone() -> None:
    nodes = [
        held(gpu_node("h1", "H100"), "night"),
        held(gpu_node("h2", "H100"), "ghost"),
        gpu_node("h3", "H100"),
    ]
    assert orphans(nodes, ["night"]) == ["h2"]
    assert orphans(nodes, ["night", "ghost"]) == []
