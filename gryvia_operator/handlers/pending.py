"""Inputs of the waiting-job status (`reconcile.pending.wait_status`) read from the watches."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gryvia_operator.api import GryviaAIJob, JobPhase
from gryvia_operator.api.pricing import gpu_types_with_sku
from gryvia_operator.controller import policies
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.reconcile.aijob import Observed
from gryvia_operator.reconcile.jobstorage import storage_wait
from gryvia_operator.reconcile.pending import WaitContext, wait_status
from gryvia_operator.reconcile.quotas import governing

WAITING_PHASES = frozenset({JobPhase.PENDING.value, JobPhase.QUEUED.value})


def with_wait_status(
    rt: Runtime,
    job: GryviaAIJob,
    observed: Observed,
    status: dict[str, Any],
    reservations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """`status` with `pending`/`estimatedStart` for a waiting job with GPUs (dropped
    otherwise); `reservations` are the job's reservation wait states
    (`handlers.reservation.wait_states`). The context (every job, the job's quotas, the
    catalog) is read only for such a job: it costs a pass over every known job. A job that
    waits for its storage gets that blocker (`reconcile.jobstorage.storage_wait`), GPUs or
    not."""
    storage = storage_wait(
        job,
        status,
        observed.storage_refused,
        observed.pvc,
        observed.pods,
        observed.claim_event,
    )
    if storage is not None:
        return wait_status(job, status, (), (), WaitContext(storage=storage), rt.clock())
    phase = status.get("phase") or JobPhase.PENDING.value
    scheduling = phase == JobPhase.SCHEDULING.value and not status.get("startTime")
    waits = phase in WAITING_PHASES or scheduling
    if not waits or not job.spec.total_gpus():  # CPU-only jobs wait for no GPU: no blocker
        return wait_status(job, status, (), (), WaitContext(), rt.clock())
    governed = governing(job.namespace, policies.quotas(rt))
    context = WaitContext(
        jobs=tuple(policies.known_job_facts(rt)),
        quotas=tuple(policies.quota_states(rt, governed)) if governed else (),
        sku_types=tuple(gpu_types_with_sku(policies.skus(rt))),
        reservations=reservations,
    )
    return wait_status(
        job, status, observed.nodes, observed.node_pods, context, rt.clock(), observed.pods
    )
