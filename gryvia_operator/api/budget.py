"""GryviaBudget: a spend or GPU-hour limit for a team, namespace or tenant over a period."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StrictBool, StringConstraints

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    Conditions,
    GryviaModel,
    GryviaResource,
    Int32,
    KindInfo,
    NonNegativeFloat,
    NonNegativeInt32,
    Percent,
    PrinterColumn,
    Str1024,
    cel_rules,
)

ScopeType = Literal["team", "namespace", "tenant"]
PeriodType = Literal["daily", "weekly", "monthly", "quarterly", "annual", "custom"]
AlertAction = Literal["notify", "block"]
EnforcementAction = Literal["warn", "block"]
BudgetState = Literal["active", "warning", "exceeded", "blocked"]
DEFAULT_WARNING_PERCENT = 80.0
"""Warning threshold when no alert is configured."""

_PERIOD_RULES = [
    {
        "rule": "self.type != 'custom' || (has(self.startDate) && has(self.endDate))",
        "message": "period.startDate and period.endDate are required when period.type is custom",
    },
    {
        "rule": "!has(self.startDate) || !has(self.endDate) || self.startDate <= self.endDate",
        "message": "period.startDate must not be after period.endDate",
    },
]


class BudgetScope(GryviaModel):
    """Whose spend counts."""

    type: ScopeType
    """team (namespaces of GryviaQuotas of that team, plus the tenant of that name),
    namespace, or tenant (namespace `tenant-<name>`)."""
    name: Annotated[str, StringConstraints(min_length=1, max_length=63)]
    """Team, namespace or tenant name."""


class BudgetPeriod(GryviaModel):
    """The accounting period (UTC); weekly periods start on Sunday."""

    model_config = ConfigDict(json_schema_extra=cel_rules(_PERIOD_RULES))

    type: PeriodType
    """Period length; custom uses startDate..endDate (end inclusive)."""
    start_date: date | None = None
    """First day (custom)."""
    end_date: date | None = None
    """Last day, inclusive (custom)."""


class BudgetLimits(GryviaModel):
    """Limits per period; utilisation is the larger of the two percentages."""

    cost_usd: NonNegativeFloat | None = Field(default=None, alias="costUSD")
    """Spend in USD (usage-record cost; mixed or non-USD currencies are reported, not
    enforced)."""
    gpu_hours: NonNegativeFloat | None = None
    """GPU-hours."""


class BudgetAlert(GryviaModel):
    """A threshold that raises a Kubernetes Event (and the optional signed webhook)."""

    threshold: Percent
    """Percent of the limit, 0..100."""
    actions: list[AlertAction] | None = None
    """notify (Event + webhook) and/or block (the budget blocks from this threshold on)."""


class BudgetEnforcement(GryviaModel):
    """What happens at the limit."""

    enabled: StrictBool = False
    """Enforce the budget; otherwise it only reports."""
    action: EnforcementAction = "warn"
    """warn (condition and Event) or block (reject Pending/Queued jobs in scope)."""


class GryviaBudgetSpec(GryviaModel):
    """Scope, period, limits, alerts and enforcement."""

    scope: BudgetScope
    """Whose spend counts."""
    period: BudgetPeriod
    """The accounting period."""
    limits: BudgetLimits | None = None
    """Limits per period."""
    alerts: list[BudgetAlert] | None = None
    """Alert thresholds."""
    enforcement: BudgetEnforcement | None = None
    """Enforcement; off when unset."""


class BudgetCurrentPeriod(GryviaModel):
    """The period being accounted."""

    start_date: date | None = None
    """First day."""
    end_date: date | None = None
    """Last day (inclusive)."""
    days_remaining: Int32 | None = None
    """Days left including today."""


class BudgetUsage(GryviaModel):
    """Spend in the current period (open usage records count; straddling records prorated)."""

    cost_usd: float | None = Field(default=None, alias="costUSD")
    """Spend in USD."""
    gpu_hours: float | None = None
    """GPU-hours."""
    gpu_type_hours: dict[str, float] | None = None
    """GPU-hours per GPU type."""
    job_count: NonNegativeInt32 | None = None
    """Distinct jobs with usage."""


class BudgetUtilization(GryviaModel):
    """Usage as percentages of the limits."""

    cost_percent: float | None = None
    """Spend, percent of limits.costUSD."""
    gpu_hours_percent: float | None = None
    """GPU-hours, percent of limits.gpuHours."""


class BudgetAlertRecord(GryviaModel):
    """An alert that fired in this period."""

    timestamp: datetime | None = None
    """When it fired."""
    threshold: float | None = None
    """The threshold crossed, percent."""
    message: Str1024 | None = None
    """What was reported."""


class BudgetForecast(GryviaModel):
    """Linear projection to the end of the period."""

    projected_cost_usd: float | None = Field(default=None, alias="projectedCostUSD")
    """Projected spend in USD."""
    projected_gpu_hours: float | None = Field(default=None, alias="projectedGPUHours")
    """Projected GPU-hours."""
    budget_sufficient: StrictBool | None = None
    """Whether the projection stays within the limits."""
    estimated_exhaustion_date: date | None = None
    """When the limit would be reached at the current rate."""


class GryviaBudgetStatus(GryviaModel):
    """Observed spend and state, recomputed every minute."""

    current_period: BudgetCurrentPeriod | None = None
    """The period being accounted."""
    usage: BudgetUsage | None = None
    """Spend in the period."""
    utilization: BudgetUtilization | None = None
    """Percent of the limits."""
    state: BudgetState | None = None
    """active, warning, exceeded or blocked."""
    alerts: list[BudgetAlertRecord] | None = None
    """Alerts fired in the period."""
    forecast: BudgetForecast | None = None
    """Projection."""
    message: str | None = None
    """Detail, e.g. why the budget is not enforceable."""
    conditions: Conditions | None = None
    """Enforceable and other conditions."""


class GryviaBudget(GryviaResource):
    """A budget: reports spend against limits and, when enforced with block, rejects new jobs."""

    kind: Literal["GryviaBudget"] = "GryviaBudget"
    spec: GryviaBudgetSpec
    status: GryviaBudgetStatus | None = None


BUDGET_KIND = KindInfo(
    resource=resources.BUDGET,
    model=GryviaBudget,
    description=GryviaBudget.__doc__ or "",
    printer_columns=(
        PrinterColumn("Scope-Type", ".spec.scope.type"),
        PrinterColumn("Scope", ".spec.scope.name"),
        PrinterColumn("Period", ".spec.period.type"),
        PrinterColumn("Cost-%", ".status.utilization.costPercent", "number"),
        PrinterColumn("State", ".status.state"),
        AGE_COLUMN,
    ),
    omitted=(
        "scope types user and project: jobs carry no user or project identity",
        "spec.limits.gpuTypeHours, maxConcurrentJobs, maxConcurrentGPUs and "
        "spec.alerts[].recipients: never enforced or delivered",
        "spec.enforcement.gracePeriod and action throttle, spec.rollover, spec.priority: "
        "no controller acts on them",
    ),
)
GryviaBudget.kind_info = BUDGET_KIND
