"""Why a waiting job waits, with numbers, and when it should start (`status.pending`,
`status.estimatedStart`), from what the operator observes. Pure.

`wait_status` is applied after `reconcile_job`: a job left Pending or Queued gets its blocker
and estimate; any other phase drops both keys (so they are written once when the job starts).
The decisions and texts come from `gryvia_operator.api.pending` / `api.startestimate`, which
`gryvia submit --explain` uses too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gryvia_operator.api import GryviaAIJob, JobPhase
from gryvia_operator.api.messages import gpu_count
from gryvia_operator.api.mig import parse_profile, slot_key
from gryvia_operator.api.names import ANNOTATION_RESERVATION
from gryvia_operator.api.pending import MAX_LISTED, never_fits
from gryvia_operator.api.periods import period_window
from gryvia_operator.api.startestimate import (
    Forecast,
    Running,
    Waiting,
    expected_end,
    forecast,
)
from gryvia_operator.reconcile.jobfacts import JobFacts, history, job_facts
from gryvia_operator.reconcile.placement import Requirements, evaluate_node, gpu_usage
from gryvia_operator.reconcile.quotas import QuotaState, queue_order
from gryvia_operator.reconcile.status import timestamp
from gryvia_operator.reconcile.views import NodeView, PodView
from gryvia_operator.webhook.review import node_inventory

QUOTA_SLOT = "quota"


@dataclass(frozen=True)
class WaitContext:
    """Inputs beyond `Observed`: every job, the job's quota states, the catalog's GPU types and
    the reservations' states (name -> state). `reservations` None means not watched: no
    reservation controller exists yet (issue 18), and the Reservation blocker is reported only
    once one fills it."""

    jobs: tuple[JobFacts, ...] = ()
    quotas: tuple[QuotaState, ...] = ()
    sku_types: tuple[str, ...] = ()
    reservations: Mapping[str, str] | None = None


def _shown(job: JobFacts, other: JobFacts) -> str:
    return other.name if other.namespace == job.namespace else other.key


def _running(
    me: JobFacts,
    other: JobFacts,
    held: Mapping[str, int],
    jobs: Sequence[JobFacts],
    now: dt.datetime,
) -> Running:
    past = history(jobs, other.namespace, other.gpu_type)
    end, basis, why = expected_end(_shown(me, other), other.start, other.timeout_seconds, past, now)
    return Running(_shown(me, other), dict(held), end, basis, why)


def _waiting(
    me: JobFacts, other: JobFacts, per_pod: int, pods: int, jobs: Sequence[JobFacts]
) -> Waiting:
    name = _shown(me, other)
    if other.timeout_seconds:
        return Waiting(name, per_pod, pods, dt.timedelta(seconds=other.timeout_seconds))
    past = history(jobs, other.namespace, other.gpu_type)
    why = f"job {name} ahead has no timeout and no finished job like it"
    return Waiting(name, per_pod, pods, past, "" if past else why)


def _ahead(me: JobFacts, candidates: Iterable[JobFacts]) -> list[JobFacts]:
    """Jobs before `me` in queue order (priority, then age, then name)."""
    order = queue_order([_as_view(j) for j in (*candidates, me)])
    keys = [v.key for v in order]
    index = {j.key: j for j in candidates}
    before = keys[: keys.index(me.key)]
    return [index[k] for k in before if k in index]


def _as_view(job: JobFacts) -> Any:
    from gryvia_operator.reconcile.quotas import JobView

    return JobView(job.namespace, job.name, job.created, job.priority, job.phase, job.total, None)


def _estimate(result: Forecast) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if result.earliest is not None:
        out["earliest"] = timestamp(result.earliest)
    if result.likely is not None:
        out["likely"] = timestamp(result.likely)
    if result.likely is None:
        out["unknownReason"] = result.unknown_reason or "no estimate"
    return out


def _holders(result: Forecast) -> list[dict[str, Any]]:
    out = []
    for run in result.holders[:MAX_LISTED]:
        item: dict[str, Any] = {"name": run.name, "gpus": sum(run.held.values())}
        if run.end is not None:
            item["expectedEnd"] = timestamp(run.end)
        item["basis"] = run.basis
        out.append(item)
    return out


def _ahead_block(me: JobFacts, ahead: Sequence[JobFacts]) -> dict[str, Any]:
    block: dict[str, Any] = {"count": len(ahead)}
    if ahead:
        block["names"] = [_shown(me, j) for j in ahead[:MAX_LISTED]]
    return block


def _free_in_quota(states: Sequence[QuotaState]) -> int | None:
    if not states:
        return None
    return min(s.quota.spec.gpu_quota.max_gpus - s.allocated_gpus for s in states)


def _budget_spent(state: QuotaState) -> bool:
    budget = state.quota.spec.budget
    return bool(
        budget
        and budget.hard_limit
        and budget.monthly_budget is not None
        and state.spent >= budget.monthly_budget
    )


def _quota_wait(
    me: JobFacts, ctx: WaitContext, now: dt.datetime
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The blocker of a job its quota holds: Budget (a hard monthly budget is spent; the
    estimate is the month's renewal), Quota (over maxGPUs or maxRunningJobs) or Priority
    (the quota has room, but earlier jobs of the team wait first: no backfill)."""
    for state in ctx.quotas:
        team, limits = state.team, state.quota.spec.gpu_quota
        base: dict[str, Any] = {"needed": me.total, "freeInQuota": _free_in_quota(ctx.quotas)}
        if _budget_spent(state):
            renews = period_window("month", now)[1]
            text = (
                f"the monthly budget of team {team} is spent ({state.spent:.2f} USD, hard "
                f"limit); it renews {renews:%Y-%m-%d}"
            )
            pending = {"kind": "Budget", "resource": f"budget {team}", **base, "message": text}
            return pending, {"earliest": timestamp(renews), "likely": timestamp(renews)}
        mine = [j for j in ctx.jobs if j.namespace in state.quota.spec.namespaces and j.total]
        held = {v.key for v in state.held}
        ahead = _ahead(me, [j for j in mine if j.key in held and j.key != me.key])
        free = max(limits.max_gpus - state.allocated_gpus, 0)
        over_gpus = me.total > free
        max_jobs = limits.max_running_jobs or 0
        over_jobs = max_jobs > 0 and state.running_jobs >= max_jobs
        if not (over_gpus or over_jobs or ahead):
            continue
        running = [
            _running(me, j, {QUOTA_SLOT: j.total}, ctx.jobs, now)
            for j in mine
            if j.holds and j.key != me.key
        ]
        queue = [_waiting(me, j, j.total, 1, ctx.jobs) for j in ahead]
        ask = Waiting(me.name, me.total, 1)
        result = forecast({QUOTA_SLOT: free}, ask, running, queue, now=now, strict=True)
        if over_gpus:
            kind = "Quota"
            text = (
                f"team {team} uses {state.allocated_gpus} of {gpu_count(limits.max_gpus)}, "
                f"this job needs {me.total}"
            )
        elif over_jobs:
            kind = "Quota"
            text = (
                f"team {team} runs {state.running_jobs} of {limits.max_running_jobs} jobs "
                "allowed at once"
            )
        else:
            kind, text = "Priority", f"behind earlier jobs of team {team}"
        pending = {
            "kind": kind,
            "resource": f"quota {team}",
            **base,
            "ahead": _ahead_block(me, ahead),
            "holders": _holders(result),
            "message": text,
        }
        return pending, _estimate(result)
    return None


