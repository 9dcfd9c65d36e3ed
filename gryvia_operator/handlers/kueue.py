"""Kueue integration I/O (`--enable-kueue`, docs/kueue.md): a job's queue, Workload and priority
class (a tenant's ResourceFlavors, ClusterQueue and LocalQueue: `controller.kueuequeues`).
The objects are built by `reconcile.kueue`; this module reads and applies them."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

import kopf

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.api.names import LABEL_JOB, TENANT_NAMESPACE_PREFIX
from gryvia_operator.api.resources import CLUSTER_QUEUE, LOCAL_QUEUE, WORKLOAD, Resource
from gryvia_operator.controller.kubeapi import AlreadyExists, KubeApi, NotFound
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.reconcile.aijob import Observed
from gryvia_operator.reconcile.kueue import (
    build_workload_priority_class,
    priority_class_name,
    resolve_queue,
)
from gryvia_operator.reconcile.kueuejob import needs_cluster_queue
from gryvia_operator.reconcile.kueuestatus import preemption_of, workload_view

log = logging.getLogger("gryvia.operator.kueue")
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
"""The label Kueue puts on a Workload: the UID of the batch Job it admits."""
QUEUED_RETRY_SECONDS = 10.0
"""How often a job Kueue holds (Queued) or is evicting (Scheduling) is looked at again, as
behaviour.md section 4 step 10 does; a change of its Workload queues it at once besides
(`register`), so an eviction is seen while the Workload still says why."""


WORKLOADS = "kueue-workloads"
"""The Workload informer's index: namespace -> its Workloads, and (namespace, UID of the batch
Job) -> that Job's Workloads; trimmed (`workload_index`)."""
KEPT_METADATA = ("name", "namespace", "uid", "labels", "creationTimestamp", "ownerReferences")
QUEUES = "kueue-queues"
"""The LocalQueue and ClusterQueue informers' index: (namespace, name) -> metadata and spec
(a ClusterQueue under ("", name)). A job's reconcile read its namespace's default LocalQueue,
and at admission its ClusterQueue, with a GET each: 1,191 GETs for a burst of 200 jobs."""


def register(registry: kopf.OperatorRegistry, rt: Runtime) -> None:
    """With Kueue on: keep the Workloads by namespace and queue the GryviaAIJob whose batch Job
    owns a Workload that changed (the batch Job has the job's name, `api.names.batch_job_name`;
    other Workloads cost a look-up of a job that does not exist).

    Workloads are read by list-and-watch (`controller.informer`), not kopf, and a reconcile
    reads its job's Workload and its namespace's from that index: a LIST of the namespace's
    Workloads at each admission made a burst of N jobs cost O(N^2) in API server and operator
    CPU (issue 42: 4.1 jobs/s through Kueue against 19 through Gryvia's gate). Start-up does
    not wait for it (Kueue's CRDs may be missing; `with_kueue` lists until it has synced)."""
    del registry  # nothing of kopf's: kept for the handler modules' one signature
    if not rt.config.kueue.enabled:
        return
    informer = rt.informer(WORKLOAD.path(), awaited=False)
    informer.add_index(WORKLOADS, workload_index)
    informer.add_listener("kueue", partial(workload_event, rt))
    for queues in (LOCAL_QUEUE, CLUSTER_QUEUE):
        rt.informer(queues.path(), awaited=False).add_index(QUEUES, queue_index)


