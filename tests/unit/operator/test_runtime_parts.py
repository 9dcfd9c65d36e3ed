"""The operator's small runtime parts: work queue, recent writes, metrics, views, settings."""

from __future__ import annotations

import asyncio

import pytest

from gryvia_operator.controller.metrics import Metrics
from gryvia_operator.controller.store import Indices, Recent
from gryvia_operator.controller.workqueue import WorkQueue
from gryvia_operator.reconcile.views import ChildView, NodeView, PodView
from gryvia_operator.settings import parse_settings
from tests.builders import make_child, make_node, make_pod


async def test_queue_deduplicates_and_serialises_a_key() -> None:
    queue: WorkQueue[str] = WorkQueue("t")
    queue.add("a")
    queue.add("a")
    queue.add("b")
    assert len(queue) == 2
    key = await queue.get()
    assert key == "a"
    queue.add("a")  # while processing: not handed out twice
    assert await queue.get() == "b"
    queue.done("b")
    queue.done("a")
    assert await asyncio.wait_for(queue.get(), 1) == "a"


async def test_low_keys_wait_behind_normal_ones_and_a_normal_add_promotes_one() -> None:
    queue: WorkQueue[str] = WorkQueue("t")
    for key in ("finished-1", "finished-2", "finished-3"):
        queue.add(key, low=True)
    queue.add("new")
    queue.add("finished-3")  # something changed about it: promoted, handed out once
    queue.add("new", low=True)  # a low add never demotes
    order = []
    for _ in range(4):
        key = await asyncio.wait_for(queue.get(), 1)
        order.append(key)
        queue.done(key)
    assert order == ["new", "finished-3", "finished-1", "finished-2"]
    assert len(queue) == 0
    queue.add("finished-1", low=True)
    assert await asyncio.wait_for(queue.get(), 1) == "finished-1"


async def test_queue_add_after_keeps_the_earliest() -> None:
    queue: WorkQueue[str] = WorkQueue("t")
    queue.add_after("a", 0.05)
    queue.add_after("a", 10)
    assert await asyncio.wait_for(queue.get(), 1) == "a"


async def test_queue_retry_backs_off_and_forget_resets() -> None:
    queue: WorkQueue[str] = WorkQueue("t", base_delay=0.01, max_delay=0.04)
    assert [queue.retry("a") for _ in range(4)] == [0.01, 0.02, 0.04, 0.04]
    queue.forget("a")
    assert queue.retry("a") == 0.01
    queue.drop("a")
    await asyncio.sleep(0.03)
    assert len(queue) == 0


async def test_workers_process_and_survive_errors() -> None:
    queue: WorkQueue[int] = WorkQueue("t", base_delay=0.01)
    seen: list[int] = []
    done = asyncio.Event()

    async def handle(key: int) -> None:
        seen.append(key)
        if key == 1 and seen.count(1) == 1:
            raise RuntimeError("boom")
        if seen.count(1) == 2:
            done.set()

    task = asyncio.create_task(queue.run_workers(2, handle))
    queue.add(1)
    await asyncio.wait_for(done.wait(), 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen.count(1) == 2


def test_recent_until_the_watch_catches_up() -> None:
    now = [0.0]
    recent: Recent[str, str] = Recent(ttl=10, clock=lambda: now[0])
    recent.note("k", "10", "mine")
    recent.seen("k", "9")
    assert recent.get("k") == "mine"
    recent.seen("k", "10")
    assert recent.get("k") is None
    recent.note("k", "10", "mine")
    recent.seen("k", "11")
    assert recent.get("k") is None
    recent.note("k", "abc", "mine")
    recent.seen("k", "abd")
    assert recent.get("k") == "mine"
    now[0] = 11
    assert recent.get("k") is None
    recent.note("k", "1", "x")
    recent.forget("k")
    assert len(recent) == 0


def test_indices_read_kopf_style_mappings() -> None:
    indices = Indices()
    assert indices.values("gryvia_nodes", "a") == []
    indices.attach({"gryvia_nodes": {"a": ["x"], "b": ["y", "z"]}, "other": {}})
    assert indices.first("gryvia_nodes", "a") == "x"
    assert sorted(indices.all_values("gryvia_nodes")) == ["x", "y", "z"]
    assert indices.size("gryvia_nodes") == 2


def test_metrics_exposition() -> None:
    metrics = Metrics()
    metrics.reconciles.labels(controller="aijob", result="ok").inc()
    metrics.latency.labels(controller="aijob").observe(0.003)
    metrics.queue_depth.labels(queue="aijob").set(4)
    text = metrics.exposition().decode()
    assert "# TYPE gryvia_operator_reconcile_total counter" in text
    assert 'gryvia_operator_reconcile_total{controller="aijob",result="ok"} 1' in text
    assert (
        'gryvia_operator_reconcile_duration_seconds_bucket{controller="aijob",le="0.0025"} 0'
        in text
    )
    assert (
        'gryvia_operator_reconcile_duration_seconds_bucket{controller="aijob",le="0.005"} 1' in text
    )
    assert (
        'gryvia_operator_reconcile_duration_seconds_bucket{controller="aijob",le="+Inf"} 1' in text
    )
    assert 'gryvia_operator_reconcile_duration_seconds_count{controller="aijob"} 1' in text
    assert 'gryvia_operator_workqueue_depth{queue="aijob"} 4' in text
    assert "gryvia_operator_resident_memory_bytes " in text


def test_views_tolerate_sparse_objects() -> None:
    assert NodeView.from_node({}).name == ""
    assert PodView.from_pod({}).phase == "Pending"
    assert ChildView.from_object({}, "Job").kind == "Job"
    node = make_node("n").gpus(8).view()
    assert node.ready and node.allocatable_gpus == 8 and node.allocatable_cpu == 64
    pod = make_pod("p").on("n").gpus(2).job("j").ready().view()
    assert (pod.gpus, pod.job, pod.ready, pod.holds_gpus) == (2, "j", True, True)
    child = make_child("Job", "j", "owner").status(ready=1, other=5).view()
    assert (child.owner_name, child.owner_uid) == ("owner", "uid-owner")
    assert child.status == {"ready": 1}


def test_settings_flags_override_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRYVIA_OPERATOR_METRICS_PORT", "9999")
    monkeypatch.setenv("GRYVIA_OPERATOR_NAMESPACES", '["a"]')
    settings = parse_settings(["--health-port", "1", "--webhook-self-register"])
    assert (settings.health_port, settings.metrics_port) == (1, 9999)
    assert settings.namespaces == ["a"]
    assert settings.webhook_self_register is True
    assert parse_settings(["-A"]).namespaces == []
    assert parse_settings(["-n", "x", "-n", "y"]).namespaces == ["x", "y"]
    assert parse_settings(["--no-webhook-self-register"]).webhook_self_register is False
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert parse_settings([]).effective_log_format == "text"
    assert parse_settings([]).effective_webhook_host == "127.0.0.1"
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    assert parse_settings([]).effective_log_format == "json"
    assert parse_settings(["--log-format", "text"]).effective_log_format == "text"
