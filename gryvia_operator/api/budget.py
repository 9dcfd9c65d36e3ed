"""GryviaBudget: a spend, GPU-hour or concurrency limit for a team, namespace, tenant or user
over a period, with alerts (Events and a signed POST) and enforcement (warn, block, throttle)."""

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
from gryvia_operator.api.helpers import DURATION_PATTERN

ScopeType = Literal["team", "namespace", "tenant", "user", "project"]
PeriodType = Literal["daily", "weekly", "monthly", "quarterly", "annual", "custom"]
AlertAction = Literal["notify", "block"]
EnforcementAction = Literal["warn", "block", "throttle"]
Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
ReceiverFormat = Literal["gryvia", "slack"]
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
    namespace, tenant (namespace `tenant-<name>` or usage records of that tenant), user (the
    jobs that user submitted, by the admission webhook's stamp, and their usage records) or
    project (the jobs labelled `gryvia.io/project=<name>` and their usage records)."""
    name: Annotated[str, StringConstraints(min_length=1, max_length=253)]
    """Team, namespace, tenant or user name."""


class BudgetPeriod(GryviaModel):
    """The accounting period (UTC); weekly periods start on `weekStart` (Sunday by default)."""

    model_config = ConfigDict(json_schema_extra=cel_rules(_PERIOD_RULES))

    type: PeriodType
    """Period length; custom uses startDate..endDate (end inclusive)."""
    start_date: date | None = None
    """First day (custom)."""
    end_date: date | None = None
    """Last day, inclusive (custom)."""
    week_start: Weekday = "sunday"
    """First day of a weekly period."""


class BudgetLimits(GryviaModel):
    """Limits per period; utilisation is the larger of the two percentages."""

    cost_usd: NonNegativeFloat | None = Field(default=None, alias="costUSD")
    """Spend in USD (usage-record cost; mixed or non-USD currencies are reported, not
    enforced)."""
    gpu_hours: NonNegativeFloat | None = None
    """GPU-hours."""
    gpu_type_hours: dict[str, NonNegativeFloat] | None = None
    """GPU-hours per GPU type (case-insensitive); each counts toward utilisation."""
    max_concurrent_jobs: NonNegativeInt32 | None = None
    """Jobs with GPUs running at once in scope (throttle holds the rest Queued)."""
    max_concurrent_gpus: NonNegativeInt32 | None = Field(default=None, alias="maxConcurrentGPUs")
    """GPUs held at once in scope (throttle holds the rest Queued)."""


class BudgetAlert(GryviaModel):
    """A threshold that raises a Kubernetes Event (and the optional signed webhook)."""

    threshold: Percent
    """Percent of the limit, 0..100."""
    actions: list[AlertAction] | None = None
    """notify (Event + webhook) and/or block (the budget blocks from this threshold on)."""
    recipients: list[Str1024] | None = None
    """Informational: who should hear of it (delivery goes to spec.receiver)."""


class BudgetEnforcement(GryviaModel):
    """What happens at the limit."""

    enabled: StrictBool = False
    """Enforce the budget; otherwise it only reports."""
    action: EnforcementAction = "warn"
    """warn (condition and Event on new jobs), block (reject new jobs in scope, hold queued
    ones) or throttle (at most limits.maxConcurrentJobs/GPUs run; the rest wait Queued)."""
    grace_period: (
        Annotated[str, StringConstraints(max_length=32, pattern=DURATION_PATTERN)] | None
    ) = None
    """How long after the budget is first exceeded in a period block starts (e.g. 2h, 1d);
    unset: at once."""


class BudgetRollover(GryviaModel):
    """Unused budget carried into the next period."""

    enabled: StrictBool = False
    """Add the previous period's unused cost limit to this period's."""
    max_rollover_percent: Percent = 100.0
    """Cap of the carried amount, percent of limits.costUSD."""


class SecretKeyRef(GryviaModel):
    """A key of a Secret (budgets are cluster-scoped, so the namespace is named)."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=253)]
    """Secret name."""
    namespace: Annotated[str, StringConstraints(min_length=1, max_length=63)]
    """Secret namespace."""
    key: Annotated[str, StringConstraints(min_length=1, max_length=253)] = "secret"
    """Key holding the HMAC secret."""


class BudgetReceiver(GryviaModel):
    """Where alerts are POSTed (signed when secretRef is set)."""

    url: Annotated[str, StringConstraints(min_length=1, max_length=2048, pattern=r"^https?://")]
    """Target URL."""
    format: ReceiverFormat = "gryvia"
    """gryvia (JSON alert) or slack (`{"text": ...}`)."""
    secret_ref: SecretKeyRef | None = None
    """HMAC key: `X-Gryvia-Signature: sha256=HMAC(secret, "<timestamp>.<body>")`."""
    timeout_seconds: Annotated[int, Field(ge=1, le=30, strict=True)] = 10
    """Request timeout, 1..30 seconds."""


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
    rollover: BudgetRollover | None = None
    """Carry unused budget into the next period."""
    receiver: BudgetReceiver | None = None
    """Signed HTTP POST of each alert."""


class BudgetCurrentPeriod(GryviaModel):
    """The period being accounted."""

    start_date: date | None = None
    """First day."""
    end_date: date | None = None
    """Last day (inclusive)."""
    days_remaining: Int32 | None = None
    """Days left including today."""
    cost_limit_usd: float | None = Field(default=None, alias="costLimitUSD")
    """limits.costUSD plus any rollover: the limit this period is measured against."""
    rollover_usd: float | None = Field(default=None, alias="rolloverUSD")
    """Carried over from the previous period."""


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
    current_concurrent_jobs: NonNegativeInt32 | None = None
    """Jobs with GPUs holding them now."""
    current_concurrent_gpus: NonNegativeInt32 | None = Field(
        default=None, alias="currentConcurrentGPUs"
    )
    """GPUs held now."""
    currencies: list[str] | None = None
    """Currencies of the records (anything but USD alone: reported, not enforced)."""


class BudgetUtilization(GryviaModel):
    """Usage as percentages of the limits."""

    cost_percent: float | None = None
    """Spend, percent of limits.costUSD."""
    gpu_hours_percent: float | None = None
    """GPU-hours, percent of limits.gpuHours."""
    gpu_type_hours_percent: dict[str, float] | None = None
    """GPU-hours per type, percent of limits.gpuTypeHours."""
    jobs_percent: float | None = None
    """Concurrent jobs, percent of limits.maxConcurrentJobs."""
    percent: float | None = None
    """The utilisation: the largest of the cost, GPU-hours and per-type percentages."""


class BudgetAlertRecord(GryviaModel):
    """An alert that fired in this period."""

    timestamp: datetime | None = None
    """When it fired."""
    threshold: float | None = None
    """The threshold crossed, percent."""
    message: Str1024 | None = None
    """What was reported."""
    period_start: date | None = None
    """First day of the period it fired in (once per threshold and period)."""
    key: Str1024 | None = None
    """Idempotency key `<budget uid>/<period start>/<threshold>` (header X-Gryvia-Delivery)."""
    event: StrictBool | None = None
    """The Kubernetes Event was created."""
    delivered: StrictBool | None = None
    """The POST was accepted (2xx); false while retried."""
    attempts: NonNegativeInt32 | None = None
    """POST attempts so far."""
    last_error: Str1024 | None = None
    """Why the last POST failed."""


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
    exceeded_since: datetime | None = None
    """When utilisation first reached 100 % in this period (grace period start)."""
    last_updated: datetime | None = None
    """When the status was written."""
    observed_generation: int | None = None
    """metadata.generation of the spec this status was computed from."""
    message: str | None = None
    """Detail, e.g. why the budget is not enforceable, or why its spec was refused."""
    phase: Literal["Invalid"] | None = None
    """Invalid when the operator refused the spec (the problems in `message`); else unset."""
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
        PrinterColumn("Used-%", ".status.utilization.percent", "number"),
        PrinterColumn("State", ".status.state"),
        AGE_COLUMN,
    ),
    omitted=("spec.priority (override of the limit by high-priority jobs): not implemented",),
)
GryviaBudget.kind_info = BUDGET_KIND
