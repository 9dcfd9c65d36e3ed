"""Budget enforcement at job admission: warn, block and throttle. Pure.

For a Pending or Queued job with GPUs, every enforced GryviaBudget whose scope covers the
job's namespace is asked, using the state its controller last wrote (`status.state`) and the
jobs holding GPUs now:

- block, state `blocked`: a Pending job is Rejected (reason BudgetExceeded) with a message
  naming the budget, its spend and limit; a job already Queued stays Queued with that message;
- throttle: at most `limits.maxConcurrentJobs` jobs (and `maxConcurrentGPUs` GPUs) are in
  flight (Scheduling or Running) in scope; the jobs the throttle holds are released highest
  priority, then oldest first (reason BudgetThrottled). A job that cannot start (Pending, held
  for another reason) takes no slot and does not queue ahead;
- warn, state warning/exceeded/blocked: admitted, with reason BudgetWarning (condition
  Admitted=True carries the message; the handler posts one Warning event per job).

A rejection by any budget wins, then a hold, then a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gryvia_operator.api.budget import GryviaBudget
from gryvia_operator.api.budgetscope import Scope
from gryvia_operator.api.helpers import ACTIVE_PHASES, JobPhase
from gryvia_operator.api.messages import gpu_count, job_count
from gryvia_operator.reconcile.admission import ALLOW, AdmissionDecision
from gryvia_operator.reconcile.quotas import JobView, queue_order

WARN_STATES = frozenset({"warning", "exceeded", "blocked"})


@dataclass(frozen=True)
class BudgetView:
    """An enforced budget with its scope, as the gate reads it."""

    budget: GryviaBudget
    scope: Scope

    @property
    def name(self) -> str:
        """The budget's name."""
        return self.budget.name

    @property
    def state(self) -> str:
        """status.state (active when not computed yet)."""
        return (self.budget.status.state if self.budget.status else None) or "active"


def spend_text(budget: GryviaBudget) -> str:
    """`<spent> of <limit> USD (<percent> %)` (GPU-hours when there is no cost limit)."""
    status = budget.status
    usage = status.usage if status else None
    util = status.utilization if status else None
    period = status.current_period if status else None
    percent = util.percent if util and util.percent is not None else 0.0
    limits = budget.spec.limits
    if limits is not None and limits.cost_usd is not None:
        limit = period.cost_limit_usd if period and period.cost_limit_usd else limits.cost_usd
        spent = usage.cost_usd if usage and usage.cost_usd else 0.0
        return f"{spent:.2f} of {limit:.2f} USD ({percent:.1f} %)"
    hours = usage.gpu_hours if usage and usage.gpu_hours else 0.0
    limit_h = limits.gpu_hours if limits and limits.gpu_hours is not None else 0.0
    return f"{hours:.2f} of {limit_h:.2f} GPU-hours ({percent:.1f} %)"


THROTTLED = "BudgetThrottled"


def in_flight(job: JobView) -> bool:
    """True while `job` takes one of a throttle's slots: it runs (phase Running) or its pods
    are being placed (Scheduling). A job that cannot start (Pending: no node has its GPU type,
    or held by a quota) takes none, however long it waits."""
    return job.phase in ACTIVE_PHASES


def _slots_text(running: Sequence[JobView], starting: int, ahead: int) -> str:
    text = f"{job_count(len(running))}, {gpu_count(sum(j.gpus for j in running))} running"
    if starting:
        text += f", {job_count(starting)} starting"
    if ahead:
        text += f", {job_count(ahead)} ahead in the throttle's queue"
    return text


def _throttle(job: JobView, view: BudgetView, jobs: Sequence[JobView]) -> AdmissionDecision:
    limits = view.budget.spec.limits
    max_jobs = limits.max_concurrent_jobs if limits else None
    max_gpus = limits.max_concurrent_gpus if limits else None
    if not max_jobs and not max_gpus:
        return ALLOW
    mine = [j for j in jobs if j.gpus and view.scope.covers_job(j.namespace, j.user, j.project)]
    busy = [j for j in mine if in_flight(j) and j.key != job.key]
    running = [j for j in busy if j.phase == JobPhase.RUNNING]
    # Only jobs waiting for a throttle alone queue ahead: one held for another reason (no
    # node has its GPU type, a quota) would otherwise keep a slot it cannot use.
    held = [j for j in mine if j.held_by == THROTTLED and not in_flight(j) and j.key != job.key]
    held.append(job)
    count, gpus, ahead = len(busy), sum(j.gpus for j in busy), 0
    for candidate in queue_order(held):
        over_jobs = bool(max_jobs) and count + 1 > (max_jobs or 0)
        over_gpus = bool(max_gpus) and gpus + candidate.gpus > (max_gpus or 0)
        if over_jobs or over_gpus:
            limit = job_count(max_jobs or 0) if over_jobs else gpu_count(max_gpus or 0)
            slots = _slots_text(running, len(busy) - len(running), ahead)
            return AdmissionDecision(
                "queue",
                THROTTLED,
                f"held: budget {view.name} allows {limit} at once in scope ({slots})",
            )
        if candidate.key == job.key:
            return ALLOW
        count, gpus, ahead = count + 1, gpus + candidate.gpus, ahead + 1
    return ALLOW


def decide(
    job: JobView, budgets: Iterable[BudgetView], jobs: Sequence[JobView]
) -> AdmissionDecision:
    """The budgets' verdict for a Pending or Queued `job`; `jobs` are all known jobs (for
    throttle). Jobs without GPUs and budgets not enforced are never held."""
    if job.gpus == 0:
        return ALLOW
    found: list[AdmissionDecision] = []
    for view in sorted(budgets, key=lambda v: v.name):
        enf = view.budget.spec.enforcement
        covered = view.scope.covers_job(job.namespace, job.user, job.project)
        if enf is None or not enf.enabled or not covered:
            continue
        if enf.action == "block" and view.state == "blocked":
            text = f"budget {view.name} is spent: {spend_text(view.budget)}"
            if job.phase == JobPhase.QUEUED:
                found.append(AdmissionDecision("queue", "BudgetExceeded", f"held: {text}"))
            else:
                found.append(AdmissionDecision("reject", "BudgetExceeded", text))
        elif enf.action == "throttle":
            found.append(_throttle(job, view, jobs))
        elif enf.action == "warn" and view.state in WARN_STATES:
            text = f"budget {view.name} is {view.state}: {spend_text(view.budget)}"
            found.append(AdmissionDecision("allow", "BudgetWarning", text))
    for verdict in ("reject", "queue"):
        for decision in found:
            if decision.verdict == verdict:
                return decision
    warnings = [d for d in found if d.reason == "BudgetWarning"]
    return warnings[0] if warnings else ALLOW


def combine(quota: AdmissionDecision, budget: AdmissionDecision) -> AdmissionDecision:
    """The quota gate's and the budgets' verdicts as one: a rejection wins, then a hold; a
    budget warning on an admitted job keeps the quota's message after its own."""
    for verdict in ("reject", "queue"):
        for decision in (quota, budget):
            if decision.verdict == verdict:
                return decision
    if budget.reason == "BudgetWarning":
        text = budget.message + (f"; {quota.message}" if quota.message else "")
        return AdmissionDecision("allow", budget.reason, text)
    return quota
