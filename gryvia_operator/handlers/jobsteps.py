"""The job's features as steps of one pipeline: what each reads, what it adds to the pass.

`handlers.aijob` runs `STEPS` around the pure `reconcile.aijob.reconcile_job`: every step's
`prepare` in order before it (each may fill the queue, steer the job, decide admission, choose
the checkpoint plan), every step's `finish` in reverse order on the status it returns, `event`
on each status write, and the first `retry` that names a delay once the status is written.
A feature that touches the job adds one `Step` here; the job handler imports this module and
no feature module. This is the only handler module that imports its sibling handlers (the
import contract "Handlers are independent" in pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from gryvia_operator.api import GryviaAIJob, JobPhase
from gryvia_operator.controller import policies
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import (
    AIJOBS,
    BUDGETS,
    CHECKPOINT_GUARDS,
    DATASETS,
    NODES,
    PRIORITIES,
    QUOTAS,
    RESERVATIONS,
    SKUS,
    STORAGES,
    TENANTS,
    USAGE,
)
from gryvia_operator.handlers import (
    checkpointguard,
    gate,
    jobdatasets,
    jobstorage,
    kueue,
    pending,
    priority,
    reservation,
)
from gryvia_operator.reconcile.aijob import Observed, current_status
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.reservation import JobReservation
from gryvia_operator.reconcile.status import JobEvent

KUEUE_POLLED = frozenset({JobPhase.QUEUED.value, JobPhase.SCHEDULING.value})
"""Phases in which a job in a Kueue queue is read again every `kueue.QUEUED_RETRY_SECONDS`:
a job Kueue evicts is Scheduling (its Job suspended) until the Workload gives its quota back,
when it turns Queued and Preempted; a Workload change queues it at once besides."""


@dataclass(frozen=True)
class JobPass:
    """One reconcile of one job: its body and model, and what the steps have found so far.

    `job` is the job as reconciled (a step may steer it, e.g. onto its reservation's nodes);
    `before` is its stored status (owned keys, wire names); `config` the reconcile config for
    this job (with its checkpoint plan); `reservation` what its reservation annotation comes to.
    """

    body: Mapping[str, Any]
    job: GryviaAIJob
    observed: Observed
    config: ReconcileConfig
    before: Mapping[str, Any]
    reservation: JobReservation | None = None

    @property
    def awaiting_admission(self) -> bool:
        """Pending or Queued and in no Kueue queue: the operator's own gate decides."""
        waiting = self.job.phase in (JobPhase.PENDING, JobPhase.QUEUED)
        return waiting and self.observed.kueue_queue is None

    @property
    def before_children(self) -> bool:
        """Nothing created yet: the admission gate and quota preemption apply only now."""
        return self.awaiting_admission and not self.observed.workloads


Prepare = Callable[[Runtime, JobPass], Awaitable[JobPass]]
Finish = Callable[[Runtime, JobPass, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Step:
    """One feature's part in a job's reconcile.

    `reads` names the indexes (`controller.store` ids) or API reads the step uses; `adds`
    what it contributes. Each hook is optional: `prepare` (before the pure reconcile, returns
    the pass with its part filled), `finish` (the status with its part added), `event` (an
    Event to post when a status write changes `before` into `after`), `retry` (seconds until
    the job is read again, or None).
    """

    name: str
    reads: tuple[str, ...]
    adds: str
    prepare: Prepare | None = None
    finish: Finish | None = None
    event: Callable[[Mapping[str, Any], Mapping[str, Any]], JobEvent | None] | None = None
    retry: Callable[[JobPass, Mapping[str, Any]], float | None] | None = None


async def _kueue(rt: Runtime, p: JobPass) -> JobPass:
    return replace(p, observed=await kueue.with_kueue(rt, p.job, p.observed))


def _kueue_retry(p: JobPass, status: Mapping[str, Any]) -> float | None:
    polled = p.observed.kueue_queue is not None and status.get("phase") in KUEUE_POLLED
    return kueue.QUEUED_RETRY_SECONDS if polled else None


async def _reservation(rt: Runtime, p: JobPass) -> JobPass:
    job, use = reservation.for_job(rt, p.job, p.observed)
    return replace(p, job=job, reservation=use)


def _reservation_finish(rt: Runtime, p: JobPass, status: dict[str, Any]) -> dict[str, Any]:
    return reservation.with_condition(rt, p.body, p.reservation, p.before, status)


async def _policy(rt: Runtime, p: JobPass) -> JobPass:
    if not p.awaiting_admission:
        return p
    return replace(p, observed=replace(p.observed, admission=policies.admission_for(rt, p.body)))


async def _gate(rt: Runtime, p: JobPass) -> JobPass:
    if not p.before_children:
        return p
    decision = gate.combine(rt, p.job, p.body, p.observed.admission)
    return replace(p, observed=replace(p.observed, admission=decision))


def _gate_retry(p: JobPass, status: Mapping[str, Any]) -> float | None:
    return gate.HOLD_RETRY_SECONDS if gate.is_hold(p.observed.admission) else None


async def _priority(rt: Runtime, p: JobPass) -> JobPass:
    if not p.awaiting_admission:
        return p
    decision = p.observed.admission
    if p.before_children:
        decision = await priority.preempt(rt, p.job, p.body, decision)
    below = priority.preempts_below(rt, p.job, p.body)
    return replace(p, observed=replace(p.observed, admission=decision, preempts_below=below))


async def _checkpoint(rt: Runtime, p: JobPass) -> JobPass:
    config = replace(p.config, data_claim=p.observed.data_claim)
    return replace(p, config=checkpointguard.config_for(rt, p.job, config))


async def _storage(rt: Runtime, p: JobPass) -> JobPass:
    return replace(p, observed=await jobstorage.with_claim_event(rt, p.observed))


def _storage_finish(rt: Runtime, p: JobPass, status: dict[str, Any]) -> dict[str, Any]:
    return jobstorage.with_storage_message(status)


async def _datasets(rt: Runtime, p: JobPass) -> JobPass:
    observed, config = jobdatasets.with_datasets(rt, p.job, p.observed, p.config)
    return replace(p, observed=observed, config=config)


def _datasets_finish(rt: Runtime, p: JobPass, status: dict[str, Any]) -> dict[str, Any]:
    return jobdatasets.with_dataset_pending(p.job, p.observed, status)


def _datasets_retry(p: JobPass, status: Mapping[str, Any]) -> float | None:
    return jobdatasets.retry(p.observed, status)


def _storage_retry(p: JobPass, status: Mapping[str, Any]) -> float | None:
    return jobstorage.retry(status, p.config.storage_retry_seconds)


def _pending_finish(rt: Runtime, p: JobPass, status: dict[str, Any]) -> dict[str, Any]:
    waits = reservation.wait_states(rt, p.job)
    return pending.with_wait_status(rt, p.job, p.observed, status, waits)


STEPS: tuple[Step, ...] = (
    Step("kueue", ("Workload", "LocalQueue"), "observed.kueue_*", _kueue, retry=_kueue_retry),
    Step(
        "reservation",
        (RESERVATIONS, NODES),
        "job (steered), reservation, the Reserved condition",
        _reservation,
        _reservation_finish,
    ),
    Step("policy", (QUOTAS, TENANTS, SKUS, USAGE, BUDGETS, AIJOBS), "observed.admission", _policy),
    Step(
        "gate",
        (SKUS, TENANTS, QUOTAS, USAGE),
        "observed.admission",
        _gate,
        event=gate.unchecked_event,
        retry=_gate_retry,
    ),
    Step("priority", (PRIORITIES, QUOTAS, AIJOBS), "observed.admission, preempts_below", _priority),
    Step(
        "checkpoint",
        (CHECKPOINT_GUARDS, STORAGES),
        "config.data_claim, config.checkpoint",
        _checkpoint,
    ),
    Step(
        "datasets",
        (DATASETS, TENANTS),
        "observed.dataset_wait, config.datasets, status.pending kind Dataset",
        _datasets,
        _datasets_finish,
        retry=_datasets_retry,
    ),
    Step(
        "storage",
        ("Event",),
        "observed.claim_event, status.message of a job waiting for storage",
        _storage,
        _storage_finish,
        retry=_storage_retry,
    ),
    Step(
        "pending",
        (AIJOBS, QUOTAS, USAGE, SKUS, RESERVATIONS),
        "status.pending, status.estimatedStart",
        finish=_pending_finish,
    ),
)
"""The job's features in the order they run (`prepare`); `finish` runs in reverse."""


async def prepare(
    rt: Runtime, job: GryviaAIJob, body: Mapping[str, Any], seen: Observed
) -> JobPass:
    """The pass for `job` after every step's `prepare`, from what the indexes showed (`seen`)."""
    p = JobPass(body, job, seen, rt.config, current_status(job))
    for step in STEPS:
        if step.prepare is not None:
            p = await step.prepare(rt, p)
    return p


def finish(rt: Runtime, p: JobPass, status: dict[str, Any]) -> dict[str, Any]:
    """`status` (the pure reconcile's) with every step's part, the last step's first."""
    for step in reversed(STEPS):
        if step.finish is not None:
            status = step.finish(rt, p, status)
    return status


def events(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[JobEvent]:
    """The steps' Events for a status write from `before` to `after`."""
    found = (step.event(before, after) for step in STEPS if step.event is not None)
    return [e for e in found if e is not None]


def retry_after(p: JobPass, status: Mapping[str, Any]) -> float | None:
    """Seconds until the job is read again: the first step that asks, or None."""
    for step in STEPS:
        if step.retry is not None and (delay := step.retry(p, status)) is not None:
            return delay
    return None
