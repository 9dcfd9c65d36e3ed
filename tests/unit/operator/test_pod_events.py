"""The pods' listener (`handlers.pod.PodEvents`): queues at once on any replica; the log saver
and the preemption marker only while this replica reconciles, the pods they will need kept
until then and handed over once by `flush`."""

from __future__ import annotations

from typing import Any, cast

from gryvia_operator.api.names import FINALIZER_SAVE_LOG
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.handlers.pod import PodEvents, pods_by_job, pods_by_node


def _pod(
    name: str, *, phase: str = "Running", finalizer: bool = True, gpus: int = 0
) -> dict[str, Any]:
    resources = {"requests": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "labels": {"gryvia.io/job": "train"},
            "finalizers": [FINALIZER_SAVE_LOG] if finalizer else [],
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": resources}]},
        "status": {"phase": phase},
    }


class _Watcher:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_pod(self, pod: Any) -> None:
        name = pod["metadata"]["name"] if isinstance(pod, dict) else pod.name
        self.seen.append(name)


def _events() -> tuple[PodEvents, _Watcher, Runtime]:
    rt = Runtime(api=cast(Any, None))
    saver = _Watcher()
    return PodEvents(rt, saver, _Watcher()), saver, rt


def test_a_standby_keeps_finished_pods_with_the_finalizer_and_hands_them_over_once() -> None:
    events, saver, rt = _events()
    events.on_event("", _pod("done", phase="Succeeded"))
    events.on_event("", _pod("released", phase="Succeeded", finalizer=False))
    events.on_event("", _pod("running"))
    events.on_event("", _pod("gone", phase="Failed"))
    events.on_event("DELETED", _pod("gone", phase="Failed"))
    assert saver.seen == [] and sorted(events.deferred) == ["ns/done"]

    rt.acting = True
    events.flush()
    assert saver.seen == ["done"] and events.deferred == {}
    events.flush()
    assert saver.seen == ["done"]  # once
    events.on_event("MODIFIED", _pod("late", phase="Succeeded"))
    assert saver.seen == ["done", "late"]  # acting: at once


def test_a_released_pod_leaves_the_deferred_set_and_gpu_pods_queue_their_node() -> None:
    events, saver, rt = _events()
    events.on_event("", _pod("done", phase="Succeeded", gpus=1))
    assert "ns/done" in events.deferred and len(rt.nodes) == 1  # its node: GPUs freed
    events.on_event("MODIFIED", _pod("done", phase="Succeeded", finalizer=False, gpus=1))
    assert events.deferred == {}
    rt.acting = True
    events.flush()
    assert saver.seen == []
    running, finished = _pod("r", gpus=2), _pod("g", phase="Succeeded", gpus=2)
    assert set(pods_by_node(running)) == {"n1"} and pods_by_node(finished) == {}
    assert set(pods_by_job(finished)) == {("ns", "train")}


async def test_a_first_list_leaves_finished_jobs_and_their_children_behind_a_new_job() -> None:
    """A replica's first list: finished jobs and their children go to the low lane (the
    children's events must not promote their finished owners), a new job is served first;
    a child's later change queues its owner in the normal lane."""
    import asyncio

    from gryvia_operator.handlers.aijob import job_event
    from gryvia_operator.handlers.children import child_event

    rt = Runtime(api=cast(Any, None))

    def job(name: str, phase: str | None) -> dict[str, Any]:
        return {"metadata": {"name": name, "namespace": "ns"}, "status": {"phase": phase}}

    def child(owner: str) -> dict[str, Any]:
        meta = {"name": f"{owner}-job", "namespace": "ns", "labels": {"gryvia.io/job": owner}}
        meta["ownerReferences"] = [{"kind": "GryviaAIJob", "name": owner, "controller": True}]
        return {"metadata": meta}

    for i in range(3):
        job_event(rt, "", job(f"done-{i}", "Succeeded"))
        child_event(rt, "Job", "", child(f"done-{i}"))
    job_event(rt, "", job("new", None))
    child_event(rt, "Job", "MODIFIED", child("done-2"))  # a real change: served soon
    order = [await asyncio.wait_for(rt.jobs.get(), 1) for _ in range(4)]
    assert [name for _, name in order] == ["new", "done-2", "done-0", "done-1"]


def test_the_saver_runs_in_the_context_flush_was_called_in() -> None:
    """kopf sets its event queue only in its handlers' context: `flush` runs in the handler
    that starts the workers, and every later hand-over runs in that context too, so the
    Events the saver and the preemption marker post are posted (the pods' own listener runs
    on the informer, outside any kopf handler)."""
    import contextvars

    queue: contextvars.ContextVar[str] = contextvars.ContextVar("queue", default="none")
    rt = Runtime(api=cast(Any, None))
    seen: list[str] = []

    class _Recorder:
        def on_pod(self, pod: Any) -> None:
            seen.append(queue.get())

    events = PodEvents(rt, _Recorder(), _Recorder())
    events.on_event("", _pod("early", phase="Succeeded"))

    def in_kopf_handler() -> None:
        queue.set("kopf's")
        rt.acting = True
        events.flush()

    contextvars.copy_context().run(in_kopf_handler)
    events.on_event("MODIFIED", _pod("late", phase="Failed"))  # from the informer: no kopf
    assert seen == ["kopf's", "kopf's"]
