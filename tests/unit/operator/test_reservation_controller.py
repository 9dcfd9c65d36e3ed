"""The reservation controller on the kind controller, against the in-memory API: the
finalizer it keeps and lets go, the Node writes, the invalid-spec status, the orphan sweep,
and the jobs it wakes."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any, cast

from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import NODES, RESERVATIONS
from gryvia_operator.handlers import reservation
from gryvia_operator.reconcile.views import NodeView
from tests.builders import gpu_node
from tests.unit.operator.fakeapi import FakeApi
from tests.unit.operator.test_reservations import T0, held, stamp

FINALIZER = "gryvia.io/reservation-finalizer"


def node_body(view: NodeView) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": view.name, "labels": dict(view.labels)}}


def res_body(name: str = "night", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaReservation",
        "metadata": {"name": name, "creationTimestamp": stamp(0), "resourceVersion": "1", **meta},
        "spec": {
            "owner": {"type": "team", "name": "ml"},
            "resources": {"gpuType": "H100", "gpuCount": 8},
            "schedule": {"type": "immediate", "endTime": stamp(60)},
        },
    }


def setup(bodies: list[dict[str, Any]], nodes: list[NodeView]) -> tuple[FakeApi, Runtime]:
    api = FakeApi()
    for view in nodes:
        api.put(node_body(view))
    for body in bodies:
        api.put(body)
    rt = Runtime(api=cast(Any, api), clock=lambda: T0 + dt.timedelta(minutes=5))
    rt.indices.attach(
        {
            RESERVATIONS: {("", b["metadata"]["name"]): [b] for b in bodies},
            NODES: {v.name: [v] for v in nodes},
        }
    )
    return api, rt


def one_pass(rt: Runtime) -> float:
    return asyncio.run(reservation.controller(rt).one_pass())


def test_a_pass_keeps_the_finalizer_claims_the_node_and_writes_the_status() -> None:
    api, rt = setup([res_body()], [gpu_node("h1", "H100")])
    rt.waiting.add(("ns", "job"))
    delay = one_pass(rt)
    stored = api.objects[("GryviaReservation", "", "night")]
    assert stored["metadata"]["finalizers"] == [FINALIZER]
    assert stored["status"]["state"] == "active" and stored["status"]["allocatedNodes"] == ["h1"]
    labels = api.objects[("Node", "", "h1")]["metadata"]["labels"]
    assert labels["gryvia.io/reserved-for"] == "night"
    assert len(rt.jobs) == 1  # the state moved: the waiting job looks again
    assert delay == reservation.PASS_SECONDS


def test_a_deleted_reservation_releases_its_nodes_then_its_finalizer() -> None:
    gone = res_body(deletionTimestamp=stamp(3), finalizers=[FINALIZER, "other"])
    api, rt = setup([gone], [held(gpu_node("h1", "H100"), "night")])
    one_pass(rt)
    assert "gryvia.io/reserved-for" not in api.objects[("Node", "", "h1")]["metadata"]["labels"]
    stored = api.objects[("GryviaReservation", "", "night")]
    assert stored["metadata"]["finalizers"] == ["other"]
    assert "status" not in stored


def test_an_invalid_spec_gets_the_invalid_status_and_keeps_its_nodes() -> None:
    bad = res_body()
    bad["spec"]["resources"]["gpuCount"] = -1
    api, rt = setup([bad], [held(gpu_node("h1", "H100"), "night")])
    one_pass(rt)
    status = api.objects[("GryviaReservation", "", "night")]["status"]
    assert status["phase"] == "Invalid" and status["message"]
    assert api.objects[("Node", "", "h1")]["metadata"]["labels"]["gryvia.io/reserved-for"]
    assert ("patch", "Node", "h1") not in api.calls


def test_a_node_held_for_a_reservation_that_is_gone_is_swept() -> None:
    api, rt = setup([], [held(gpu_node("h1", "H100"), "ghost"), gpu_node("h2", "H100")])
    one_pass(rt)
    assert "gryvia.io/reserved-for" not in api.objects[("Node", "", "h1")]["metadata"]["labels"]
    assert ("patch", "Node", "h2") not in api.calls
