"""Issue 38, failure 9: a job that fits only on nodes with a taint it does not tolerate waits
with a reason that names the taint and the nodes; a GPU type no node has is named with the
types that exist."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.api.jobfacts import job_facts
from gryvia_operator.api.taints import Taint, tolerates
from gryvia_operator.reconcile.pending import WaitContext, wait_status
from gryvia_operator.reconcile.placement import select_nodes
from tests.builders import make_job, make_node

T0 = dt.datetime(2026, 12, 1, 14, 0, tzinfo=dt.UTC)


def _node(name: str, gpu_type: str = "H100") -> Any:
    return make_node(name).gpus(8).gpu_type(gpu_type).label("gryvia.io/gpu-count", "8")


TAINTED = [
    _node("h1").taint("dedicated", "inference").view(),
    _node("h2").taint("dedicated", "inference", "NoExecute").view(),
    _node("l1", "L4").view(),
]


def _waiting(tolerations: list[dict[str, Any]] | None = None) -> tuple[GryviaAIJob, WaitContext]:
    body = make_job("train").gpus(8).gpu_type("H100").obj()
    if tolerations is not None:
        body["spec"]["tolerations"] = tolerations
    return GryviaAIJob.model_validate(body), WaitContext(jobs=(job_facts(body),))


def test_the_reason_names_the_taint_and_the_nodes_it_keeps_the_job_off() -> None:
    job, ctx = _waiting()
    out = wait_status(job, {"phase": "Pending"}, TAINTED, [], ctx, T0)
    message = out["pending"]["message"]
    assert out["pending"]["kind"] == "Resources"
    assert "dedicated=inference:NoSchedule" in message and "h1" in message
    assert "dedicated=inference:NoExecute" in message and "h2" in message
    assert "spec.tolerations" in message
    assert "l1" not in message  # an L4 node never could take it: not named
    assert out["estimatedStart"]["unknownReason"] == message
    miss = select_nodes(job, TAINTED, [])
    assert not miss.ok and "dedicated=inference" in miss.message


def test_a_job_that_tolerates_the_taint_is_placed_and_waits_for_nothing() -> None:
    job, ctx = _waiting([{"key": "dedicated", "operator": "Exists"}])
    assert select_nodes(job, TAINTED, []).nodes in (("h1",), ("h2",))
    out = wait_status(job, {"phase": "Pending"}, TAINTED, [], ctx, T0)
    assert out["pending"]["freeNow"] == 16
    assert "taint" not in out["pending"]["message"]


def test_the_kubernetes_matching_rule() -> None:
    taint = Taint("dedicated", "inference", "NoSchedule")
    assert tolerates({"operator": "Exists"}, taint)  # empty key, Exists: every taint
    assert not tolerates({"key": "", "operator": "Equal"}, taint)
    assert tolerates({"key": "dedicated", "value": "inference"}, taint)  # Equal by default
    assert not tolerates({"key": "dedicated", "value": "training"}, taint)
    assert tolerates({"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}, taint)
    assert not tolerates({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}, taint)
    assert str(Taint("gpu", "", "NoSchedule")) == "gpu:NoSchedule"


def test_the_lifecycle_controllers_taints_and_soft_taints_are_not_blockers() -> None:
    node = (
        _node("h1")
        .taint("node.kubernetes.io/unschedulable")
        .taint("dedicated", "x", "PreferNoSchedule")
        .view()
    )
    assert node.taints == ()


def test_a_gpu_type_no_node_has_is_named_with_the_types_that_exist() -> None:
    body = make_job("b").gpus(8).gpu_type("B200").obj()
    job, ctx = GryviaAIJob.model_validate(body), WaitContext(jobs=(job_facts(body),))
    out = wait_status(job, {"phase": "Pending"}, TAINTED, [], ctx, T0)
    assert out["pending"]["kind"] == "NoSuchGPUType"
    assert out["pending"]["message"] == (
        'no node has GPU type "B200" (types here: H100, L4) and no catalog SKU prices it'
    )


def test_cordoned_and_not_ready_nodes_are_named_in_the_reason() -> None:
    nodes = [_node("h1").cordoned().view(), _node("h2").not_ready().view()]
    job, ctx = _waiting()
    out = wait_status(job, {"phase": "Pending"}, nodes, [], ctx, T0)
    assert out["pending"]["message"] == (
        "needs 8 H100 on 1 node(s); the nodes that could take its pods are out of service: "
        "h1 is cordoned; h2 is not Ready"
    )


def test_a_node_in_maintenance_is_named_with_its_reason() -> None:
    nodes = [_node("h1").in_maintenance("XID 79 on GPU 3").view(), _node("h2").cordoned().view()]
    job, ctx = _waiting()
    out = wait_status(job, {"phase": "Pending"}, nodes, [], ctx, T0)
    assert out["pending"]["message"] == (
        "needs 8 H100 on 1 node(s); the nodes that could take its pods are out of service: "
        "h1 in maintenance: XID 79 on GPU 3; h2 is cordoned"
    )
    miss = select_nodes(job, nodes, [])
    assert not miss.ok and "in maintenance: XID 79 on GPU 3" in miss.message


def test_an_uncordoned_node_with_leftover_marks_is_not_in_maintenance() -> None:
    node = _node("h1").in_maintenance("done").obj()
    node["spec"]["unschedulable"] = False
    from gryvia_operator.reconcile.views import NodeView

    assert NodeView.from_node(node).maintenance is None
    job, _ = _waiting()
    assert select_nodes(job, [NodeView.from_node(node)], []).nodes == ("h1",)
