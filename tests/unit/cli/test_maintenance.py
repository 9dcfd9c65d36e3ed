"""`gryvia maintenance`: which pods a drain evicts, the start and end patches, the eviction
loop with refusals (PodDisruptionBudgets) and its timeout, the list rows, the commands
against a fake cluster, and capacity and queue naming nodes in maintenance."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gryvia_cli.core.capacity import compute_capacity
from gryvia_cli.core.maintenance import (
    END_PATCH,
    DrainPlan,
    DrainReport,
    Outcome,
    PodRef,
    drain,
    drain_plan,
    list_row,
    marked_nodes,
    refusal_text,
    start_patch,
    still_there,
)
from gryvia_cli.core.nodes import gpu_nodes
from gryvia_cli.errors import EXIT_NOT_DRAINED
from gryvia_cli.kube import resources as r
from gryvia_operator.api.maintenance import active_reason, maintenance_of
from gryvia_operator.api.names import ANNOTATION_MAINTENANCE, ANNOTATION_MAINTENANCE_REASON
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import NOW, make_node, make_pod, run

PDB_429 = {
    "kind": "Status",
    "status": "Failure",
    "message": "Cannot evict pod as it would violate the pod's disruption budget.",
    "reason": "TooManyRequests",
    "details": {
        "causes": [
            {
                "reason": "DisruptionBudget",
                "message": "The disruption budget train-pdb needs 1 healthy pods and has 1 "
                "currently",
            }
        ]
    },
    "code": 429,
}


def _pod(name: str, node: str = "gpu-1", **meta: Any) -> dict[str, Any]:
    pod = make_pod(name).on(node).obj()
    pod["metadata"].update(meta)
    return pod


def test_the_plan_skips_daemonset_mirror_finished_and_terminating_pods() -> None:
    pods = [
        _pod("train-0"),
        _pod("dcgm", ownerReferences=[{"kind": "DaemonSet", "name": "dcgm"}]),
        _pod("static", annotations={"kubernetes.io/config.mirror": "abc"}),
        make_pod("done").on("gpu-1").phase("Succeeded").obj(),
        _pod("leaving", deletionTimestamp="2026-12-05T07:00:00Z"),
        _pod("elsewhere", node="gpu-2"),
        _pod("web", ownerReferences=[{"kind": "ReplicaSet", "name": "web-1"}]),
    ]
    plan = drain_plan(pods, "gpu-1")
    assert [p.name for p in plan.evict] == ["train-0", "web"]
    assert {p.name: why for p, why in plan.skipped} == {
        "dcgm": "DaemonSet pod",
        "static": "mirror pod",
        "done": "finished (Succeeded)",
        "leaving": "terminating",
    }


def test_start_cordons_keeps_the_first_start_and_needs_a_reason() -> None:
    node = make_node("gpu-1").obj()
    patch = start_patch(node, "XID 79", NOW)
    assert patch["spec"] == {"unschedulable": True}
    notes = patch["metadata"]["annotations"]
    assert notes == {
        ANNOTATION_MAINTENANCE: "2025-06-01T12:00:00Z",
        ANNOTATION_MAINTENANCE_REASON: "XID 79",
    }
    marked = make_node("gpu-1").in_maintenance("old reason", "2025-05-31T09:00:00Z").obj()
    again = start_patch(marked, "", NOW)["metadata"]["annotations"]
    assert again[ANNOTATION_MAINTENANCE] == "2025-05-31T09:00:00Z"
    assert again[ANNOTATION_MAINTENANCE_REASON] == "old reason"
    with pytest.raises(ValueError, match="--reason"):
        start_patch(node, "  ", NOW)
    assert END_PATCH["spec"] == {"unschedulable": None}
    assert set(END_PATCH["metadata"]["annotations"].values()) == {None}


def test_only_a_cordoned_marked_node_is_in_maintenance() -> None:
    marked = make_node("gpu-1").in_maintenance("PSU").obj()
    assert active_reason(marked) == "PSU"
    marked["spec"]["unschedulable"] = False
    assert active_reason(marked) is None and maintenance_of(marked) is not None
    assert active_reason(make_node("gpu-2").cordoned().obj()) is None


def test_refusals_name_the_budget() -> None:
    assert refusal_text(PDB_429, "ml") == (
        "ml/train-pdb",
        "The disruption budget train-pdb needs 1 healthy pods and has 1 currently",
    )
    assert refusal_text({"message": "Too many requests"}, "ml") == ("", "Too many requests")


class Clock:
    """A clock that `sleep` moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_drain_retries_refused_pods_until_the_timeout_then_reports_them() -> None:
    a, b, c = PodRef("ml", "a"), PodRef("ml", "b"), PodRef("ml", "c")
    calls: dict[str, int] = {}
    budget = Outcome("refused", "ml/pdb", "needs 1 healthy pods")

    def evict(pod: PodRef) -> Outcome:
        calls[pod.name] = calls.get(pod.name, 0) + 1
        if pod is a:
            return Outcome("evicted")
        if pod is b:  # the budget allows it on the third try
            return Outcome("evicted") if calls["b"] >= 3 else budget
        return budget

    clock = Clock()
    plan = DrainPlan((a, b, c), ((PodRef("sys", "dcgm"), "DaemonSet pod"),))
    heard: list[tuple[str, str]] = []
    report = drain(
        plan,
        evict,
        DrainReport("gpu-1", "t", "r"),
        timeout=10,
        interval=2,
        clock=clock,
        sleep=clock.sleep,
        on_outcome=lambda pod, o: heard.append((pod.name, o.kind)),
    )
    assert report.evicted == [a, b] and not report.ok
    assert [(p.name, o.budget) for p, o in report.not_evicted] == [("c", "ml/pdb")]
    assert calls == {"a": 1, "b": 3, "c": 6}  # at 0, 2, 4, 6, 8 and 10 s
    assert heard == [("a", "evicted"), ("b", "evicted"), ("c", "refused")]
    data = report.as_dict()
    assert data["kind"] == "MaintenanceReport" and data["drained"] is True
    assert data["notEvicted"] == [
        {"namespace": "ml", "name": "c", "budget": "ml/pdb", "reason": "needs 1 healthy pods"}
    ]
    assert data["skipped"] == [{"namespace": "sys", "name": "dcgm", "reason": "DaemonSet pod"}]


