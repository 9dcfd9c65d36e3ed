"""The blockers of a waiting job as `status.pending` / `status.estimatedStart` dicts, from
plain facts (free GPUs per node, who holds them, the jobs and the quota's usage).

Shared by the operator (`reconcile.pending`, from what its watches hold) and
`gryvia submit --explain` (from what the CLI reads), so both give the same kind, numbers and
words. Pure; times are whole seconds in UTC.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gryvia_operator.api.jobfacts import JobFacts, history
from gryvia_operator.api.messages import gpu_count, user_limit_text
from gryvia_operator.api.pending import MAX_LISTED, never_fits
from gryvia_operator.api.periods import period_window
from gryvia_operator.api.startestimate import (
    Forecast,
    Running,
    Waiting,
    expected_end,
    fits,
    forecast,
)

QUOTA_SLOT = "quota"
Found = tuple[dict[str, Any], dict[str, Any]]
"""(status.pending, status.estimatedStart) as dicts with wire names."""


def stamp(when: dt.datetime) -> str:
    """RFC 3339 in UTC with whole seconds, as Kubernetes writes times."""
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class QuotaFacts:
    """One GryviaQuota's limits and usage as the blocker needs them."""

    team: str
    namespaces: frozenset[str]
    max_gpus: int
    allocated_gpus: int
    running_jobs: int = 0
    max_running_jobs: int = 0
    spent: Decimal = Decimal(0)
    """Month-to-date spend in USD (`reconcile.quotas.QuotaState.spent`)."""
    monthly_budget: float | None = None
    hard_limit: bool = False
    held: frozenset[str] = frozenset()
    """`namespace/name` of its jobs it holds back (Pending/Queued, not admitted)."""
    max_gpus_per_user: int = 0
    """`maxGPUsPerUser` (0: no per-user limit)."""

    @property
    def free(self) -> int:
        """GPUs the quota still allows (0 when over)."""
        return max(self.max_gpus - self.allocated_gpus, 0)

    @property
    def budget_spent(self) -> bool:
        """A hard monthly budget is spent (reaching the limit or more, compared in Decimal): its
        jobs wait for the next month."""
        limit = self.monthly_budget
        return self.hard_limit and limit is not None and self.spent >= Decimal(repr(limit))


def shown_name(me: JobFacts, other: JobFacts) -> str:
    """`name` in the same namespace, else `namespace/name`."""
    return other.name if other.namespace == me.namespace else other.key


def running_of(
    me: JobFacts, other: JobFacts, held: Mapping[str, int], jobs: Sequence[JobFacts], now: Any
) -> Running:
    """A running job with its expected end (timeout, else history, else unknown)."""
    past = history(jobs, other.namespace, other.gpu_type)
    name = shown_name(me, other)
    end, basis, why = expected_end(name, other.start, other.timeout_seconds, past, now)
    return Running(name, dict(held), end, basis, why)


def waiting_of(
    me: JobFacts, other: JobFacts, per_pod: int, pods: int, jobs: Sequence[JobFacts]
) -> Waiting:
    """A job ahead with how long it should run (timeout, else history, else unknown)."""
    name = shown_name(me, other)
    if other.timeout_seconds:
        return Waiting(name, per_pod, pods, dt.timedelta(seconds=other.timeout_seconds))
    past = history(jobs, other.namespace, other.gpu_type)
    why = f"job {name} ahead has no timeout and no finished job like it"
    return Waiting(name, per_pod, pods, past, "" if past else why, "history")


def queue_key(job: JobFacts) -> tuple[int, dt.datetime, str]:
    """Release order: highest priority first, then oldest, then by `namespace/name` (the
    quota gate's `queue_order`)."""
    return (-job.priority, job.created, job.key)


def ahead_of(me: JobFacts, candidates: Iterable[JobFacts]) -> list[JobFacts]:
    """The candidates before `me` in release order."""
    mine = queue_key(me)
    return sorted((j for j in candidates if queue_key(j) < mine), key=queue_key)


def estimate_dict(result: Forecast) -> dict[str, Any]:
    """`status.estimatedStart` of a forecast."""
    out: dict[str, Any] = {}
    if result.earliest is not None:
        out["earliest"] = stamp(result.earliest)
    if result.likely is not None:
        out["likely"] = stamp(result.likely)
    else:
        out["unknownReason"] = result.unknown_reason or "no estimate"
    return out