def _node_wait(
    job: GryviaAIJob,
    me: JobFacts,
    nodes: Sequence[NodeView],
    pods: Sequence[PodView],
    ctx: WaitContext,
    now: dt.datetime,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The blocker of a job no set of nodes takes now (Resources): GPUs needed and free on the
    nodes that could take its pods, the unplaced jobs ahead for the same GPU type, and the
    running jobs on those nodes whose end frees enough."""
    req = Requirements.of(job)
    used = gpu_usage(pods)
    free: dict[str, int] = {}
    for node in nodes:
        if evaluate_node(node, req, 0).fits:  # could take a pod once its GPUs are free
            total = evaluate_node(node, req, 0).total
            free[node.name] = max(total - used.get(slot_key(node.name, req.gpu_type), 0), 0)
    profile = parse_profile(req.gpu_type)
    held: dict[tuple[str, str], dict[str, int]] = {}
    for pod in pods:
        if pod.node_name not in free or pod.terminal or not pod.job:
            continue
        count = pod.slices.get(profile.name, 0) if profile else pod.gpus
        if count:
            slots = held.setdefault((pod.namespace, pod.job), {})
            slots[pod.node_name] = slots.get(pod.node_name, 0) + count
    facts = {(j.namespace, j.name): j for j in ctx.jobs}
    running = [
        _running(me, facts[k], slots, ctx.jobs, now) for k, slots in held.items() if k in facts
    ]
    rivals = [
        j
        for j in ctx.jobs
        if j.key != me.key
        and j.phase == JobPhase.PENDING
        and not j.placed
        and j.total
        and j.gpu_type == me.gpu_type
    ]
    ahead = _ahead(me, rivals)
    queue = [_waiting(me, j, j.per_pod, j.pods, ctx.jobs) for j in ahead]
    ask = Waiting(me.name, me.per_pod, me.pods)
    result = forecast(free, ask, running, queue, now=now)
    shown = job.spec.gpu_type if job.spec.gpu_type_constrained else "GPUs"
    pending = {
        "kind": "Resources",
        "resource": shown,
        "needed": me.total,
        "freeNow": sum(free.values()),
        "ahead": _ahead_block(me, ahead),
        "holders": _holders(result),
        "message": f"needs {me.total} {shown} on {me.pods} node(s), "
        f"{sum(free.values())} free on nodes that could take its pods",
    }
    if ctx.quotas:
        pending["freeInQuota"] = _free_in_quota(ctx.quotas)
    if not free and not result.holders:
        return pending, {"unknownReason": f"no usable node can take its pods ({shown})"}
    return pending, _estimate(result)


def _never(
    job: GryviaAIJob, me: JobFacts, nodes: Sequence[NodeView], ctx: WaitContext
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    quota_max = min((s.quota.spec.gpu_quota.max_gpus for s in ctx.quotas), default=None)
    found = never_fits(
        job.spec.gpu_type, me.per_pod, me.pods, node_inventory(nodes), ctx.sku_types, quota_max
    )
    if found is None:
        return None
    pending = {
        "kind": found.kind,
        "resource": found.resource,
        "needed": me.total,
        "message": found.message,
    }
    return pending, {"unknownReason": f"never: {found.message}"}


def wait_status(
    job: GryviaAIJob,
    status: dict[str, Any],
    nodes: Sequence[NodeView],
    pods: Sequence[PodView],
    ctx: WaitContext,
    now: dt.datetime,
) -> dict[str, Any]:
    """`status` (the reconciler's desired status) with `pending` and `estimatedStart` set for a
    waiting job and removed otherwise.

    Waiting: phase Pending or Queued (the blocker follows from the quota hold, a reservation
    that is not active, the fail-fast rule, else the nodes), or a suspended job (Suspended,
    Kueue with a queueName). Deterministic for the same inputs (times are whole seconds and do
    not move with `now` while nothing changes), so a job that keeps waiting for the same
    reason is not written again.
    """
    out = dict(status)
    out.pop("pending", None)
    out.pop("estimatedStart", None)
    phase = out.get("phase") or JobPhase.PENDING.value
    me = job_facts(job.model_dump(mode="json", by_alias=True, exclude_none=True))
    found: tuple[dict[str, Any], dict[str, Any]] | None = None
    if job.spec.suspend and phase == JobPhase.SCHEDULING.value and not out.get("startTime"):
        kind = "Kueue" if job.spec.queue_name else "Suspended"
        text = (
            f"waits for Kueue to admit it from LocalQueue {job.spec.queue_name}"
            if job.spec.queue_name
            else "spec.suspend is true: resume it to run"
        )
        found = ({"kind": kind, "needed": me.total, "message": text}, {"unknownReason": text})
    elif phase == JobPhase.QUEUED.value:
        found = _quota_wait(me, ctx, now)
        if found is None:
            text = str(out.get("message") or "held by its quota")
            found = (
                {"kind": "Quota", "needed": me.total, "message": text},
                {"unknownReason": text},
            )
    elif phase == JobPhase.PENDING.value and me.total:
        found = _never(job, me, nodes, ctx) or _reservation(job, me, ctx)
        if found is None:
            found = _node_wait(job, me, nodes, pods, ctx, now)
    if found is not None:
        out["pending"], out["estimatedStart"] = (_clean(part) for part in found)
    return out


def _clean(value: Any) -> Any:
    """Drop None values (the stored status never holds nulls), recursively."""
    if isinstance(value, Mapping):
        return {k: _clean(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _reservation(
    job: GryviaAIJob, me: JobFacts, ctx: WaitContext
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A job that opts into a reservation (annotation gryvia.io/reservation) which is not
    active (missing, pending or expired). Reservations have no controller yet (issue 18): the
    operator passes `WaitContext.reservations=None` until one exists, and nothing is reported."""
    name = (job.metadata.annotations or {}).get(ANNOTATION_RESERVATION)
    if not name or ctx.reservations is None:
        return None
    state = ctx.reservations.get(name)
    if state == "active":
        return None
    text = (
        f"reservation {name} does not exist"
        if state is None
        else f"reservation {name} is {state or 'not active yet'}"
    )
    pending = {"kind": "Reservation", "resource": f"reservation {name}", "needed": me.total}
    return {**pending, "message": text}, {"unknownReason": text}