def test_a_final_refusal_is_not_retried_and_gone_pods_are_fine() -> None:
    a, b = PodRef("ml", "a"), PodRef("ml", "b")
    outcomes = {
        "a": Outcome("failed", "", "more than one PodDisruptionBudget"),
        "b": Outcome("gone"),
    }
    clock = Clock()
    report = drain(
        DrainPlan((a, b), ()),
        lambda pod: outcomes[pod.name],
        DrainReport("gpu-1", "t", "r"),
        timeout=60,
        clock=clock,
        sleep=clock.sleep,
    )
    assert clock.now == 0 and report.evicted == []
    assert [p.name for p, _ in report.not_evicted] == ["a"]


def test_still_there_compares_uids() -> None:
    evicted = [PodRef("ml", "web-0", "u1"), PodRef("ml", "job-0", "u2")]
    pods = [_pod("web-0", namespace="ml", uid="u9"), _pod("job-0", namespace="ml", uid="u2")]
    assert still_there(evicted, pods) == [PodRef("ml", "job-0", "u2")]


def test_list_rows_give_age_reason_and_status() -> None:
    nodes = [
        make_node("gpu-2").gpus(8).gpu_type("H100").in_maintenance("PSU", "2025-06-01T09:00:00Z"),
        make_node("gpu-1").in_maintenance("", "2025-06-01T11:59:00Z"),
        make_node("gpu-3"),
    ]
    objs = [n.obj() for n in nodes]
    objs[1]["spec"]["unschedulable"] = False
    marked = marked_nodes(objs)
    assert [n.name for n in marked] == ["gpu-1", "gpu-2"]
    rows = [[str(c) for c in list_row(n, NOW, wide=True)] for n in marked]
    assert rows == [
        ["gpu-1", "2025-06-01T11:59:00Z", "60s", "-", "uncordoned", "-", "-"],
        ["gpu-2", "2025-06-01T09:00:00Z", "3h", "PSU", "in maintenance", "H100", "8"],
    ]
    assert marked[1].as_dict(NOW)["ageSeconds"] == 3 * 3600


def test_capacity_names_nodes_in_maintenance_and_counts_none_of_their_gpus_free() -> None:
    nodes = [
        make_node("gpu-1").gpus(8).product().in_maintenance("XID 79 on GPU 2").obj(),
        make_node("gpu-2").gpus(8).product().obj(),
    ]
    supply = gpu_nodes([], nodes)
    report = compute_capacity(supply, {}, [], [])
    (row,) = report.types
    assert (row.total, row.free, row.unavailable) == (16, 8, 8)
    assert "node gpu-1 in maintenance: XID 79 on GPU 2" in row.notes
    assert row.as_dict()["maintenance"] == ["node gpu-1 in maintenance: XID 79 on GPU 2"]
    by_name = {n.name: n.as_dict() for n in report.nodes}
    assert by_name["gpu-1"]["maintenance"] == "XID 79 on GPU 2"
    assert by_name["gpu-2"]["maintenance"] is None


