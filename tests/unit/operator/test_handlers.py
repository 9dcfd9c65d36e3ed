"""The thin handlers against a fake access layer: reading indexes, writing children and
status, adopting, conflicts, registration, and the webhook's HTTP surface."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any, cast

import kopf
import pytest
from aiohttp.test_utils import TestClient, TestServer

from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, CHILDREN, GPUNODES, NODES
from gryvia_operator.handlers import aijob, node
from gryvia_operator.main import JsonFormatter
from gryvia_operator.reconcile.children import build_batch_job
from gryvia_operator.reconcile.status import JobEvent
from gryvia_operator.reconcile.views import ChildView
from gryvia_operator.webhook.review import AIJOB_PATH, USAGE_RECORD_PATH
from gryvia_operator.webhook.server import TlsFiles, WebhookServer
from tests.builders import gpu_node, make_job, make_node
from tests.unit.operator.fakeapi import FakeApi

NOW = datetime(2025, 3, 1, tzinfo=UTC)


def _runtime(
    api: FakeApi, indexes: dict[str, dict[Any, list[Any]]] | None = None
) -> tuple[Runtime, list[JobEvent]]:
    events: list[JobEvent] = []
    rt = Runtime(api=cast(Any, api), clock=lambda: NOW, post_event=lambda obj, e: events.append(e))
    full: dict[str, dict[Any, list[Any]]] = {AIJOBS: {}, NODES: {}, GPUNODES: {}}
    full.update({v: {} for v in CHILDREN.values()})
    full.update(indexes or {})
    rt.indices.attach(full)
    for values in full[AIJOBS].values():
        for body in values:
            api.put(body)
    return rt, events


async def test_new_job_gets_children_status_and_an_event() -> None:
    api = FakeApi()
    body = make_job("t").gpus(8).gpu_type("H100").obj()
    rt, events = _runtime(
        api, {AIJOBS: {("ml", "t"): [body]}, NODES: {"n": [gpu_node("n", "H100")]}}
    )
    await aijob.reconcile_key(rt, ("ml", "t"))
    assert ("create", "Service", "t-headless") in api.calls
    assert ("create", "Job", "t") in api.calls
    status = api.objects[("GryviaAIJob", "ml", "t")]["status"]
    assert status["phase"] == "Scheduling"
    assert status["nodesAllocated"] == ["n"]
    assert [e.reason for e in events] == ["Scheduling"]
    # a second reconcile before the watch shows the writes: nothing new is written
    calls = len(api.calls)
    await aijob.reconcile_key(rt, ("ml", "t"))
    assert api.calls[calls:] == []


async def test_existing_child_of_this_job_is_adopted_not_duplicated() -> None:
    api = FakeApi()
    job = make_job("t").gpus(0)
    existing = build_batch_job(job.model())
    api.put({**existing, "metadata": {**existing["metadata"], "resourceVersion": "7", "uid": "j"}})
    rt, _ = _runtime(api, {AIJOBS: {("ml", "t"): [job.obj()]}})
    await aijob.reconcile_key(rt, ("ml", "t"))
    assert ("get", "Job", "t") in api.calls
    assert [c for c in api.calls if c[0] == "create"] == [
        ("create", "Service", "t-headless"),
        ("create", "Job", "t"),
    ]
    assert api.objects[("GryviaAIJob", "ml", "t")]["status"]["phase"] == "Scheduling"


async def test_foreign_object_blocks_with_a_message() -> None:
    api = FakeApi()
    api.put({"kind": "Service", "metadata": {"name": "t-headless", "namespace": "ml"}})
    job = make_job("t").gpus(0)
    rt, _ = _runtime(api, {AIJOBS: {("ml", "t"): [job.obj()]}})
    await aijob.reconcile_key(rt, ("ml", "t"))
    status = api.objects[("GryviaAIJob", "ml", "t")]["status"]
    assert (
        status["message"]
        == "Service ml/t-headless already exists and is not owned by this GryviaAIJob"
    )


async def test_child_of_a_previous_job_of_the_same_name_waits() -> None:
    api = FakeApi()
    job = make_job("t").gpus(0)
    old = ChildView.from_object(
        {
            "kind": "Job",
            "metadata": {
                "name": "t",
                "namespace": "ml",
                "ownerReferences": [
                    {"kind": "GryviaAIJob", "name": "t", "uid": "old", "controller": True}
                ],
            },
        }
    )
    rt, _ = _runtime(
        api, {AIJOBS: {("ml", "t"): [job.obj()]}, CHILDREN["Job"]: {("ml", "t"): [old]}}
    )
    await aijob.reconcile_key(rt, ("ml", "t"))
    assert ("create", "Job", "t") not in api.calls
    assert "deleted GryviaAIJob" in api.objects[("GryviaAIJob", "ml", "t")]["status"]["message"]


async def test_status_conflict_is_retried() -> None:
    api = FakeApi()
    api.conflict_next_status = True
    rt, events = _runtime(api, {AIJOBS: {("ml", "t"): [make_job("t").gpus(0).obj()]}})
    with pytest.raises(kopf.TemporaryError) as raised:
        await aijob.reconcile_key(rt, ("ml", "t"))
    assert raised.value.delay == aijob.CONFLICT_RETRY_SECONDS
    assert events == []
    conflicts = rt.metrics.value(
        "gryvia_operator_reconcile_total", controller="aijob", result="conflict"
    )
    assert conflicts == 1


async def test_waiting_jobs_are_tracked_and_deleted_jobs_forgotten() -> None:
    api = FakeApi()
    rt, _ = _runtime(api, {AIJOBS: {("ml", "t"): [make_job("t").gpus(8).gpu_type("V100").obj()]}})
    await aijob.reconcile_key(rt, ("ml", "t"))
    assert rt.waiting == {("ml", "t")}
    rt.indices.attach({AIJOBS: {}})
    rt.recent_jobs.forget(("ml", "t"))
    await aijob.reconcile_key(rt, ("ml", "t"))
    assert rt.waiting == set()


async def test_unparsable_job_fails_with_invalid_spec() -> None:
    api = FakeApi()
    body = make_job("t").obj()
    body["spec"]["type"] = "bogus"
    rt, _ = _runtime(api, {AIJOBS: {("ml", "t"): [body]}})
    await aijob.reconcile_key(rt, ("ml", "t"))
    status = api.objects[("GryviaAIJob", "ml", "t")]["status"]
    assert status["phase"] == "Failed"
    assert 'spec.type "bogus" is not supported' in status["message"]


async def test_node_registration_writes_gpunode_status_and_labels() -> None:
    api = FakeApi()
    view = make_node("g").gpus(8).product().view()
    rt, _ = _runtime(api, {NODES: {"g": [view]}})
    await node.reconcile_node(rt, "g")
    assert api.objects[("GryviaGpuNode", "", "g")]["spec"]["gpuType"] == "H100"
    assert api.objects[("GryviaGpuNode", "", "g")]["status"]["phase"] == "Ready"
    assert api.objects[("Node", "", "g")]["metadata"]["labels"]["gryvia.io/gpu"] == "H100"
    rt.indices.attach({NODES: {}})
    await node.reconcile_node(rt, "g")
    assert ("GryviaGpuNode", "", "g") not in api.objects


async def test_webhook_http_surface() -> None:
    server = WebhookServer(
        "127.0.0.1", 0, TlsFiles(cast(Any, None), cast(Any, None), b""), lambda: [("H100", 8)]
    )
    client = TestClient(TestServer(server.app()))
    await client.start_server()
    try:
        review = {"request": {"uid": "1", "operation": "CREATE", "object": make_job().obj()}}
        ok = await client.post(AIJOB_PATH, data=json.dumps(review))
        assert (await ok.json())["response"]["allowed"] is True
        bad = await client.post(AIJOB_PATH, data="not json")
        assert bad.status == 400
        usage = await client.post(
            USAGE_RECORD_PATH, data=json.dumps({"request": {"uid": "2", "operation": "CREATE"}})
        )
        assert (await usage.json())["response"]["allowed"] is True
        assert (await (await client.get("/healthz")).text()) == "ok"
    finally:
        await client.close()


def test_json_log_lines() -> None:
    record = logging.LogRecord("gryvia", logging.INFO, __file__, 1, "hello %s", ("x",), None)
    record.k8s_ref = {"namespace": "ml", "name": "t", "kind": "GryviaAIJob"}
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "hello x"
    assert line["object"] == "ml/t"
    assert line["level"] == "info"


async def test_child_refused_by_the_api_server_fails_the_job() -> None:
    from gryvia_operator.controller.kubeapi import Invalid

    api = FakeApi()
    original = api.create

    async def refuse_jobs(body: Any) -> dict[str, Any]:
        if body["kind"] == "Job":
            raise Invalid(422, "Invalid", 'Job.batch "t" is invalid: spec.template: bad')
        return await original(body)

    api.create = refuse_jobs  # type: ignore[method-assign]
    rt, events = _runtime(api, {AIJOBS: {("ml", "t"): [make_job("t").gpus(0).obj()]}})
    await aijob.reconcile_key(rt, ("ml", "t"))
    status = api.objects[("GryviaAIJob", "ml", "t")]["status"]
    assert status["phase"] == "Failed"
    assert status["message"].startswith("Job ml/t was refused by the API server: ")
    assert [e.type for e in events] == ["Warning"]
