"""One GPU sharing policy's reconcile and the sweep after a pass (`reconcile.gpusharing`),
and the controller on the kind controller against the in-memory API: the ConfigMap once per
pass, node labels, a status written only when it says something new, the invalid status."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta
from typing import Any, cast

from gryvia_operator.api.gpusharing import GryviaGPUSharingPolicy
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import SHARING_NODES, SHARING_POLICIES
from gryvia_operator.handlers import gpusharing
from gryvia_operator.handlers.gpusharing import slim_node
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.gpusharing import SharingObserved, reconcile_policy, sweep
from tests.unit.operator.fakeapi import FakeApi
from tests.unit.operator.test_gpusharing import NOW, node, policy

SHARING = "gryvia.io/gpu-sharing"


def labelled(name: str, owner: str, **labels: str) -> dict[str, Any]:
    return node(name, **{SHARING: owner}, **labels)


def test_a_policy_labels_what_it_covers_and_unlabels_what_it_lost() -> None:
    nodes = (
        node("a", pool="shared"),  # y covers it (first by name)
        labelled("b", "z"),  # z's, no longer selected: z unlabels it
        labelled("c", "y", pool="shared"),  # z's view: y's node, not z's business
        labelled("d", "gone"),  # a policy that is gone: the sweep's
    )
    seen = SharingObserved((policy("y"), policy("z")), nodes)
    z = reconcile_policy(policy("z"), seen, NOW)
    assert [name for name, _ in z.label_patches] == ["b"]
    assert set(z.label_patches[0][1].values()) == {None}
    assert (
        z.status["nodes"] == []
        and z.status["conditions"][0]["message"] == "0 node(s) use gryvia-ts-4"
    )
    y = reconcile_policy(policy("y"), seen, NOW)
    assert [name for name, _ in y.label_patches] == ["a", "c"]
    assert y.status["nodes"] == ["a", "c"]
    failed = reconcile_policy(policy("y"), replace(seen, error="namespace x not found"), NOW)
    assert [name for name, _ in failed.label_patches] == ["c"]  # every node loses its labels
    assert failed.status["conditions"][0]["reason"] == "ConfigMapFailed"


def test_the_sweep_unlabels_nodes_of_gone_policies_and_simulates_the_plugin() -> None:
    nodes = (node("a", 2, pool="shared"), labelled("d", "gone"), labelled("e", "y"), node("f"))
    labels, statuses = sweep(SharingObserved((policy("y"),), nodes, simulate=True))
    assert [name for name, _ in labels] == ["d"]
    assert [name for name, _ in statuses] == ["a"]  # 2 physical x 4 replicas
    assert statuses[0][1]["status"]["capacity"]["nvidia.com/gpu"] == "8"
    assert sweep(SharingObserved((policy("y"),), nodes))[1] == []  # no simulation


def test_the_status_keeps_its_time_while_it_says_the_same() -> None:
    seen = SharingObserved((policy("y"),), (node("a", pool="shared"),))
    first = reconcile_policy(policy("y"), seen, NOW).status
    had = GryviaGPUSharingPolicy.model_validate(
        {**policy("y").model_dump(mode="json", exclude_none=True), "status": first}
    )
    later = NOW + timedelta(seconds=30)
    assert reconcile_policy(had, seen, later).status == first
    moved = replace(seen, nodes=(*seen.nodes, node("b", pool="shared")))
    changed = reconcile_policy(had, moved, later).status
    assert changed["nodes"] == ["a", "b"]
    assert changed["conditions"][0]["lastTransitionTime"] == "2026-12-01T12:00:30Z"


def policy_body(name: str, replicas: int = 4) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaGPUSharingPolicy",
        "metadata": {"name": name, "resourceVersion": "1"},
        "spec": {
            "strategy": "time-slicing",
            "nodeSelector": {"matchLabels": {"pool": "shared"}},
            "timeSlicing": {"replicas": replicas},
        },
    }


def test_the_controller_writes_the_configmap_labels_and_status_once() -> None:
    api = FakeApi()
    shared, bad = node("a", pool="shared"), policy_body("bad", replicas=0)
    api.put(shared)
    for body in (policy_body("y"), bad):
        api.put(body)
    config = ReconcileConfig(gpu_sharing=True)
    rt = Runtime(api=cast(Any, api), config=config, clock=lambda: NOW)
    index = {("", "y"): [policy_body("y")], ("", "bad"): [bad]}
    rt.indices.attach({SHARING_POLICIES: index, SHARING_NODES: {"a": [slim_node(shared)]}})
    ctl = gpusharing.controller(rt)
    asyncio.run(ctl.one_pass())
    cm = api.objects[("ConfigMap", "gpu-operator", "gryvia-device-plugin-config")]
    assert list(cm["data"]) == ["gryvia-ts-4"]
    assert api.objects[("Node", "", "a")]["metadata"]["labels"][SHARING] == "y"
    assert api.objects[("GryviaGPUSharingPolicy", "", "y")]["status"]["nodes"] == ["a"]
    invalid = api.objects[("GryviaGPUSharingPolicy", "", "bad")]["status"]
    assert invalid["phase"] == "Invalid" and invalid["message"]
    labelled_now = slim_node(api.objects[("Node", "", "a")])
    rt.indices.attach({SHARING_NODES: {"a": [labelled_now]}})  # the watch shows the labels
    calls = len(api.calls)
    asyncio.run(ctl.one_pass())
    assert api.calls[calls:] == []  # nothing new: no write, no ConfigMap