def holders_list(result: Forecast) -> list[dict[str, Any]]:
    """`status.pending.holders` of a forecast (at most MAX_LISTED)."""
    out = []
    for run in result.holders[:MAX_LISTED]:
        item: dict[str, Any] = {"name": run.name, "gpus": sum(run.held.values())}
        if run.end is not None:
            item["expectedEnd"] = stamp(run.end)
        item["basis"] = run.basis
        out.append(item)
    return out


def ahead_dict(me: JobFacts, ahead: Sequence[JobFacts]) -> dict[str, Any]:
    """`status.pending.ahead`."""
    block: dict[str, Any] = {"count": len(ahead)}
    if ahead:
        block["names"] = [shown_name(me, j) for j in ahead[:MAX_LISTED]]
    return block


def free_in_quota(quotas: Sequence[QuotaFacts]) -> int | None:
    """GPUs the tightest quota still allows (may be negative when over); None without."""
    return min((q.max_gpus - q.allocated_gpus for q in quotas), default=None)


def never_blocker(
    me: JobFacts,
    gpu_type: str | None,
    inventory: Iterable[tuple[str, int]],
    sku_types: Iterable[str],
    quotas: Sequence[QuotaFacts],
) -> Found | None:
    """NoSuchGPUType / TooLarge (`pending.never_fits`), or None."""
    quota_max = min((q.max_gpus for q in quotas), default=None)
    found = never_fits(gpu_type, me.per_pod, me.pods, inventory, sku_types, quota_max)
    if found is None:
        return None
    pending = {"kind": found.kind, "resource": found.resource, "needed": me.total}
    return {**pending, "message": found.message}, {"unknownReason": f"never: {found.message}"}


def quota_blocker(
    me: JobFacts, quotas: Sequence[QuotaFacts], jobs: Sequence[JobFacts], now: dt.datetime
) -> Found | None:
    """The first quota that holds `me`: Budget (a hard monthly budget is spent; it starts
    when the month renews), Quota (over maxGPUs or maxRunningJobs, or its submitter over
    maxGPUsPerUser: `resource` is then `quota <team>, user <name>`) or Priority (room, but
    earlier jobs of the team wait first: no backfill); None when no quota holds it. The
    estimate replays the quota's running jobs' ends and the held jobs ahead, strictly in
    order (for the per-user limit: the user's own jobs only)."""
    base: dict[str, Any] = {"needed": me.total, "freeInQuota": free_in_quota(quotas)}
    for quota in quotas:
        team = quota.team
        if quota.budget_spent:
            renews = period_window("month", now)[1]
            text = (
                f"the monthly budget of team {team} is spent ({quota.spent:.2f} USD, hard "
                f"limit); it renews {renews:%Y-%m-%d}"
            )
            pending = {"kind": "Budget", "resource": f"budget {team}", **base, "message": text}
            return pending, {"earliest": stamp(renews), "likely": stamp(renews)}
        mine = [j for j in jobs if j.namespace in quota.namespaces and j.total and j.key != me.key]
        user_found = _user_blocker(me, quota, mine, jobs, now, base)
        ahead = ahead_of(me, [j for j in mine if j.key in quota.held])
        over_gpus = me.total > quota.free
        limit = quota.max_running_jobs
        over_jobs = limit > 0 and quota.running_jobs >= limit
        if user_found is not None and not (over_gpus or over_jobs):
            return user_found
        if not (over_gpus or over_jobs or ahead):
            continue
        running = [running_of(me, j, {QUOTA_SLOT: j.total}, jobs, now) for j in mine if j.holds]
        queue = [waiting_of(me, j, j.total, 1, jobs) for j in ahead]
        ask = Waiting(me.name, me.total, 1)
        result = forecast({QUOTA_SLOT: quota.free}, ask, running, queue, now=now, strict=True)
        if over_gpus:
            kind = "Quota"
            text = (
                f"team {team} uses {quota.allocated_gpus} of {gpu_count(quota.max_gpus)}, "
                f"this job needs {me.total}"
            )
        elif over_jobs:
            kind = "Quota"
            text = f"team {team} runs {quota.running_jobs} of {limit} jobs allowed at once"
        else:
            kind, text = "Priority", f"behind earlier jobs of team {team}"
        pending = {
            "kind": kind,
            "resource": f"quota {team}",
            **base,
            "ahead": ahead_dict(me, ahead),
            "holders": holders_list(result),
            "message": text,
        }
        return pending, estimate_dict(result)
    return None


