"""The documents about spend: `gryvia cost` (CostReport), `gryvia usage` (UsageReport) and
`gryvia usage --format focus` (FocusReport)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from gryvia_cli.schemas.base import CliModel, Document


class SampledUse(CliModel):
    """The optional fields of a usage or cost row (docs/billing.md, docs/gpu-metrics.md)."""

    unpricedGpuHours: float | None = None
    """GPU-hours no enabled GryviaGpuSku priced; only with unpriced usage."""
    activeGpuHours: float | None = None
    """GPU-hours x the job's mean GPU activity, of sealed sampled runs; only with such runs."""
    idleCost: float | None = None
    """The rest of those GPU-hours x the rate; only with sampled runs."""


class TeamCost(SampledUse):
    """One team's spend in the period (a GryviaQuota team or a tenant)."""

    team: str
    namespaces: list[str]
    spent: float | None
    """Estimated cost in the period; null when none of the team's usage is priced."""
    budget: float | None
    """The monthly budget prorated to the period."""
    monthlyBudget: float | None
    remaining: float | None
    percentUsed: float | None
    projected: float | None
    """The spend extended linearly to the end of the period; null when nothing is priced."""
    currency: str
    gpuHours: float
    jobs: int


class GroupCost(SampledUse):
    """One submitter's, project's or label value's spend (`--group-by`); records without the
    value are the row `-`. Exactly one of user, project, label names the group."""

    user: str | None = None
    project: str | None = None
    label: str | None = None
    gpuHours: float
    spent: float | None
    projected: float | None
    currency: str
    jobs: int
    billable: bool | None = None
    """false for a name that is no GryviaTenant (never invoiced); absent otherwise."""


class BudgetSummary(CliModel):
    """A GryviaBudget as the operator last computed it (`gryvia budget get`)."""

    name: str | None
    scope: dict[str, Any]
    """The budget's spec.scope (docs/reference/crds.md, GryviaBudget)."""
    period: str
    """spec.period.type: day, week, month, quarter or custom."""
    state: str
    """status.state, or `pending` before the operator computed it."""
    usage: dict[str, Any] | None
    """status.usage (docs/reference/crds.md)."""
    utilization: dict[str, Any] | None
    """status.utilization."""
    limit: str
    """The limits as text: `10.00 USD`, `100 GPU-h`, `4 jobs`, joined; `-` without."""
    thresholds: list[float]
    """The alert thresholds, percent."""
    forecast: dict[str, Any] | None
    """status.forecast."""


class CostTotal(CliModel):
    """The teams' spend together (`total.spent` and `total.currency` only with --group-by)."""

    spent: float
    budget: float | None = None
    remaining: float | None = None
    currency: str | None = None
    """With --group-by: the currency of the total."""
    activeGpuHours: float | None = None
    """When some team has sampled runs."""
    idleCost: float | None = None
    """When some team has sampled runs."""


class CostReport(Document):
    """`gryvia cost -o json`: spend per team (per user, project or label value with
    --group-by) in the period, and the GryviaBudgets shown with it."""

    kind: Literal["CostReport"]
    period: Literal["day", "week", "month"]
    groupBy: str | None = None
    """With --group-by only: user, project or label:KEY."""
    from_: str = Field(alias="from")
    """Start of the period (RFC 3339, UTC)."""
    to: str
    """End of the period, exclusive."""
    items: list[TeamCost] | list[GroupCost]
    """Per team; with --group-by per group."""
    budgets: list[BudgetSummary]
    total: CostTotal


class UsageRow(SampledUse):
    """Metered GPU-hours and cost of one group; the field named by groupBy (`label` for
    label:KEY) holds the group's value (`-` for records without one)."""

    tenant: str | None = None
    sku: str | None = None
    day: str | None = None
    job: str | None = None
    """`namespace/job`."""
    user: str | None = None
    project: str | None = None
    label: str | None = None
    gpuHours: float
    cost: float | None
    """Estimated cost; null when none of the group's usage is priced."""
    currency: str
    jobs: int
    billable: bool | None = None
    """false for a tenant name that is no GryviaTenant (never invoiced); absent otherwise."""


class UsageReport(Document):
    """`gryvia usage -o json`: metered GPU-hours and cost per group in [from, to)."""

    kind: Literal["UsageReport"]
    groupBy: str
    """tenant, sku, day, job, user, project or label:KEY."""
    from_: str | None = Field(alias="from")
    """--from (RFC 3339), null without."""
    to: str | None
    """--to, exclusive; null without."""
    tenant: str | None
    """--tenant, null without."""
    items: list[UsageRow]
    total: UsageRow
    """Every group together (without the group field)."""
    note: str
    """That the costs are estimates, not an invoice."""


class FocusReport(Document):
    """`gryvia usage --format focus -o json`: the usage as FinOps FOCUS rows
    (docs/billing.md, "FOCUS export")."""

    kind: Literal["FocusReport"]
    focusVersion: str
    """The FOCUS version the rows follow (1.2)."""
    from_: str | None = Field(alias="from")
    to: str | None
    items: list[dict[str, Any]]
    """One row per usage record and UTC month: every FOCUS column (BilledCost, ..., Tags) and
    x_User, x_Project, x_GpuType, x_Gpus, x_Unpriced; amounts as decimal strings."""
