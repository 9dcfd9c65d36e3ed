"""GryviaQuota: GPU limits, allowed GPU types and a monthly budget for a team's namespaces."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StrictBool, StringConstraints

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    Conditions,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeFloat,
    NonNegativeInt32,
    Percent,
    PrinterColumn,
    Str63,
)

QuotaPhase = Literal["Active", "Full", "QuotaExceeded", "BudgetExceeded", "Failed"]


class GpuQuota(GryviaModel):
    """GPU limits over all the quota's namespaces."""

    max_gpus: NonNegativeInt32 = Field(alias="maxGPUs")
    """GPUs held at once by Scheduling/Running jobs in the namespaces."""
    max_gpus_per_job: NonNegativeInt32 | None = Field(default=None, alias="maxGPUsPerJob")
    """Largest total GPU count of one job; 0 or unset = no per-job limit."""
    max_gpus_per_user: NonNegativeInt32 | None = Field(default=None, alias="maxGPUsPerUser")
    """GPUs one submitter (annotation gryvia.io/submitted-by) may hold at once over the
    quota's namespaces; more of that user's jobs wait in phase Queued while other users' jobs
    run. Jobs without a recorded submitter are not counted. 0 or unset = no per-user limit."""
    allowed_gpu_types: list[Str63] | None = Field(default=None, alias="allowedGPUTypes")
    """GPU types jobs may request (case-insensitive); empty = any."""
    max_running_jobs: NonNegativeInt32 | None = None
    """Jobs Scheduling/Running at once; more are held in phase Queued. 0 or unset = no limit."""
    max_queued_jobs: NonNegativeInt32 | None = None
    """Jobs that may wait in phase Queued; beyond that new jobs are Rejected. 0 or unset = no
    limit."""
    per_type: dict[str, NonNegativeInt32] | None = None
    """GPUs held at once per GPU type, e.g. {H100: 16, A100-80G: 8}; with the Kueue integration
    each type becomes a ResourceFlavor with this nominal quota in the team's ClusterQueue."""


class QuotaBudget(GryviaModel):
    """A monthly spend limit in USD."""

    monthly_budget: NonNegativeFloat | None = None
    """USD per calendar month (UTC)."""
    alert_threshold: Percent | None = None
    """Percent of the budget (0..100, not a fraction) at which a warning is raised."""
    hard_limit: StrictBool | None = None
    """Reject new jobs once the budget is spent."""


class GryviaQuotaSpec(GryviaModel):
    """Which team and namespaces the quota covers, and its limits."""

    team: Annotated[str, StringConstraints(min_length=1, max_length=63)]
    """Team name (namespace label gryvia.io/team)."""
    namespaces: Annotated[list[Str63], Field(min_length=1)]
    """Namespaces the quota covers."""
    gpu_quota: GpuQuota
    """GPU limits."""
    budget: QuotaBudget | None = None
    """Monthly budget."""


class QuotaUsage(GryviaModel):
    """Current use of the quota."""

    allocated_gpus: NonNegativeInt32 | None = Field(default=None, alias="allocatedGPUs")
    """GPUs held by Scheduling/Running jobs."""
    running_jobs: NonNegativeInt32 | None = None
    """Jobs running."""
    queued_jobs: NonNegativeInt32 | None = None
    """Jobs Pending or Queued."""
    gpu_hours: float | None = None
    """GPU-hours this month."""


class BudgetStatus(GryviaModel):
    """Spend against the monthly budget, in USD."""

    spent_this_month: float | None = None
    """Spend month to date."""
    remaining_budget: float | None = None
    """monthlyBudget - spentThisMonth."""
    percent_used: float | None = None
    """Percent of the budget spent."""
    projected_spend: float | None = None
    """Linear projection to month end."""


class GryviaQuotaStatus(GryviaModel):
    """Observed usage and enforcement state."""

    phase: QuotaPhase | None = None
    """Active, Full (every allowed GPU in use), QuotaExceeded (more than allowed),
    BudgetExceeded or Failed."""
    current_usage: QuotaUsage | None = None
    """Current use."""
    budget_status: BudgetStatus | None = None
    """Spend against the budget."""
    conditions: Conditions | None = None
    """Ready (False when exceeded or failed)."""
    last_updated: datetime | None = None
    """When usage was last computed."""


class GryviaQuota(GryviaResource):
    """Limits for a team: jobs beyond them are rejected at admission or by the quota operator."""

    kind: Literal["GryviaQuota"] = "GryviaQuota"
    spec: GryviaQuotaSpec
    status: GryviaQuotaStatus | None = None


QUOTA_KIND = KindInfo(
    resource=resources.QUOTA,
    model=GryviaQuota,
    description=GryviaQuota.__doc__ or "",
    printer_columns=(
        PrinterColumn("Team", ".spec.team"),
        PrinterColumn("Max-GPUs", ".spec.gpuQuota.maxGPUs", "integer"),
        PrinterColumn("Allocated", ".status.currentUsage.allocatedGPUs", "integer"),
        PrinterColumn("Phase", ".status.phase"),
        AGE_COLUMN,
    ),
    omitted=(
        "spec.priority: no controller reads it",
        "spec.network.maxEgressMbps: no network operator",
        "spec.tokensPerDay: no LLM gateway",
    ),
)
GryviaQuota.kind_info = QUOTA_KIND
