"""The controller machinery: the /metrics endpoint on prometheus_client with a registry per
operator, readiness, and how the work queue and the handlers use kopf's retry exceptions."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import aiohttp
import kopf
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gryvia_operator.controller.kubeapi import AlreadyExists, Invalid, KubeError, NotFound
from gryvia_operator.controller.metrics import Metrics
from gryvia_operator.controller.probes import serve_probes
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import GPUNODES, NODES
from gryvia_operator.controller.workqueue import WorkQueue
from gryvia_operator.handlers import node, tenant
from tests.builders import make_node
from tests.support.ports import free_port
from tests.unit.operator.fakeapi import FakeApi


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def test_metrics_endpoint_serves_every_metric_and_readiness() -> None:
    rt = Runtime(api=cast(Any, FakeApi()))
    rt.metrics.reconciles.labels(controller="aijob", result="ok").inc(3)
    rt.metrics.writes.labels(kind="Job", verb="create").inc()
    rt.metrics.latency.labels(controller="node").observe(0.02)
    rt.metrics.webhook.labels(webhook="gryviaaijob", allowed="true").inc()
    rt.jobs.add(("ml", "a"))
    rt.jobs.add(("ml", "b"))
    rt.waiting.add(("ml", "a"))
    health, metrics = free_port(), free_port()
    runners = await serve_probes(rt, "127.0.0.1", health, metrics)
    try:
        async with aiohttp.ClientSession() as http:
            ready = await http.get(f"http://127.0.0.1:{health}/readyz")
            assert (ready.status, await ready.text()) == (503, "not ready: caches syncing")
            rt.mark_synced()
            ready = await http.get(f"http://127.0.0.1:{health}/readyz")
            assert (ready.status, await ready.text()) == (200, "ready")
            scraped = await http.get(f"http://127.0.0.1:{metrics}/metrics")
            assert scraped.status == 200
            assert scraped.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            text = await scraped.text()
    finally:
        for runner in runners:
            await runner.cleanup()
    samples = _samples(text)
    reconciles = ("gryvia_operator_reconcile_total", (("controller", "aijob"), ("result", "ok")))
    assert samples[reconciles] == 3
    writes = ("gryvia_operator_api_writes_total", (("kind", "Job"), ("verb", "create")))
    assert samples[writes] == 1
    count = ("gryvia_operator_reconcile_duration_seconds_count", (("controller", "node"),))
    assert samples[count] == 1
    bucket = (
        "gryvia_operator_reconcile_duration_seconds_bucket",
        (("controller", "node"), ("le", "0.025")),
    )
    assert samples[bucket] == 1
    webhook = (
        "gryvia_operator_webhook_requests_total",
        (("allowed", "true"), ("webhook", "gryviaaijob")),
    )
    assert samples[webhook] == 1
    depth = {
        dict(labels)["queue"]: value
        for (name, labels), value in samples.items()
        if name == "gryvia_operator_workqueue_depth"
    }
    assert depth == {"aijob": 2, "node": 0, "waiting_for_nodes": 1}
    assert samples[("gryvia_operator_resident_memory_bytes", ())] > 1_000_000
    families = {f.name for f in text_string_to_metric_families(text)}
    assert {
        "gryvia_operator_reconcile",
        "gryvia_operator_reconcile_errors",
        "gryvia_operator_reconcile_duration_seconds",
        "gryvia_operator_api_writes",
        "gryvia_operator_workqueue_depth",
        "gryvia_operator_webhook_requests",
        "gryvia_operator_webhook_duration_seconds",
        "gryvia_operator_resident_memory_bytes",
    } <= families
    assert not any(name.endswith("_created") for name, _ in samples)


def test_each_operator_has_its_own_registry() -> None:
    first, second = Metrics(), Metrics()
    first.errors.labels(controller="aijob").inc()
    assert first.value("gryvia_operator_reconcile_errors_total", controller="aijob") == 1
    assert second.value("gryvia_operator_reconcile_errors_total", controller="aijob") is None
    assert b'gryvia_operator_reconcile_errors_total{controller="aijob"} 1.0' in (first.exposition())


async def _run_until(queue: WorkQueue[str], handle: Any, done: asyncio.Event) -> None:
    task = asyncio.create_task(queue.run_workers(1, handle))
    try:
        await asyncio.wait_for(done.wait(), 2)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_temporary_error_with_a_delay_runs_the_key_again_without_backoff() -> None:
    queue: WorkQueue[str] = WorkQueue("t", base_delay=0.01)
    runs: list[float] = []
    done = asyncio.Event()
    loop = asyncio.get_running_loop()

    async def handle(key: str) -> None:
        runs.append(loop.time())
        if len(runs) == 1:
            raise kopf.TemporaryError("look again", delay=0.05)
        done.set()

    queue.add("a")
    await _run_until(queue, handle, done)
    assert len(runs) == 2 and runs[1] - runs[0] >= 0.04
    assert queue.retry("a") == 0.01  # the named delay did not count as a failure


async def test_temporary_error_without_a_delay_backs_off() -> None:
    queue: WorkQueue[str] = WorkQueue("t", base_delay=0.01)
    runs = 0
    done = asyncio.Event()

    async def handle(key: str) -> None:
        nonlocal runs
        runs += 1
        if runs < 3:
            raise kopf.TemporaryError("API down", delay=None)
        done.set()

    queue.add("a")
    await _run_until(queue, handle, done)
    assert runs == 3
    assert queue.retry("a") == 0.04  # two failures backed off 0.01 and 0.02 s


async def test_permanent_error_drops_the_key_until_it_is_added_again() -> None:
    queue: WorkQueue[str] = WorkQueue("t", base_delay=0.01)
    seen: list[str] = []
    done = asyncio.Event()

    async def handle(key: str) -> None:
        seen.append(key)
        if key == "bad":
            raise kopf.PermanentError("cannot be done")
        done.set()

    queue.add("bad")
    queue.add_after("bad", 0.02)  # a pending re-check is dropped with it
    queue.add_after("good", 0.1)
    await _run_until(queue, handle, done)
    assert seen == ["bad", "good"]


async def test_node_whose_gpunode_appears_meanwhile_is_looked_at_again() -> None:
    api = FakeApi()
    view = make_node("g").gpus(8).product().view()
    rt = Runtime(api=cast(Any, api))
    rt.indices.attach({NODES: {"g": [view]}, GPUNODES: {}})
    api.put({"kind": "GryviaGpuNode", "metadata": {"name": "g"}})  # not yet in the index
    with pytest.raises(kopf.TemporaryError) as raised:
        await node.reconcile_node(rt, "g")
    assert raised.value.delay == node.LOOK_AGAIN_SECONDS
    assert rt.metrics.value("gryvia_operator_reconcile_total", controller="node", result="ok")


async def test_node_api_failure_is_retried_with_backoff() -> None:
    api = FakeApi()
    rt = Runtime(api=cast(Any, api))
    rt.indices.attach({NODES: {"g": [make_node("g").gpus(8).product().view()]}, GPUNODES: {}})

    async def down(*_: Any, **__: Any) -> dict[str, Any]:
        raise KubeError(0, "ConnectionError", "refused")

    api.patch = down  # type: ignore[method-assign]
    with pytest.raises(kopf.TemporaryError) as raised:
        await node.reconcile_node(rt, "g")
    assert raised.value.delay is None
    assert rt.metrics.value("gryvia_operator_reconcile_errors_total", controller="node") == 1


def test_invalid_tenant_is_given_up_on() -> None:
    body = {"apiVersion": "gryvia.io/v1alpha1", "kind": "GryviaTenant"}
    body |= {"metadata": {"name": "x"}, "spec": {"deletionPolicy": "Sometimes"}}
    with pytest.raises(kopf.PermanentError, match=r"invalid GryviaTenant: x: spec\.deletionPolicy"):
        tenant._tenant(cast(Any, body))


def test_tenant_api_failures_retry_later_unless_refused() -> None:
    refused = tenant._failed("tenant x", Invalid(422, "Invalid", "bad"))
    assert isinstance(refused, kopf.PermanentError)
    for exc in (KubeError(503, "ServiceUnavailable", "down"), NotFound(404, "NotFound", "ns")):
        retried = tenant._failed("tenant x", exc)
        assert isinstance(retried, kopf.TemporaryError)
        assert retried.delay == tenant.RETRY_SECONDS
    exists = tenant._failed("tenant x", AlreadyExists(409, "AlreadyExists", "x"))
    assert isinstance(exists, kopf.TemporaryError)
