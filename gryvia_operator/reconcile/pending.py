"""Why a waiting job waits, with numbers, and when it should start (`status.pending`,
`status.estimatedStart`), from what the operator observes. Pure.

`wait_status` is applied after `reconcile_job`: a job left Pending or Queued gets its blocker
and estimate; any other phase drops both keys (so they are written once when the job starts).
The decisions and texts come from `gryvia_operator.api.pending` / `api.startestimate`, which
`gryvia submit --explain` uses too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gryvia_operator.api import GryviaAIJob, JobPhase
from gryvia_operator.api.blockers import (
    Found,
    QuotaFacts,
    clean,
    never_blocker,
    node_blocker,
    quota_blocker,
)
from gryvia_operator.api.jobfacts import JobFacts, job_facts
from gryvia_operator.api.mig import parse_profile, slot_key
from gryvia_operator.api.names import ANNOTATION_RESERVATION
from gryvia_operator.reconcile.placement import (
    Requirements,
    evaluate_node,
    gpu_usage,
    out_of_service,
)
from gryvia_operator.reconcile.quotas import QuotaState
from gryvia_operator.reconcile.views import NodeView, PodView, node_inventory


@dataclass(frozen=True)
class WaitContext:
    """Inputs beyond `Observed`: every job, the job's quota states, the catalog's GPU types and
    the state (pending, active, expired) of the reservation the job waits for, by name (only
    a reservation whose owner matches: `reconcile.reservation.decide`). `reservations` None
    means reservations are off (`--enable-reservations` not given): no Reservation blocker."""

    jobs: tuple[JobFacts, ...] = ()
    quotas: tuple[QuotaState, ...] = ()
    sku_types: tuple[str, ...] = ()
    reservations: Mapping[str, str] | None = None
    storage: Found | None = None
    """The Storage blocker (`reconcile.jobstorage.storage_wait`): it wins over every other
    for a job that has not started."""


def quota_facts(state: QuotaState) -> QuotaFacts:
    """The blocker's view of one quota's state."""
    quota = state.quota
    budget, limits = quota.spec.budget, quota.spec.gpu_quota
    return QuotaFacts(
        team=state.team,
        namespaces=frozenset(quota.spec.namespaces),
        max_gpus=limits.max_gpus,
        allocated_gpus=state.allocated_gpus,
        running_jobs=state.running_jobs,
        max_running_jobs=limits.max_running_jobs or 0,
        spent=state.spent,
        monthly_budget=budget.monthly_budget if budget else None,
        hard_limit=bool(budget and budget.hard_limit),
        held=frozenset(v.key for v in state.held),
        max_gpus_per_user=limits.max_gpus_per_user or 0,
    )


def _node_wait(
    job: GryviaAIJob,
    me: JobFacts,
    nodes: Sequence[NodeView],
    pods: Sequence[PodView],
    ctx: WaitContext,
    now: dt.datetime,
) -> Found:
    """Resources, from the nodes that pass every placement filter but free GPUs (they could
    take a pod once GPUs free up) and the pods bound to them."""
    req = Requirements.of(job)
    used = gpu_usage(pods)
    free: dict[str, int] = {}
    totals: dict[str, int] = {}
    unavailable: dict[str, tuple[str, ...]] = {}  # node -> what alone keeps the job off it
    for node in nodes:
        fit = evaluate_node(node, req, 0)
        if fit.fits:
            totals[node.name] = fit.total
            free[node.name] = max(fit.total - used.get(slot_key(node.name, req.gpu_type), 0), 0)
        elif out_of_service(fit.problems):
            unavailable[node.name] = fit.problems
    shown = str(job.spec.gpu_type) if job.spec.gpu_type_constrained else "GPUs"
    if not free and unavailable:
        return _unavailable_blocker(me, shown, unavailable)
    profile = parse_profile(req.gpu_type)
    held: dict[tuple[str, str], dict[str, int]] = {}
    for pod in pods:
        if pod.node_name not in free or pod.terminal or not pod.job:
            continue
        count = pod.slices.get(profile.name, 0) if profile else pod.gpus
        if count:
            slots = held.setdefault((pod.namespace, pod.job), {})
            slots[pod.node_name] = slots.get(pod.node_name, 0) + count
    quotas = [quota_facts(s) for s in ctx.quotas]
    return node_blocker(me, shown, free, held, ctx.jobs, now, quotas, totals)


def _unavailable_blocker(
    me: JobFacts, shown: str, unavailable: Mapping[str, Sequence[str]]
) -> Found:
    """Resources, when the only nodes that could take the job's pods are out of service for
    it (`unavailable`: node -> its problems: not Ready, cordoned, taints the job does not
    tolerate): the reason names each node and why, and the fix for taints."""
    why = "; ".join(f"{node} {' and '.join(unavailable[node])}" for node in sorted(unavailable))
    text = (
        f"needs {me.total} {shown} on {me.pods} node(s); the nodes that could take its pods "
        f"are out of service: {why}"
    )
    if any(p.startswith("has taint ") for found in unavailable.values() for p in found):
        text += " (add a matching toleration to spec.tolerations)"
    pending = {"kind": "Resources", "resource": shown, "needed": me.total, "freeNow": 0}
    return {**pending, "message": text}, {"unknownReason": text}


def wait_status(
    job: GryviaAIJob,
    status: dict[str, Any],
    nodes: Sequence[NodeView],
    pods: Sequence[PodView],
    ctx: WaitContext,
    now: dt.datetime,
    own_pods: Sequence[PodView] = (),
) -> dict[str, Any]:
    """`status` (the reconciler's desired status) with `pending` and `estimatedStart` set for a
    waiting job and removed otherwise.

    Waiting for storage (`ctx.storage`, a job not started yet): that blocker. Else waiting:
    phase Pending or Queued (the blocker follows from the quota hold, a reservation
    that is not active, the fail-fast rule, else the nodes), a suspended job (Suspended,
    Kueue with a queueName), or a Scheduling job that has not started and some of whose pods
    (`own_pods`) the scheduler found no node for (PodScheduled=False, Unschedulable):
    placement is advisory, so in a burst the operator places jobs before their pods hold
    GPUs and the pods wait (Resources, for those pods). Deterministic for the same inputs
    (times are whole seconds and do not move with `now` while nothing changes), so a job
    that keeps waiting for the same reason is not written again.
    """
    out = dict(status)
    out.pop("pending", None)
    out.pop("estimatedStart", None)
    phase = out.get("phase") or JobPhase.PENDING.value
    early = phase in (JobPhase.PENDING.value, JobPhase.SCHEDULING.value)
    if ctx.storage is not None and early and not out.get("startTime"):
        out["pending"], out["estimatedStart"] = (clean(part) for part in ctx.storage)
        return out
    suspended = job.spec.suspend and phase == JobPhase.SCHEDULING.value
    suspended = suspended and not out.get("startTime")
    unbound = [p for p in own_pods if p.unschedulable and not p.node_name and not p.deleting]
    stuck = phase == JobPhase.SCHEDULING.value and not out.get("startTime") and bool(unbound)
    if not (suspended or stuck) and phase not in (JobPhase.PENDING.value, JobPhase.QUEUED.value):
        return out
    me = job_facts(job.model_dump(mode="json", by_alias=True, exclude_none=True))
    found: Found | None = None
    if suspended:
        kind = "Kueue" if job.spec.queue_name else "Suspended"
        text = (
            f"waits for Kueue to admit it from LocalQueue {job.spec.queue_name}"
            if job.spec.queue_name
            else "spec.suspend is true: resume it to run"
        )
        found = ({"kind": kind, "needed": me.total, "message": text}, {"unknownReason": text})
    elif phase == JobPhase.QUEUED.value and (held := _kueue_hold(out)):
        found = ({"kind": "Kueue", "needed": me.total, "message": held}, {"unknownReason": held})
    elif phase == JobPhase.QUEUED.value:
        found = quota_blocker(me, [quota_facts(q) for q in ctx.quotas], ctx.jobs, now)
        if found is None:  # held by a rule without a quota state (e.g. a GryviaBudget block)
            text = str(out.get("message") or "held by its quota")
            kind = "Budget" if "budget" in text.lower() else "Quota"
            found = ({"kind": kind, "needed": me.total, "message": text}, {"unknownReason": text})
    elif phase == JobPhase.PENDING.value and me.total:
        quotas = [quota_facts(q) for q in ctx.quotas]
        inventory = node_inventory(nodes)
        never = never_blocker(me, job.spec.gpu_type, inventory, ctx.sku_types, quotas)
        found = never or _reservation(job, me, ctx, nodes)
        if found is None:
            found = _node_wait(job, me, nodes, pods, ctx, now)
    elif stuck and me.total:
        found = _node_wait(job, replace(me, pods=len(unbound)), nodes, pods, ctx, now)
    if found is not None:
        out["pending"], out["estimatedStart"] = (clean(part) for part in found)
    return out


def _kueue_hold(status: dict[str, Any]) -> str:
    """Kueue's message when Kueue holds the job (condition KueueAdmitted=False), else '': Kueue
    alone admits such a job, so Gryvia's quota numbers would not explain its wait."""
    for cond in status.get("conditions") or []:
        if cond.get("type") == "KueueAdmitted" and cond.get("status") == "False":
            return str(cond.get("message") or status.get("message") or "held by Kueue")
    return ""


def _reservation(
    job: GryviaAIJob, me: JobFacts, ctx: WaitContext, nodes: Sequence[NodeView]
) -> Found | None:
    """The Reservation blocker: the job opts into a reservation (annotation
    gryvia.io/reservation) of its owner that is not active yet, or it fits only on nodes that
    other owners' reservations hold. Nothing while reservations are off."""
    if ctx.reservations is None:
        return None
    from gryvia_operator.reconcile.reservation import reserved_elsewhere

    name = (job.metadata.annotations or {}).get(ANNOTATION_RESERVATION)
    state = ctx.reservations.get(name or "", "active")
    if name and state != "active":
        text = f"reservation {name} is {state or 'not active yet'}"
    elif (other := reserved_elsewhere(job, nodes)) is not None:
        name, text = other
    else:
        return None
    from gryvia_operator.api.reservation import reservation_blocker

    return reservation_blocker(str(name), text, me.total)
