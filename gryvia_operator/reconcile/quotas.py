"""Quota admission and quota status: which waiting jobs may start, which wait, which never fit.

Pure functions. Rule: a job over quota is held in phase Queued and released automatically,
highest priority then oldest first, when capacity frees up. A job is governed by every
GryviaQuota whose `namespaces` hold its namespace. CPU-only jobs are never held.

- never fits -> Rejected: GPU type not allowed (an unset or `any` type counts as not allowed
  when the quota lists types, so it cannot bypass them), more GPUs than `maxGPUsPerJob` or than
  `maxGPUs` (or than `maxGPUsPerUser`, for a job with a submitter), no enabled SKU the tenant
  may use for the type, or the queue is full (`maxQueuedJobs`);
- over quota now -> Queued: the GPUs held by admitted jobs plus this job's exceed `maxGPUs`, the
  admitted jobs reach `maxRunningJobs`, a hard monthly budget is spent, or the GPUs held by the
  job's submitter (annotation gryvia.io/submitted-by) plus this job's exceed `maxGPUsPerUser`
  (such a hold does not stop other users' jobs behind it);
- else admitted.

A MIG slice (`H100-MIG-3G.40GB`) is allowed where its parent type is, and counts as one GPU
against `maxGPUs` (conservative: quotas are whole numbers).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from gryvia_operator.api import GryviaQuota
from gryvia_operator.api.gputype import gpu_type_is_any
from gryvia_operator.api.helpers import ACTIVE_PHASES, TERMINAL_PHASES, JobPhase, total_gpus
from gryvia_operator.api.messages import gpu_count, user_limit_text
from gryvia_operator.api.mig import type_listed
from gryvia_operator.api.names import LABEL_PROJECT
from gryvia_operator.api.periods import elapsed_fraction
from gryvia_operator.api.submitter import submitter_of
from gryvia_operator.reconcile.admission import ALLOW
from gryvia_operator.reconcile.admission import AdmissionDecision as Decision


@dataclass(frozen=True)
class JobView:
    """What quota decisions need of one GryviaAIJob."""

    namespace: str
    name: str
    created: dt.datetime
    priority: int
    phase: str
    gpus: int  # total GPUs of the job
    gpu_type: str | None
    admitted: bool = False  # passed the gate before (workload created)
    user: str = ""  # the submitter (annotation gryvia.io/submitted-by), "" when unknown
    held_by: str = ""  # reason of condition Admitted=False (e.g. BudgetThrottled), else ""
    project: str = ""  # label gryvia.io/project, "" when none

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return f"{self.namespace}/{self.name}"

    @property
    def holds_gpus(self) -> bool:
        """True while the job counts against `maxGPUs` and `maxRunningJobs`."""
        if self.phase in TERMINAL_PHASES:
            return False
        return self.phase in ACTIVE_PHASES or self.admitted


@dataclass
class QuotaState:
    """Usage of one quota derived from its jobs and spend."""

    quota: GryviaQuota
    allocated_gpus: int = 0
    running_jobs: int = 0
    queued_jobs: int = 0
    spent: Decimal = Decimal(0)
    """Month-to-date spend in USD (`controller.policies.spend`), compared in Decimal."""
    held: list[JobView] = field(default_factory=list)
    user_gpus: dict[str, int] = field(default_factory=dict)
    """GPUs held by each known submitter's jobs (unknown submitters are not counted)."""

    @property
    def team(self) -> str:
        """The quota's team."""
        return self.quota.spec.team


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def job_view(body: Mapping[str, Any]) -> JobView:
    """Project a GryviaAIJob body (as the API returns it) onto what quota decisions read.

    Cheap (no model validation): thousands of jobs are projected on every decision. A job is
    `admitted` once its `Admitted` condition is True (quota reserved, even while no node fits).
    """
    meta, spec = body.get("metadata") or {}, body.get("spec") or {}
    status = body.get("status") or {}
    dist = spec.get("distributed") or {}
    enabled = bool(dist.get("enabled"))
    gpus = total_gpus(
        gpus=_int(spec.get("gpus")),
        distributed=enabled,
        nodes=_int(dist.get("nodes")) or None,
        gpus_per_node=_int(dist.get("gpusPerNode")) or None,
    )
    created = meta.get("creationTimestamp") or "1970-01-01T00:00:00Z"
    when = dt.datetime.fromisoformat(str(created).replace("Z", "+00:00"))
    admitted = any(
        c.get("type") == "Admitted" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
    held_by = next(
        (
            str(c.get("reason") or "")
            for c in status.get("conditions") or []
            if c.get("type") == "Admitted" and c.get("status") == "False"
        ),
        "",
    )
    return JobView(
        str(meta.get("namespace", "")),
        str(meta.get("name", "")),
        when,
        _int(spec.get("priority")),
        str(status.get("phase") or ""),
        gpus,
        spec.get("gpuType") or None,
        admitted,
        submitter_of(body),
        held_by,
        str((meta.get("labels") or {}).get(LABEL_PROJECT) or ""),
    )


def governing(namespace: str, quotas: Iterable[GryviaQuota]) -> list[GryviaQuota]:
    """Return the quotas whose `spec.namespaces` contain `namespace`, by name."""
    found = [q for q in quotas if namespace in q.spec.namespaces]
    return sorted(found, key=lambda q: q.name)


def queue_order(jobs: Iterable[JobView]) -> list[JobView]:
    """Return jobs in release order: highest priority first, then oldest, then by name."""
    return sorted(jobs, key=lambda j: (-j.priority, j.created, j.key))


def static_rejection(job: JobView, quota: GryviaQuota) -> Decision | None:
    """Return a Rejected decision when `job` can never run under `quota`, else None."""
    team, limits = quota.spec.team, quota.spec.gpu_quota
    allowed = [t for t in limits.allowed_gpu_types or [] if t]
    requested = job.gpu_type or "any"
    if allowed and not any(type_listed(requested, t) for t in allowed):
        return Decision(
            "reject",
            "GpuTypeNotAllowed",
            f'GPU type "{requested}" is not allowed for team {team} '
            f"(allowed: {', '.join(allowed)})",
        )
    if limits.max_gpus_per_job and job.gpus > limits.max_gpus_per_job:
        return Decision(
            "reject",
            "QuotaExceeded",
            f"Job requests {job.gpus} GPUs, exceeds max {limits.max_gpus_per_job} "
            f"per job for team {team}",
        )
    if job.gpus > limits.max_gpus:
        return Decision(
            "reject",
            "QuotaExceeded",
            f"Job requests {job.gpus} GPUs, more than the {gpu_count(limits.max_gpus)} "
            f"team {team} may use at once",
        )
    per_user = limits.max_gpus_per_user
    if per_user and job.user and job.gpus > per_user:
        return Decision(
            "reject",
            "QuotaExceeded",
            f"Job requests {job.gpus} GPUs, more than the {gpu_count(per_user)} one user may "
            f"hold at once in team {team} (user {job.user})",
        )
    return None


def sku_rejection(
    job: JobView, tenant: str | None, enabled_types: Sequence[str] | None
) -> Decision | None:
    """Reject when the tenant restricts SKUs (`enabled_types` not None) and none covers the
    job's GPU type. `enabled_types` are the GPU types with an enabled SKU the tenant may use."""
    if enabled_types is None or job.gpus == 0 or gpu_type_is_any(job.gpu_type):
        return None
    if any(type_listed(job.gpu_type, t) for t in enabled_types):
        return None
    return Decision(
        "reject",
        "NoEnabledSku",
        f'GPU type "{job.gpu_type}" has no enabled SKU among the SKUs allowed for tenant {tenant}',
    )


def usd(value: Decimal | float | int) -> Decimal:
    """An amount as an exact Decimal; a float is read by its shortest repr (`99.7` is 99.7,
    not 99.7000000000000028...), as the catalog, CRDs and metering write amounts."""
    return value if isinstance(value, Decimal) else Decimal(repr(value))


def quota_state(
    quota: GryviaQuota, jobs: Iterable[JobView], spent: Decimal | float = Decimal(0)
) -> QuotaState:
    """Return the quota's current usage from the jobs in its namespaces (all namespaces' jobs
    may be passed; others are ignored) and `spent`, its month-to-date spend in USD (a float is
    read by `usd`). Held jobs are the non-admitted Pending/Queued ones."""
    state = QuotaState(quota, spent=usd(spent))
    for job in jobs:
        if job.namespace not in quota.spec.namespaces or job.gpus == 0:
            continue
        if job.holds_gpus:
            state.allocated_gpus += job.gpus
            state.running_jobs += 1
            if job.user:
                state.user_gpus[job.user] = state.user_gpus.get(job.user, 0) + job.gpus
        elif job.phase in (JobPhase.PENDING, JobPhase.QUEUED, ""):
            state.held.append(job)
    state.held = queue_order(state.held)
    state.queued_jobs = len(state.held)
    return state


def _budget_spent(state: QuotaState) -> bool:
    budget = state.quota.spec.budget
    return bool(
        budget
        and budget.hard_limit
        and budget.monthly_budget is not None
        and state.spent >= usd(budget.monthly_budget)
    )


budget_spent = _budget_spent
"""True when the quota's hard monthly budget is spent, its month-to-date spend reaching the
limit or more, compared in Decimal (its jobs wait whatever else frees)."""


def plan(state: QuotaState) -> dict[str, Decision]:
    """Decide every held job of one quota, in release order, without backfilling past a job
    that must wait (so big jobs are not starved by small ones). A job held by the per-user
    limit holds back only its own user's later jobs. Returns key -> Decision."""
    quota, limits = state.quota, state.quota.spec.gpu_quota
    decisions: dict[str, Decision] = {}
    allocated, running, blocked, waiting = state.allocated_gpus, state.running_jobs, False, 0
    per_user, users = limits.max_gpus_per_user or 0, dict(state.user_gpus)
    users_blocked: set[str] = set()
    for job in state.held:
        rejected = static_rejection(job, quota)
        if rejected:
            decisions[job.key] = rejected
            continue
        why, user_hold = "", False
        if _budget_spent(state):
            why = (
                f"waiting for quota: the monthly budget of team {state.team} is spent "
                f"({state.spent:.2f} USD, hard limit)"
            )
        elif blocked:
            why = f"waiting for quota behind earlier jobs of team {state.team}"
        elif allocated + job.gpus > limits.max_gpus:
            why = (
                f"waiting for quota: team {state.team} uses {allocated} of "
                f"{gpu_count(limits.max_gpus)}, this job needs {job.gpus}"
            )
        elif limits.max_running_jobs and running >= limits.max_running_jobs:
            why = (
                f"waiting for quota: team {state.team} runs {running} of "
                f"{limits.max_running_jobs} jobs allowed at once"
            )
        elif per_user and job.user and job.user in users_blocked:
            why = f"waiting for quota behind earlier jobs of user {job.user} in team {state.team}"
            user_hold = True
        elif per_user and job.user and users.get(job.user, 0) + job.gpus > per_user:
            why = "waiting for quota: " + user_limit_text(
                job.user, users.get(job.user, 0), per_user, job.gpus, state.team
            )
            user_hold = True
        if why:
            if user_hold:
                users_blocked.add(job.user)
            else:
                blocked = True
            waiting += 1
            if limits.max_queued_jobs and waiting > limits.max_queued_jobs:
                decisions[job.key] = Decision(
                    "reject",
                    "QueueFull",
                    f"the queue of team {state.team} is full ({limits.max_queued_jobs} jobs "
                    "waiting)",
                )
                continue
            decisions[job.key] = Decision("queue", "QuotaExceeded", why)
            continue
        allocated += job.gpus
        running += 1
        if job.user:
            users[job.user] = users.get(job.user, 0) + job.gpus
        decisions[job.key] = ALLOW
    return decisions


def decide(
    job: JobView,
    states: Sequence[QuotaState],
    *,
    tenant: str | None = None,
    enabled_types: Sequence[str] | None = None,
) -> Decision:
    """Return the gate's decision for `job` under all its quotas' states: a rejection by any
    quota wins, then a hold by any, else admit. Jobs without GPUs or quotas are admitted."""
    if job.gpus == 0:
        return ALLOW
    rejected = sku_rejection(job, tenant, enabled_types)
    if rejected:
        return rejected
    decisions = [plan(s).get(job.key, ALLOW) for s in states]
    for verdict in ("reject", "queue"):
        for decision in decisions:
            if decision.verdict == verdict:
                return decision
    if not states:
        return ALLOW
    teams = ", ".join(s.team for s in states)
    return Decision("allow", "QuotaReserved", f"admitted within the quota of team {teams}")


def _cents(amount: Decimal) -> float:
    """An amount rounded half up to the cent, as the JSON number a status holds."""
    return float(amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def quota_status(state: QuotaState, *, now: dt.datetime, gpu_hours: float) -> dict[str, object]:
    """Return the GryviaQuota status: usage, spend against budget with a linear month-end
    projection (USD), and the phase.

    Phases: Active below `maxGPUs`; Full when the admitted jobs hold exactly `maxGPUs` (8 of
    8: the quota is used as allowed, new jobs wait); QuotaExceeded only when they hold more
    (the limit was lowered under running jobs); BudgetExceeded when the monthly budget is
    spent (wins over the others). Ready is False for the two exceeded phases only.
    """
    quota = state.quota
    budget = quota.spec.budget
    limit_gpus = quota.spec.gpu_quota.max_gpus
    phase = "Active"
    if state.allocated_gpus > limit_gpus:
        phase = "QuotaExceeded"
    elif state.allocated_gpus == limit_gpus > 0:
        phase = "Full"
    status: dict[str, object] = {
        "currentUsage": {
            "allocatedGPUs": state.allocated_gpus,
            "runningJobs": state.running_jobs,
            "queuedJobs": state.queued_jobs,
            "gpuHours": round(gpu_hours, 4),
        },
        "lastUpdated": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if budget and budget.monthly_budget is not None:
        projected = float(state.spent) / elapsed_fraction("month", now)
        limit = usd(budget.monthly_budget)
        percent = float(100 * state.spent / limit) if limit else 0.0
        status["budgetStatus"] = {
            "spentThisMonth": _cents(state.spent),
            "remainingBudget": _cents(limit - state.spent),
            "percentUsed": round(percent, 1),
            "projectedSpend": round(projected, 2),
        }
        if limit and state.spent >= limit:
            phase = "BudgetExceeded"
    status["phase"] = phase
    status["conditions"] = [
        {
            "type": "Ready",
            "status": "True" if phase in ("Active", "Full") else "False",
            "reason": phase,
            "message": {
                "Active": "within quota",
                "Full": (
                    f"all {gpu_count(limit_gpus)} in use; {state.queued_jobs} job(s) wait for GPUs"
                ),
                "QuotaExceeded": (
                    f"{gpu_count(state.allocated_gpus)} in use, more than the {limit_gpus} "
                    "allowed; "
                    f"{state.queued_jobs} job(s) wait for GPUs"
                ),
                "BudgetExceeded": "the monthly budget is spent",
            }[phase],
            "lastTransitionTime": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
    ]
    return status
