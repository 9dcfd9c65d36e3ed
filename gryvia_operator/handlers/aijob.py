"""GryviaAIJob handlers: index jobs, and reconcile each queued job against the cluster.

A reconcile reads the indexes, calls `reconcile_job`, and writes children and status.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

import kopf
from pydantic import ValidationError

from gryvia_operator.api import GryviaAIJob, validate_job
from gryvia_operator.api.arrays import FINISHED_PHASES
from gryvia_operator.api.jobfacts import JobFacts, job_facts
from gryvia_operator.api.jobstorage import (
    DataClaim,
    is_quota_refusal,
    job_claim,
    quota_refusal_text,
)
from gryvia_operator.api.names import batch_job_name, pvc_name, service_name, statefulset_name
from gryvia_operator.controller import policies
from gryvia_operator.controller.kubeapi import AlreadyExists, Conflict, Invalid, KubeError
from gryvia_operator.controller.runtime import JobKey, Runtime
from gryvia_operator.controller.store import (
    AIJOBS,
    CHILDREN,
    JOB_FACTS,
    NODES,
    PODS_BY_JOB,
    PODS_BY_NODE,
    STORAGES,
    slim_body,
)
from gryvia_operator.handlers import jobsteps
from gryvia_operator.reconcile.aijob import (
    Blocker,
    ChildAction,
    Observed,
    reconcile_invalid,
    reconcile_job,
)
from gryvia_operator.reconcile.names import Msg
from gryvia_operator.reconcile.status import phase_event, status_patch
from gryvia_operator.reconcile.views import ChildView

log = logging.getLogger("gryvia.operator.aijob")
PLURAL = "gryviaaijobs"
KIND = "GryviaAIJob"
CONFLICT_RETRY_SECONDS = 0.5
"""Delay before reading a job again that changed while it was being reconciled."""


def child_names(name: str, claim: DataClaim | None = None) -> dict[str, str]:
    """Kind -> the deterministic name of that child of job `name` (the data claim's from
    `claim`: `gryvia-data-<backend>` when shared, else `<job>-data`)."""
    return {
        "Job": batch_job_name(name),
        "StatefulSet": statefulset_name(name),
        "Service": service_name(name),
        "PersistentVolumeClaim": claim.claim_name(name) if claim else pvc_name(name),
    }


def observe(rt: Runtime, job: GryviaAIJob) -> Observed:
    """Assemble what the indexes (and this operator's recent writes) know about `job`.

    The namespace's shared claim (`DataClaim.shared`) is indexed under its own name and owned
    by no job: it is the job's data claim, never a conflict."""
    key = (job.namespace, job.name)
    uid = job.metadata.uid or ""
    mine: dict[str, ChildView] = {}
    blocked: list[Blocker] = []
    claim = _data_claim(rt, job)
    shared = claim.claim_name(job.name) if claim is not None and claim.shared else None
    for kind, name in child_names(job.name, claim).items():
        view = rt.recent_children.get((kind, job.namespace, name))
        index_key = (job.namespace, name) if name == shared else key
        if view is None:
            view = next(
                (v for v in rt.indices.values(CHILDREN[kind], index_key) if v.name == name), None
            )
        if view is None:
            continue
        if _ours(view.owner_uid, uid, name == shared):
            mine[kind] = view
        else:
            blocked.append(Blocker(kind, name, previous_owner=True))
    return Observed(
        workloads=tuple(v for k, v in mine.items() if k in ("Job", "StatefulSet")),
        service=mine.get("Service"),
        pvc=mine.get("PersistentVolumeClaim"),
        pods=tuple(rt.indices.values(PODS_BY_JOB, key)),
        nodes=tuple(rt.indices.all_values(NODES)),
        node_pods=tuple(rt.indices.all_values(PODS_BY_NODE)),
        blocked=tuple(blocked),
        data_claim=claim,
    )


class StorageRefused(str):
    """A ResourceQuota refused the data claim: the text for the job (`quota_refusal_text`)."""


def _data_claim(rt: Runtime, job: GryviaAIJob) -> DataClaim | None:
    """The data claim's name, class and access mode: the GryviaStorage `spec.storage` names
    (from the STORAGES index), else that name as a StorageClass."""
    name = job.spec.storage
    return job_claim(name, rt.indices.values(STORAGES, ("", name or "")))


def _ours(owner_uid: str, uid: str, shared: bool) -> bool:
    """Whether a child whose controller has `owner_uid` belongs to the job `uid`: owned by it,
    or the namespace's shared claim (`shared`), which no job owns."""
    return owner_uid == uid or (shared and not owner_uid)


async def _apply(
    rt: Runtime, job: GryviaAIJob, action: ChildAction, claim: DataClaim | None = None
) -> Blocker | str | None:
    """Run one child action; return a Blocker when a create finds a name it cannot adopt, the
    refusal message when the API server rejects the object as invalid, or a StorageRefused
    when a ResourceQuota refuses the data claim (`claim`: what it was made of)."""
    ns = job.namespace
    rt.metrics.writes.labels(kind=action.kind, verb=action.verb).inc()
    if action.verb == "delete":
        await rt.api.delete(action.kind, action.name, ns)
        rt.recent_children.forget((action.kind, ns, action.name))
        return None
    if action.verb == "patch":
        result = await rt.api.patch(action.kind, action.name, action.body, ns)
    else:
        try:
            result = await rt.api.create(action.body)
        except Invalid as exc:
            return Msg.REFUSED.format(
                kind=action.kind, namespace=ns, name=action.name, detail=exc.message
            )
        except AlreadyExists:
            result = await rt.api.get(action.kind, action.name, ns)
            found = ChildView.from_object(result, action.kind)
            shared = claim is not None and claim.shared and action.kind == "PersistentVolumeClaim"
            if not _ours(found.owner_uid, job.metadata.uid or "", shared):
                return Blocker(action.kind, action.name, found.owner_name == job.name)
        except KubeError as exc:
            if action.kind != "PersistentVolumeClaim" or not is_quota_refusal(
                exc.status, exc.message
            ):
                raise
            wanted = claim or DataClaim(str(job.spec.storage))
            return StorageRefused(quota_refusal_text(action.name, wanted, exc.message))
    view = ChildView.from_object(result, action.kind)
    rt.recent_children.note((action.kind, ns, action.name), view.resource_version, view)
    return None


async def _apply_all(
    rt: Runtime, job: GryviaAIJob, actions: tuple[ChildAction, ...], claim: DataClaim | None
) -> list[Blocker | str | None]:
    """Run `actions`: a data claim to create first, alone, and the rest only when no
    ResourceQuota refused it (pods of a claim that does not exist would wait for nothing)."""
    first = [a for a in actions if a.verb == "create" and a.kind == "PersistentVolumeClaim"]
    done: list[Blocker | str | None] = [await _apply(rt, job, a, claim) for a in first]
    if any(isinstance(d, StorageRefused) for d in done):
        return done
    rest = [a for a in actions if a not in first]
    return [*done, *await asyncio.gather(*(_apply(rt, job, a, claim) for a in rest))]


async def _write_status(
    rt: Runtime, body: dict[str, Any], before: dict[str, Any], status: dict[str, Any]
) -> None:
    """Merge-patch the owned status keys that changed, guarded by the body's resourceVersion
    (counted in `gryvia_operator_api_writes_total` once accepted; a 409 is a `conflict`
    reconcile instead); post an Event when the phase changed."""
    patch = status_patch(before, status)
    if not patch:
        return
    meta = body["metadata"]
    result = await rt.api.patch(
        "GryviaAIJob",
        meta["name"],
        {"metadata": {"resourceVersion": meta.get("resourceVersion")}, "status": patch},
        meta.get("namespace"),
        subresource="status",
    )
    rt.metrics.writes.labels(kind="GryviaAIJob", verb="status").inc()
    key = (meta.get("namespace", ""), meta["name"])
    rt.recent_jobs.note(key, str(result["metadata"].get("resourceVersion", "")), slim_body(result))
    event = phase_event(before.get("phase"), status)
    if event is not None:
        rt.post_event(result, event)
    for extra in jobsteps.events(before, status):
        rt.post_event(result, extra)
    if "phase" in patch:  # a job started or ended: estimates of waiting jobs move
        policies.requeue_waiting(rt, result)


async def reconcile_key(rt: Runtime, key: JobKey) -> None:
    """Reconcile one job by key: the job work queue's handler.

    Raises `kopf.TemporaryError`: with `delay=CONFLICT_RETRY_SECONDS` when the job changed
    since it was read (read it again soon), with `delay=None` (the queue's backoff) when an
    API call or the connection failed.
    """
    started = time.perf_counter()
    result = "ok"
    try:
        await _reconcile(rt, key)
        rt.jobs.forget(key)
    except Conflict as exc:
        result = "conflict"
        raise kopf.TemporaryError(
            f"job {key[0]}/{key[1]} changed since it was read", delay=CONFLICT_RETRY_SECONDS
        ) from exc
    except (KubeError, OSError) as exc:
        result = "error"
        rt.metrics.errors.labels(controller="aijob").inc()
        raise kopf.TemporaryError(f"job {key[0]}/{key[1]}: {exc}", delay=None) from exc
    finally:
        rt.metrics.reconciles.labels(controller="aijob", result=result).inc()
        rt.metrics.latency.labels(controller="aijob").observe(time.perf_counter() - started)


async def _reconcile(rt: Runtime, key: JobKey) -> None:
    body = rt.recent_jobs.get(key) or rt.indices.first(AIJOBS, key)
    if body is None:  # deleted: children go with it (owner references)
        rt.waiting.discard(key)
        return
    now = rt.clock()
    try:
        job = GryviaAIJob.model_validate(body)
    except ValidationError:
        messages = [e.message for e in validate_job(body).errors] or ["invalid spec"]
        status = reconcile_invalid(dict(body.get("status") or {}), messages, now)
        await _write_status(rt, body, dict(body.get("status") or {}), status)
        return
    p = await jobsteps.prepare(rt, job, body, observe(rt, job))
    outcome = reconcile_job(p.job, p.observed, p.config, now)
    if outcome.actions:
        found = await _apply_all(rt, p.job, outcome.actions, p.observed.data_claim)
        blockers = [b for b in found if isinstance(b, Blocker)]
        storage = next((b for b in found if isinstance(b, StorageRefused)), None)
        refused = [b for b in found if isinstance(b, str) and not isinstance(b, StorageRefused)]
        if blockers or refused or storage:
            observed = replace(
                p.observed,
                blocked=(*p.observed.blocked, *blockers),
                refused=tuple(refused),
                storage_refused=storage,
            )
            p = replace(p, observed=observed)
            outcome = reconcile_job(p.job, p.observed, p.config, now)
    status = jobsteps.finish(rt, p, outcome.status)
    if outcome.waiting_for_nodes or status.get("pending"):  # retried when GPUs free up
        rt.waiting.add(key)
    else:
        rt.waiting.discard(key)
    await _write_status(rt, body, dict(p.before), status)
    delay = outcome.requeue_after
    if delay is None:
        delay = jobsteps.retry_after(p, status)
    if delay is not None:
        rt.jobs.add_after(key, delay)


def register(registry: kopf.OperatorRegistry, rt: Runtime) -> None:
    """Keep the GryviaAIJob index and queue each job that changes. Jobs are read by
    list-and-watch (`controller.informer`), not kopf: a cluster keeps thousands of finished
    ones, and kopf's per-object start-up cost made the operator's restart grow with them
    (issue 42). Every other reader of jobs adds its listener to `rt.job_informer()`."""
    del registry  # nothing of kopf's: kept for the handler modules' one signature
    jobs = rt.job_informer()
    jobs.add_index(AIJOBS, job_index)
    jobs.add_index(JOB_FACTS, facts_index)
    jobs.add_listener("aijob", partial(job_event, rt))


def job_index(body: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """A job's body without managedFields, under (namespace, name)."""
    return {_job_key(body): slim_body(body)}


def facts_index(body: Mapping[str, Any]) -> dict[tuple[str, str], tuple[str, JobFacts]]:
    """A job's `JobFacts` (what the wait blocker and the start estimate read of every job),
    with the resourceVersion they were projected from, under (namespace, name)."""
    version = str((body.get("metadata") or {}).get("resourceVersion") or "")
    return {_job_key(body): (version, job_facts(body))}


def job_event(rt: Runtime, type: str, body: Mapping[str, Any]) -> None:
    """Queue the job (forget it when deleted); a finished job of the first list waits in the
    queue's low lane, behind the jobs that need work (a new leader serves new jobs first)."""
    key = _job_key(body)
    if type == "DELETED":
        rt.recent_jobs.forget(key)
        rt.waiting.discard(key)
        rt.jobs.drop(key)
        return
    rt.recent_jobs.seen(key, str((body.get("metadata") or {}).get("resourceVersion", "")))
    phase = (body.get("status") or {}).get("phase")
    rt.jobs.add(key, low=type == "" and phase in FINISHED_PHASES)


def _job_key(body: Mapping[str, Any]) -> JobKey:
    meta = body.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