def queue_index(body: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """A LocalQueue or ClusterQueue under (namespace, name), with its name and spec only."""
    meta = body.get("metadata") or {}
    key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
    kept = {k: meta[k] for k in ("name", "namespace") if k in meta}
    return {key: {"metadata": kept, "spec": body.get("spec") or {}}}


def _indexed(rt: Runtime, kind: Resource, index_id: str, key: Any) -> list[dict[str, Any]] | None:
    """The values under `key` in index `index_id` of the informer of `kind` ([] when none);
    None before that informer's first list (the caller then asks the API server)."""
    informer = rt.informers.get((kind.path(), ""))
    if informer is None or not informer.synced.is_set():
        return None
    return informer.index(index_id).get(key, [])


def _queue(rt: Runtime, queues: Resource, namespace: str, name: str) -> dict[str, Any] | None:
    """The queue from its informer's index; None when not held or not listed yet (the caller
    then asks the API server: a queue created a moment ago may not have reached the index)."""
    held = _indexed(rt, queues, QUEUES, (namespace, name))
    return held[0] if held else None


def workload_index(body: Mapping[str, Any]) -> dict[Any, dict[str, Any]]:
    """A Workload under its namespace and under (namespace, its batch Job's UID: label
    `JOB_UID_LABEL`), with only what the job's reconcile reads: the metadata of
    `KEPT_METADATA` and the status (not its spec's pod templates, nor managedFields)."""
    meta = body.get("metadata") or {}
    kept = {"metadata": {k: meta[k] for k in KEPT_METADATA if k in meta}}
    kept["status"] = body.get("status") or {}
    namespace = str(meta.get("namespace") or "")
    out: dict[Any, dict[str, Any]] = {namespace: kept}
    uid = (meta.get("labels") or {}).get(JOB_UID_LABEL)
    if uid:
        out[(namespace, str(uid))] = kept
    return out


def workload_event(rt: Runtime, type: str, body: Mapping[str, Any]) -> None:
    """A Workload was admitted, evicted, requeued or finished: queue its job (one of the first
    list: in the low lane, as `children.child_event` does)."""
    meta = body.get("metadata") or {}
    for owner in meta.get("ownerReferences") or []:
        if owner.get("kind") == "Job" and str(owner.get("apiVersion", "")).startswith("batch/"):
            rt.jobs.add((str(meta.get("namespace") or ""), str(owner.get("name"))), low=type == "")


def _workloads(rt: Runtime, key: str | tuple[str, str]) -> list[dict[str, Any]] | None:
    """The Workloads under `key` (a namespace, or (namespace, batch Job UID)) in the informer's
    index; None until its first list."""
    return _indexed(rt, WORKLOAD, WORKLOADS, key)


async def _exists(api: KubeApi, kind: str, name: str, namespace: str | None = None) -> bool:
    try:
        await api.get(kind, name, namespace)
    except NotFound:
        return False
    return True


async def with_kueue(rt: Runtime, job: GryviaAIJob, observed: Observed) -> Observed:
    """`observed` with the job's Kueue queue and Workload (unchanged when the integration is off
    or the job is in no queue). Creates the job's WorkloadPriorityClass before its Job exists.
    Raises KubeError."""
    settings = rt.config.kueue
    if not settings.enabled:
        return observed
    meta = job.metadata
    default_exists = False
    if job.namespace.startswith(TENANT_NAMESPACE_PREFIX):
        default_exists = _queue(
            rt, LOCAL_QUEUE, job.namespace, settings.default_queue
        ) is not None or await _exists(rt.api, "LocalQueue", settings.default_queue, job.namespace)
    queue = resolve_queue(
        settings,
        spec_queue=job.spec.queue_name,
        annotations=meta.annotations or {},
        labels=meta.labels or {},
        namespace=job.namespace,
        default_queue_exists=default_exists,
    )
    if queue is None:
        return observed
    batch = next((w for w in observed.workloads if w.kind == "Job"), None)
    if batch is None:
        await ensure_priority_class(rt.api, priority_class_name(job.spec.priority))
        return replace(observed, kueue_queue=queue)
    found = _workloads(rt, (job.namespace, batch.uid))
    if found is None:
        found = await rt.api.list(
            "Workload", job.namespace, label_selector=f"{JOB_UID_LABEL}={batch.uid}"
        )
    workload = max(found, key=lambda w: w["metadata"].get("creationTimestamp", ""), default=None)
    preemptor = await _preemptor(rt.api, workload)
    cluster_queue, in_namespace = None, tuple(found)
    view = workload_view(workload)
    kueue_status = job.status.kueue if job.status else None
    previous = kueue_status.model_dump(by_alias=True) if kueue_status else None
    if view.cluster_queue and needs_cluster_queue(previous, view):
        with contextlib.suppress(NotFound):
            cluster_queue = _queue(rt, CLUSTER_QUEUE, "", view.cluster_queue) or await rt.api.get(
                "ClusterQueue", view.cluster_queue
            )
            cached = _workloads(rt, job.namespace)
            in_namespace = tuple(
                cached if cached is not None else await rt.api.list("Workload", job.namespace)
            )
    return replace(
        observed,
        kueue_queue=queue,
        kueue_workload=workload,
        kueue_preemptor=preemptor,
        kueue_cluster_queue=cluster_queue,
        kueue_queue_workloads=in_namespace if cluster_queue is not None else (),
    )


async def _preemptor(api: KubeApi, workload: dict[str, Any] | None) -> str | None:
    """`namespace/name` of the GryviaAIJob whose batch Job (by the UID in Kueue's preemption
    message) preempted `workload`; None when it was not preempted, or the preemptor is not a
    Gryvia job or is gone. Lists Gryvia's batch Jobs of every namespace: only on a preemption."""
    preemption = preemption_of(workload)
    if preemption is None or not preemption.job_uid:
        return None
    for batch in await api.list("Job", None, label_selector=LABEL_JOB):
        meta = batch.get("metadata") or {}
        if meta.get("uid") == preemption.job_uid:
            return f"{meta.get('namespace')}/{(meta.get('labels') or {}).get(LABEL_JOB)}"
    return None


async def ensure_priority_class(api: KubeApi, name: str | None) -> None:
    """Create WorkloadPriorityClass `name` unless it exists (None: nothing to do)."""
    if name is None:
        return
    with contextlib.suppress(AlreadyExists):
        await api.create(build_workload_priority_class(name))
