"""Inputs of the waiting-job status (`reconcile.pending.wait_status`) read from the watches,
and re-queueing the jobs whose blocker or estimate may move when another job starts or ends."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gryvia_operator.api import GryviaAIJob, JobPhase
from gryvia_operator.api.jobfacts import job_facts
from gryvia_operator.api.pricing import gpu_types_with_sku
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.handlers import policy, reservation
from gryvia_operator.reconcile.aijob import Observed
from gryvia_operator.reconcile.pending import WaitContext, wait_status
from gryvia_operator.reconcile.quotas import governing

WAITING_PHASES = frozenset({JobPhase.PENDING.value, JobPhase.QUEUED.value})


def with_wait_status(
    rt: Runtime, job: GryviaAIJob, observed: Observed, status: dict[str, Any]
) -> dict[str, Any]:
    """`status` with `pending`/`estimatedStart` for a waiting job with GPUs (dropped
    otherwise). The context (every job, the job's quotas, the catalog) is read only for such
    a job: it costs a pass over every known job."""
    phase = status.get("phase") or JobPhase.PENDING.value
    scheduling = phase == JobPhase.SCHEDULING.value and not status.get("startTime")
    waits = phase in WAITING_PHASES or scheduling
    if not waits or not job.spec.total_gpus():  # CPU-only jobs wait for no GPU: no blocker
        return wait_status(job, status, (), (), WaitContext(), rt.clock())
    governed = governing(job.namespace, policy.quotas(rt))
    context = WaitContext(
        jobs=tuple(job_facts(b) for b in policy.known_jobs(rt)),
        quotas=tuple(policy.quota_states(rt, governed)) if governed else (),
        sku_types=tuple(gpu_types_with_sku(policy.skus(rt))),
        reservations=reservation.wait_states(rt, job),
    )
    return wait_status(
        job, status, observed.nodes, observed.node_pods, context, rt.clock(), observed.pods
    )


def requeue_waiting(rt: Runtime, body: Mapping[str, Any]) -> None:
    """A job started or ended: every job waiting for nodes, and the held jobs of the quotas
    governing its namespace, get their blocker and estimate recomputed."""
    spec = body.get("spec") or {}
    if not spec.get("gpus"):  # a CPU-only job frees no GPU: no estimate moves (and a
        return  # 500-element CPU array would re-queue every waiting job 500 times)
    rt.kick_waiting()
    namespace = str((body.get("metadata") or {}).get("namespace", ""))
    governed = governing(namespace, policy.quotas(rt))
    spaces = {ns for q in governed for ns in q.spec.namespaces}
    if spaces:
        policy.requeue_held(rt, spaces)
