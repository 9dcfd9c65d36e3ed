"""Pod handlers: GPU usage per node and the pods of each job.

A GPU pod that ends or goes away retries the jobs waiting for nodes; a finished or deleted job
pod has its log tail saved before its save-log finalizer is removed (`handlers.savedlogs`); a
job pod the kube-scheduler preempted marks its job (`handlers.scheduler_preemption`, priorities on).

Pods are read by list-and-watch (`controller.informer`), not kopf: a cluster holds a pod or more
per job, running and finished, and kopf's per-object start-up (its indexing barrier) made the
operator's restart and a new leader's take-over grow with them (issues 40 and 42). The
informer runs on a standby too, so the webhook reads the same pod indexes; what writes (the log
saver, the preemption marker) waits until this replica reconciles: until then the pods that
will need it are kept (`PodEvents.deferred`, a handful: only pods holding the save-log
finalizer while finished or deleting, and preempted ones) and handed over by `flush`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from typing import Any, Protocol

from gryvia_operator.api.resources import POD
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, PODS_BY_JOB, PODS_BY_NODE
from gryvia_operator.reconcile.savedlogs import has_finalizer
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


def pods_by_node(body: Mapping[str, Any]) -> dict[str, PodView]:
    """GPU-holding pods under their node's name."""
    pod = PodView.from_pod(body)
    return {pod.node_name: pod} if pod.holds_gpus else {}


def pods_by_job(body: Mapping[str, Any]) -> dict[tuple[str, str], PodView]:
    """Job pods under (namespace, job name)."""
    pod = PodView.from_pod(body)
    return {(pod.namespace, pod.job): pod} if pod.job else {}


class PodEvents:
    """The pods' listener: queues jobs and nodes at once (a queue is all a standby touches);
    hands pods to the log saver and the preemption marker only while `rt.acting`, keeping
    until then the pods they will need (`deferred`: namespace/name -> latest body)."""

    def __init__(self, rt: Runtime, saver: PodWatcher, preempted: PodWatcher) -> None:
        self.rt, self.saver, self.preempted = rt, saver, preempted
        self.deferred: dict[str, dict[str, Any]] = {}
        self.context = contextvars.copy_context()
        """Where the saver and the marker run: kopf's handler context once `flush` has run
        (kopf sets its event queue only there, so their `kopf.event`s are posted)."""

    def on_event(self, type: str, body: Mapping[str, Any]) -> None:
        """One pod change ("" for the first list, "ADDED", "MODIFIED", "DELETED")."""
        rt = self.rt
        pod = PodView.from_pod(body)
        if pod.gpus > 0 and (type == "DELETED" or pod.terminal or pod.deleting):
            rt.kick_waiting()
            if pod.node_name:  # an over-committed node may be whole again
                rt.nodes.add(pod.node_name)
        if pod.job:
            key = (pod.namespace, pod.job)
            if pod.unschedulable or _statefulset_job(rt.indices.first(AIJOBS, key)):
                rt.jobs.add(key)  # an unschedulable pod: its job waits (status.pending)
        if rt.acting:
            self.context.run(self._act, type, pod, body)
            return
        wanted = pod.preempted_at or ((pod.deleting or pod.terminal) and has_finalizer(body))
        name = f"{pod.namespace}/{pod.name}"
        if type != "DELETED" and wanted:
            self.deferred[name] = dict(body)
        else:
            self.deferred.pop(name, None)

    def _act(self, type: str, pod: PodView, body: Mapping[str, Any]) -> None:
        if pod.preempted_at and type != "DELETED":
            self.preempted.on_pod(pod)
        if (pod.deleting or pod.terminal) and type != "DELETED":
            self.saver.on_pod(dict(body))

    def flush(self) -> None:
        """Hand the deferred pods over; called once this replica reconciles, inside the kopf
        handler that starts its workers, whose context the later pods are handled in too."""
        self.context = contextvars.copy_context()
        deferred, self.deferred = self.deferred, {}
        for body in deferred.values():
            self._act("", PodView.from_pod(body), body)


def register(rt: Runtime, saver: PodWatcher, preempted: PodWatcher) -> PodEvents:
    """Add the two pod indexes and the pod listener to the pods' informer; deleting job pods
    go to `saver`, pods the scheduler preempted to `preempted` (see `PodEvents`). Returns the
    listener, whose `flush` the caller runs when this replica starts reconciling."""
    pods = rt.informer(POD.path())
    pods.add_index(PODS_BY_NODE, pods_by_node)
    pods.add_index(PODS_BY_JOB, pods_by_job)
    events = PodEvents(rt, saver, preempted)
    pods.add_listener("pods", events.on_event)
    return events