def _user_blocker(
    me: JobFacts,
    quota: QuotaFacts,
    mine: Sequence[JobFacts],
    jobs: Sequence[JobFacts],
    now: dt.datetime,
    base: Mapping[str, Any],
) -> Found | None:
    """Quota, when `me`'s submitter already holds so many GPUs under `quota` that `me` would
    pass `maxGPUsPerUser` (None without a limit, a submitter, or a breach); the estimate
    replays the user's own running jobs and held jobs ahead."""
    limit = quota.max_gpus_per_user
    if not (limit and me.user):
        return None
    own = [j for j in mine if j.user == me.user]
    held = sum(j.total for j in own if j.holds)
    ahead = ahead_of(me, [j for j in own if j.key in quota.held])
    if held + me.total <= limit and not ahead:
        return None
    running = [running_of(me, j, {QUOTA_SLOT: j.total}, jobs, now) for j in own if j.holds]
    queue = [waiting_of(me, j, j.total, 1, jobs) for j in ahead]
    free = {QUOTA_SLOT: max(limit - held, 0)}
    result = forecast(free, Waiting(me.name, me.total, 1), running, queue, now=now, strict=True)
    pending = {
        "kind": "Quota",
        "resource": f"quota {quota.team}, user {me.user}",
        **base,
        "ahead": ahead_dict(me, ahead),
        "holders": holders_list(result),
        "message": user_limit_text(me.user, held, limit, me.total, quota.team),
    }
    return pending, estimate_dict(result)


def node_blocker(
    me: JobFacts,
    shown: str,
    free: Mapping[str, int],
    held: Mapping[tuple[str, str], Mapping[str, int]],
    jobs: Sequence[JobFacts],
    now: dt.datetime,
    quotas: Sequence[QuotaFacts] = (),
    totals: Mapping[str, int] | None = None,
) -> Found:
    """Resources: the GPUs `me` needs, those free now on the nodes that could take its pods
    (`free`: node -> free GPUs; `totals`: node -> all its GPUs, default `free`), the unplaced
    jobs ahead asking for the same GPU type (not those that could not fit these nodes even
    empty), and the running jobs on those nodes (`held`: (namespace, job) -> node -> GPUs)
    whose end frees enough, with the estimate. `shown` names the GPUs (`H100`, or `GPUs` for
    any type)."""
    sizes = totals if totals is not None else free
    facts = {(j.namespace, j.name): j for j in jobs}
    running = [running_of(me, facts[k], s, jobs, now) for k, s in held.items() if k in facts]
    rivals = [
        j
        for j in jobs
        if j.key != me.key
        and j.phase == "Pending"
        and not j.placed
        and j.total
        and j.gpu_type == me.gpu_type
        and fits(sizes, j.per_pod, j.pods)
    ]
    ahead = ahead_of(me, rivals)
    queue = [waiting_of(me, j, j.per_pod, j.pods, jobs) for j in ahead]
    result = forecast(free, Waiting(me.name, me.per_pod, me.pods), running, queue, now=now)
    total_free = sum(free.values())
    pending: dict[str, Any] = {
        "kind": "Resources",
        "resource": shown,
        "needed": me.total,
        "freeNow": total_free,
        "freeInQuota": free_in_quota(quotas),
        "ahead": ahead_dict(me, ahead),
        "holders": holders_list(result),
        "message": f"needs {me.total} {shown} on {me.pods} node(s), "
        f"{total_free} free on nodes that could take its pods",
    }
    if not free and not result.holders:
        return pending, {"unknownReason": f"no usable node can take its pods ({shown})"}
    return pending, estimate_dict(result)


def clean(value: Any) -> Any:
    """Drop None values (the stored status never holds nulls), recursively."""
    if isinstance(value, Mapping):
        return {k: clean(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value
