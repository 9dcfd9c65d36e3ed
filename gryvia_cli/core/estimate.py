"""The cost estimate `gryvia submit` prints with its plan: per hour, for the job's timeout,
and its budget impact (pure).

Prices come from the GryviaGpuSku catalog only (`select_rate`), restricted to the tenant's
`allowedSkus` in a `tenant-<x>` namespace of an existing tenant, like the operator's metering.
Hard budgets (a covering GryviaQuota with `budget.hardLimit`, a GryviaBudget in scope enforced
with `block`) are checked with the admission gate's own rule,
`gryvia_operator.api.budgetgate.check_budgets`, so submit says what a gated operator will
do: the estimate is total GPUs x the timeout's hours (one hour without a timeout, the gate's
default) x the rate, against `status.budgetStatus.spentThisMonth` of a quota and
`status.usage` of a budget. Soft monthly budgets (no hard limit) only warn when `spent` plus
the estimate passes them. A concrete GPU type no enabled SKU prices (for the tenant) is
`unpriced` (`core.unpriced`): said in the estimate and warned about, never costed 0.00.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gryvia_cli.core.cells import plural
from gryvia_cli.core.jobs import JobSummary
from gryvia_cli.core.unpriced import UNPRICED, fix_text
from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.budgetgate import (
    BudgetCheck,
    HardBudget,
    check_budgets,
    estimate_job,
    hard_budgets,
    money,
)
from gryvia_operator.api.gputype import gpu_type_is_any
from gryvia_operator.api.helpers import parse_duration
from gryvia_operator.api.pricing import Rate, select_rate

if TYPE_CHECKING:  # only annotations: building the models is left to whoever validates them
    from gryvia_operator.api import GryviaBudget, GryviaGpuSku, GryviaQuota, GryviaTenant

BUDGET_CURRENCY = "USD"


@dataclass(frozen=True)
class CostEstimate:
    """What a job would cost: the rate (None without a catalog price), per hour and for the
    timeout, and budget warnings."""

    job: str
    gpus: int
    gpu_type: str
    rate: Rate | None
    timeout: str
    timeout_seconds: int | None
    warnings: tuple[str, ...] = ()
    impact: BudgetCheck | None = None
    """The admission gate's verdict on the job's hard budgets (None: no price to check)."""
    hard: tuple[HardBudget, ...] = ()
    """The hard budgets governing the job, in the gate's order."""

    @property
    def per_hour(self) -> float | None:
        """Total GPUs x the rate per GPU-hour; None without a price."""
        return None if self.rate is None else self.rate.cost(self.gpus)

    @property
    def for_timeout(self) -> float | None:
        """The cost of running until the timeout; None without a price or a timeout."""
        if self.rate is None or self.timeout_seconds is None:
            return None
        return self.rate.cost(self.gpus * self.timeout_seconds / 3600)

    @property
    def unpriced(self) -> bool:
        """True when the job names a GPU type no SKU prices: its runs are metered unpriced
        (a job of any type is priced by its nodes' type when it runs)."""
        return self.rate is None and not gpu_type_is_any(self.gpu_type or None)

    def lines(self) -> list[str]:
        """The estimate as indented plan lines for stderr."""
        if self.unpriced:
            return [f"  estimated cost: {UNPRICED} (no catalog price for GPU type {self.gpu_type})"]
        if self.rate is None:
            return [f"  cost: no catalog price for GPU type {self.gpu_type or 'any'}"]
        rate = self.rate
        out = [
            f"  estimated cost: {self.per_hour:.2f} {rate.currency}/hour "
            f"({plural(self.gpus, 'GPU')} x "
            f"{rate.per_gpu_hour:.2f} {rate.currency} per GPU-hour, SKU {rate.sku})"
        ]
        if self.for_timeout is not None:
            out.append(
                f"  estimated cost for its timeout ({self.timeout}): "
                f"{self.for_timeout:.2f} {rate.currency}"
            )
        return out + self.impact_lines()

    def impact_lines(self) -> list[str]:
        """One `budget impact` line per hard budget: spend + estimate of the limit."""
        check = self.impact
        if check is None or check.estimate.cost is None:
            return []
        cost = check.estimate.cost
        out = []
        for budget in self.hard:
            if budget.limit_usd is None:
                continue
            if budget.spent_usd is None:
                out.append(f"  budget impact on {budget.name}: not checked ({budget.problem})")
                continue
            after = budget.spent_usd + cost
            verdict = "over the limit" if after > budget.limit_usd else "within the limit"
            out.append(
                f"  budget impact on {budget.name}: {money(budget.spent_usd)} spent + "
                f"{money(cost)} = {money(after)} of {money(budget.limit_usd)} USD ({verdict})"
            )
        return out


