"""Issue 20: the operator writes status.pending / estimatedStart once per change, drops them
in the write that moves the job on, and re-queues waiting jobs when a job starts or ends."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, CHILDREN, NODES, PODS_BY_NODE
from gryvia_operator.handlers import aijob
from tests.builders import gpu_node, make_job, make_pod
from tests.unit.operator.fakeapi import FakeApi

NOW = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)


def _runtime(api: FakeApi, indexes: dict[str, dict[Any, list[Any]]]) -> Runtime:
    rt = Runtime(api=cast(Any, api), clock=lambda: NOW, post_event=lambda obj, e: None)
    full: dict[str, dict[Any, list[Any]]] = {AIJOBS: {}, NODES: {}, PODS_BY_NODE: {}}
    full.update({v: {} for v in CHILDREN.values()})
    full.update(indexes)
    rt.indices.attach(full)
    for values in full[AIJOBS].values():
        for body in values:
            api.put(body)
    return rt


def _status_writes(api: FakeApi, name: str) -> int:
    return sum(1 for call in api.calls if call == ("patch/status", "GryviaAIJob", name))


async def test_a_waiting_job_is_written_once_and_cleared_when_it_starts() -> None:
    api = FakeApi()
    hog = make_job("hog").gpus(8).gpu_type("H100").timeout("30m").phase("Running")
    hog = hog.status(startTime="2026-12-01T13:50:00Z", nodesAllocated=["n"])
    want = make_job("want").gpus(8).gpu_type("H100").obj()
    pod = make_pod("hog-0").on("n").gpus(8).job("hog").view()
    indexes: dict[str, dict[Any, list[Any]]] = {
        AIJOBS: {("ml", "hog"): [hog.obj()], ("ml", "want"): [want]},
        NODES: {"n": [gpu_node("n", "H100")]},
        PODS_BY_NODE: {"n": [pod]},
    }
    rt = _runtime(api, indexes)
    await aijob.reconcile_key(rt, ("ml", "want"))
    status = api.objects[("GryviaAIJob", "ml", "want")]["status"]
    assert status["phase"] == "Pending"
    assert status["pending"]["kind"] == "Resources"
    assert status["pending"]["holders"][0]["expectedEnd"] == "2026-12-01T14:20:00Z"
    assert status["estimatedStart"] == {
        "earliest": "2026-12-01T14:20:00Z",
        "likely": "2026-12-01T14:20:00Z",
    }
    assert _status_writes(api, "want") == 1
    for _ in range(3):  # nothing changed: no more writes
        await aijob.reconcile_key(rt, ("ml", "want"))
    assert _status_writes(api, "want") == 1
    # the hog ends and its pod goes: one write moves it on and drops both keys
    rt.indices.attach({PODS_BY_NODE: {}})
    await aijob.reconcile_key(rt, ("ml", "want"))
    assert _status_writes(api, "want") == 2
    status = api.objects[("GryviaAIJob", "ml", "want")]["status"]
    assert status["phase"] == "Scheduling"
    assert "pending" not in status or status["pending"] is None
    assert "estimatedStart" not in status or status["estimatedStart"] is None


async def test_a_phase_change_requeues_the_waiting_jobs() -> None:
    api = FakeApi()
    rt = _runtime(api, {AIJOBS: {("ml", "t"): [make_job("t").gpus(8).gpu_type("V100").obj()]}})
    rt.waiting.add(("ml", "other"))
    await aijob.reconcile_key(rt, ("ml", "t"))  # new -> Pending: a phase change
    assert ("ml", "other") in rt.jobs._dirty