class EvictingFake(FakeAccess):
    """The fake cluster, plus the Eviction API: `refuse` names pods a budget protects."""

    def __init__(self, *objects: dict[str, Any], refuse: set[str]) -> None:
        super().__init__(*objects)
        self.refuse = refuse
        self.evicted: list[str] = []

    def _json(self, method: str, path: str, **kw: Any) -> Any:
        from gryvia_cli.kube.errors import translate_api_exception

        assert method == "POST" and path.endswith("/eviction"), path
        assert kw["body"]["apiVersion"] == "policy/v1" and kw["body"]["kind"] == "Eviction"
        name = kw["name"]
        if name in self.refuse:
            raise translate_api_exception(429, json.dumps(PDB_429), resource=None, name=name)
        self.evicted.append(name)
        self.objects = [o for o in self.objects if o["metadata"].get("name") != name]
        return {}


def _cluster(refuse: set[str]) -> EvictingFake:
    return EvictingFake(
        make_node("gpu-1").gpus(8).product().obj(),
        _pod("train-0"),
        _pod("web-0"),
        _pod("dcgm", ownerReferences=[{"kind": "DaemonSet", "name": "dcgm"}]),
        refuse=refuse,
    )


def test_start_drain_end_and_list_against_a_fake_cluster() -> None:
    fake = _cluster({"train-0"})
    done = run(
        ["maintenance", "start", "gpu-1", "--reason", "XID 79", "--drain", "--timeout", "1s"],
        fake,
    )
    assert done.exit_code == EXIT_NOT_DRAINED, done.output
    assert fake.evicted == ["web-0"]
    assert "not evicted ml/train-0: PodDisruptionBudget ml/train-pdb" in done.output
    assert "skipped ml/dcgm (DaemonSet pod)" in done.output
    node = fake.get(r.NODE, "gpu-1")
    assert active_reason(node) == "XID 79"

    listed = run(["maintenance", "list", "-o", "json"], fake)
    assert listed.exit_code == 0, listed.output
    (item,) = json.loads(listed.output)["items"]
    assert (item["node"], item["reason"], item["cordoned"]) == ("gpu-1", "XID 79", True)
    assert "in maintenance" in run(["maintenance", "list"], fake).output

    capacity = run(["capacity"], fake)
    assert "node gpu-1 in maintenance: XID 79" in capacity.output

    ended = run(["maintenance", "end", "gpu-1"], fake)
    assert ended.exit_code == 0, ended.output
    assert maintenance_of(fake.objects[0]) is None and not fake.objects[0]["spec"].get(
        "unschedulable"
    )
    assert run(["maintenance", "end", "gpu-1"], fake).exit_code == 1
    assert "No nodes in maintenance" in run(["maintenance", "list"], fake).output


def test_start_without_a_reason_or_with_a_bad_timeout_is_a_usage_error() -> None:
    fake = _cluster(set())
    done = run(["maintenance", "start", "gpu-1"], fake)
    assert done.exit_code == 2 and "--reason" in done.output
    bad = run(["maintenance", "start", "gpu-1", "--reason", "x", "--timeout", "soon"], fake)
    assert bad.exit_code == 2 and "--timeout" in bad.output
    drained = run(["maintenance", "start", "gpu-1", "--reason", "x", "--drain", "-o", "json"], fake)
    assert drained.exit_code == 0, drained.output
    report = json.loads(drained.output)
    assert sorted(p["name"] for p in report["evicted"]) == ["train-0", "web-0"]


def test_the_queue_reason_names_the_nodes_of_the_type_in_maintenance() -> None:
    from gryvia_cli.core.jobs import summarize_job
    from gryvia_cli.core.queue import wait_reason
    from tests.unit.cli.helpers import h100, make_job, stamp

    maintained = h100("h0")
    maintained["spec"]["unschedulable"] = True
    maintained["metadata"]["annotations"] = {
        ANNOTATION_MAINTENANCE: "2025-06-01T09:00:00Z",
        ANNOTATION_MAINTENANCE_REASON: "XID 79",
    }
    nodes = gpu_nodes([], [maintained, h100("h1")])
    job = summarize_job(stamp(make_job("two").gpus(8).gpu_type("H100").distributed(2).obj(), 60))
    reason = wait_reason(job, nodes, {"h1": 8}, None)
    assert reason.startswith("waiting for GPUs: needs 2 x 8 H100, 0 free now")
    assert reason.endswith("; node h0 in maintenance: XID 79")