def unpriced_warning(job: str, gpu_type: str, allowed: Sequence[str] | None) -> str:
    """The warning of a job whose GPU type no enabled SKU (of the tenant's `allowed` SKUs)
    prices: what metering will do with its runs, and the fix."""
    scope = "that the tenant may use " if allowed else ""
    return (
        f"{job}: no enabled GryviaGpuSku {scope}prices GPU type {gpu_type}, so its runs are "
        "metered unpriced (in no cost or budget, and a month with them is finalized only with "
        f"--allow-unpriced); {fix_text([gpu_type])}"
    )


def gate_warnings(check: BudgetCheck) -> list[str]:
    """What the admission gate would say of the job: a refusal, or what it could not check."""
    if check.refused:
        spent = [o.budget.name for o in check.overruns if o.spent >= o.limit]
        without = (
            f"without the gate, {', '.join(spent)} is already at its limit and its enforcement"
            " holds or rejects the job (after any grace period)"
            if spent
            else "without the gate it is admitted while the budget is not spent yet"
        )
        return [
            "the estimate would take a hard budget over its limit: "
            + "; ".join(o.describe() for o in check.overruns)
            + f". An operator with the admission gate on refuses the job; {without}"
        ]
    return [check.message()] if check.unchecked else []


def allowed_skus_for(namespace: str, tenants: Iterable[GryviaTenant]) -> Sequence[str] | None:
    """The `allowedSkus` of the tenant owning `namespace` (`tenant-<x>`), else None."""
    for tenant in tenants:
        if tenant_namespace(tenant.name) == namespace:
            return tenant.spec.allowed_skus or None
    return None


def budget_warnings(
    namespace: str, amount: float, basis: str, quotas: Iterable[GryviaQuota]
) -> list[str]:
    """A warning per quota covering `namespace` whose monthly budget `amount` more would
    pass."""
    out = []
    for quota in quotas:
        budget = quota.spec.budget
        if namespace not in quota.spec.namespaces or budget is None:
            continue
        if budget.monthly_budget is None or budget.hard_limit:
            continue  # hard budgets: the admission gate's rule (`impact`)
        status = quota.status.budget_status if quota.status else None
        spent = (status.spent_this_month if status else None) or 0.0
        if spent + amount <= budget.monthly_budget:
            continue
        out.append(
            f"the estimate ({amount:.2f} USD {basis}) would cross the monthly budget of team "
            f"{quota.spec.team}: {spent:.2f} of {budget.monthly_budget:.2f} USD spent"
        )
    return out


def _quota_spend(quota: GryviaQuota) -> float | None:
    """Month-to-date spend the operator wrote on the quota, None before it did."""
    status = quota.status.budget_status if quota.status else None
    return status.spent_this_month if status else None


def estimate_cost(
    job: JobSummary,
    namespace: str,
    skus: Iterable[GryviaGpuSku],
    tenants: Iterable[GryviaTenant],
    quotas: Iterable[GryviaQuota],
    budgets: Iterable[GryviaBudget] = (),
    now: dt.datetime | None = None,
) -> CostEstimate | None:
    """The estimate of a GPU job in `namespace`; None for a CPU-only job. `budgets` are the
    GryviaBudgets read (for the gate's check), `now` the UTC time their periods are judged
    at (None: not judged stale)."""
    if job.cpu_only:
        return None
    tenants = list(tenants)
    quotas = list(quotas)
    allowed = allowed_skus_for(namespace, tenants)
    rate = select_rate(job.gpu_type or None, list(skus), allowed)
    seconds: int | None = None
    if job.timeout:
        try:
            seconds = parse_duration(job.timeout)
        except ValueError:
            seconds = None
    estimate = CostEstimate(job.name, job.total_gpus, job.gpu_type, rate, job.timeout, seconds)
    tenant = next((t.name for t in tenants if tenant_namespace(t.name) == namespace), None)
    spends = [(q, _quota_spend(q)) for q in quotas]
    hard = hard_budgets(namespace, tenant, spends, budgets, now, job.submitter, job.project)
    impact = check_budgets(estimate_job(job.total_gpus, seconds, rate), hard)
    gate = gate_warnings(impact)
    if estimate.unpriced:
        gate.insert(0, unpriced_warning(job.name, job.gpu_type, allowed))
    warnings = gate
    if rate is not None and rate.currency == BUDGET_CURRENCY:
        if estimate.for_timeout is not None:
            amount, basis = estimate.for_timeout, f"for its timeout {job.timeout}"
        else:
            amount, basis = estimate.per_hour or 0.0, "for one hour, no timeout set"
        warnings = budget_warnings(namespace, amount, basis, quotas) + gate
    return CostEstimate(
        job.name,
        job.total_gpus,
        job.gpu_type,
        rate,
        job.timeout,
        seconds,
        tuple(warnings),
        impact,
        tuple(hard),
    )
