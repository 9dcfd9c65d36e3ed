"""Pod handlers: GPU usage per node and the pods of each job.

A GPU pod that ends or goes away retries the jobs waiting for nodes; a finished or deleted job
pod has its log tail saved before its save-log finalizer is removed (`handlers.savedlogs`); a
job pod the kube-scheduler preempted marks its job (`handlers.scheduler_preemption`, priorities on).
"""

from __future__ import annotations

from typing import Any, Protocol

import kopf

from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, PODS_BY_JOB, PODS_BY_NODE
from gryvia_operator.reconcile.views import PodView


class PodWatcher(Protocol):
    """What the pod handler hands pods to: `handlers.savedlogs.LogSaver` (pod bodies),
    `handlers.scheduler_preemption.SchedulerPreemptions` (PodViews)."""

    def on_pod(self, pod: Any) -> None:
        """Look at one pod event's pod."""


def _statefulset_job(body: Any) -> bool:
    spec = body.get("spec") or {} if body else {}
    kind = spec.get("workloadKind") or ("statefulset" if spec.get("type") == "inference" else "job")
    return bool(kind == "statefulset")


def register(
    registry: kopf.OperatorRegistry, rt: Runtime, saver: PodWatcher, preempted: PodWatcher
) -> None:
    """Register the two pod indexes and the pod event handler; deleting job pods go to
    `saver`, pods the scheduler preempted to `preempted`."""

    @kopf.index("v1", "pods", id=PODS_BY_NODE, registry=registry)
    async def pods_by_node(body: kopf.Body, **_: Any) -> Any:
        """Index GPU-holding pods by node."""
        pod = PodView.from_pod(body)
        return {pod.node_name: pod} if pod.holds_gpus else {}

    @kopf.index("v1", "pods", id=PODS_BY_JOB, registry=registry)
    async def pods_by_job(body: kopf.Body, **_: Any) -> Any:
        """Index job pods by job."""
        pod = PodView.from_pod(body)
        return {(pod.namespace, pod.job): pod} if pod.job else {}

    @kopf.on.event("v1", "pods", id="gryvia_pod_events", registry=registry)
    async def pod_event(type: str, body: kopf.Body, **_: Any) -> None:
        """Retry waiting jobs when GPUs free up; queue StatefulSet jobs; save a finished
        or deleted job pod's log (and drop its finalizer); mark the job of a pod the scheduler
        preempted."""
        rt.mark_synced()
        pod = PodView.from_pod(body)
        if pod.preempted_at and type != "DELETED":
            preempted.on_pod(pod)
        if (pod.deleting or pod.terminal) and type != "DELETED":
            saver.on_pod(dict(body))
        if pod.gpus > 0 and (type == "DELETED" or pod.terminal or pod.deleting):
            rt.kick_waiting()
            if pod.node_name:  # an over-committed node may be whole again
                rt.nodes.add(pod.node_name)
        if pod.job:
            key = (pod.namespace, pod.job)
            if pod.unschedulable or _statefulset_job(rt.indices.first(AIJOBS, key)):
                rt.jobs.add(key)  # an unschedulable pod: its job waits (status.pending)
