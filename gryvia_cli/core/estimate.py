"""The cost estimate `gryvia submit` prints with its plan: per hour, for the job's timeout,
and whether it would take the team past its monthly budget (pure).

Prices come from the GryviaGpuSku catalog only (`select_rate`), restricted to the tenant's
`allowedSkus` in a `tenant-<x>` namespace of an existing tenant, like the operator's metering.
A team's budget is that of every GryviaQuota covering the job's namespace: the warning fires
when `status.budgetStatus.spentThisMonth` plus the estimate passes `budget.monthlyBudget`.
The estimate is the timeout's cost, or one hour's when the job has no timeout.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gryvia_cli.core.cells import plural
from gryvia_cli.core.jobs import JobSummary
from gryvia_operator.api import GryviaGpuSku, GryviaQuota, GryviaTenant, parse_duration
from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.pricing import Rate, select_rate

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

    def lines(self) -> list[str]:
        """The estimate as indented plan lines for stderr."""
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
        return out


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
        if budget.monthly_budget is None:
            continue
        status = quota.status.budget_status if quota.status else None
        spent = (status.spent_this_month if status else None) or 0.0
        if spent + amount <= budget.monthly_budget:
            continue
        hard = " (hard limit: its jobs wait once the budget is spent)" if budget.hard_limit else ""
        out.append(
            f"the estimate ({amount:.2f} USD {basis}) would cross the monthly budget of team "
            f"{quota.spec.team}: {spent:.2f} of {budget.monthly_budget:.2f} USD spent{hard}"
        )
    return out


def estimate_cost(
    job: JobSummary,
    namespace: str,
    skus: Iterable[GryviaGpuSku],
    tenants: Iterable[GryviaTenant],
    quotas: Iterable[GryviaQuota],
) -> CostEstimate | None:
    """The estimate of a GPU job in `namespace`; None for a CPU-only job."""
    if job.cpu_only:
        return None
    rate = select_rate(job.gpu_type or None, list(skus), allowed_skus_for(namespace, tenants))
    seconds: int | None = None
    if job.timeout:
        try:
            seconds = parse_duration(job.timeout)
        except ValueError:
            seconds = None
    estimate = CostEstimate(job.name, job.total_gpus, job.gpu_type, rate, job.timeout, seconds)
    if rate is None or rate.currency != BUDGET_CURRENCY:
        return estimate
    if estimate.for_timeout is not None:
        amount, basis = estimate.for_timeout, f"for its timeout {job.timeout}"
    else:
        amount, basis = estimate.per_hour or 0.0, "for one hour, no timeout set"
    warnings = budget_warnings(namespace, amount, basis, quotas)
    return CostEstimate(
        job.name, job.total_gpus, job.gpu_type, rate, job.timeout, seconds, tuple(warnings)
    )
