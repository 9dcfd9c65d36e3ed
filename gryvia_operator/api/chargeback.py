"""GryviaChargeback: how each tenant's metered GPU cost is charged back to cost centers, and
the monthly reports the operator writes once per closed month.

The spec is the policy: which cost center a run's cost goes to (by tenant, by project label,
or a mapping table, first match wins, else `defaultCostCenter`), and the shared costs added on
top: the idle GPU-hours of GryviaReservations (held but not used by the jobs that opted in),
priced at the catalog rate of their GPU type, and a platform share in percent of the metered
cost. Shared costs go to the lines in proportion to their metered cost (the FinOps
"proportional" split of shared costs). The status holds one report per closed month, written
once and never changed (`api.chargebacks.allocate` computes it; the CLI's
`gryvia chargeback export` recomputes the lines from the same usage records and checks them
against the report's digest).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeInt32,
    PositiveInt32,
    PrinterColumn,
    Str63,
    Str1024,
)
from gryvia_operator.api.invoice import Money, Month
from gryvia_operator.api.ledger import Amount, HexHash, Timestamp

AllocateBy = Literal["tenant", "project", "mapping"]
Percent = Annotated[str, StringConstraints(pattern=r"^(100(\.0{1,4})?|[0-9]{1,2}(\.[0-9]{1,4})?)$")]
"""A percentage 0..100 as a decimal string with up to 4 places, e.g. `10` or `12.5`."""
MAX_MONTHS = 36
MAX_LINES = 2000


class CostCenterRule(GryviaModel):
    """One row of the mapping table: runs of these tenants and/or projects go to
    `costCenter` (a row with both needs both to match)."""

    cost_center: Annotated[str, StringConstraints(min_length=1, max_length=63)]
    tenants: list[Str63] | None = None
    projects: list[Str63] | None = None


class GryviaChargebackSpec(GryviaModel):
    """The chargeback policy."""

    allocate_by: AllocateBy = "tenant"
    """tenant: a cost center per tenant (its name); project: per project label
    (`gryvia.io/project`), runs without one go to defaultCostCenter; mapping: the first row of
    `mapping` that matches, else defaultCostCenter."""
    mapping: Annotated[list[CostCenterRule], Field(max_length=500)] | None = None
    """The mapping table (allocateBy: mapping)."""
    default_cost_center: Annotated[str, StringConstraints(min_length=1, max_length=63)] = (
        "unallocated"
    )
    """Where runs no rule maps go."""
    platform_share_percent: Percent = "0"
    """Platform overhead charged on top, in percent of the month's metered cost."""
    reservation_idle: bool = True
    """Charge the idle GPU-hours of GryviaReservations as a shared cost."""
    start_month: Month | None = None
    """The first month to report (default: the month the object was created)."""
    close_after_minutes: PositiveInt32 = 60
    """A month is closed, and reported, this long after it ended (late metering settles)."""
    keep_months: Annotated[int, Field(ge=1, le=MAX_MONTHS)] = 24
    """Reports kept in status (the oldest go first)."""
    description: Str1024 | None = None


class ChargebackLine(GryviaModel):
    """One cost center's charge for one tenant in the month, to the cent: metered cost plus
    its shares of the reservations' idle cost and of the platform share."""

    cost_center: Str63
    tenant: Str63
    metered: Money
    reservation_idle: Money
    platform: Money
    total: Money
    """metered + reservationIdle + platform."""
    usage_records: NonNegativeInt32
    """Usage records with a part in the month behind `metered`."""


class ChargebackMonth(GryviaModel):
    """The report of one closed month (UTC), written once."""

    month: Month
    currency: Annotated[str, StringConstraints(min_length=1, max_length=8)] = "USD"
    metered: Money
    """The month's metered cost, rounded once (the lines' metered amounts sum to it)."""
    reservation_idle: Money
    reservation_idle_gpu_hours: Amount
    platform: Money
    shared: Money
    """reservationIdle + platform: the shares of the lines sum to it exactly."""
    total: Money
    lines: Annotated[list[ChargebackLine], Field(max_length=MAX_LINES)] = Field(
        default_factory=list
    )
    usage_records: NonNegativeInt32 = 0
    records_digest: HexHash = ""
    """SHA-256 over the usage records' names and in-month cost parts (`chargebacks.digest`):
    an export recomputed from the records shows the same digest."""
    unpriced_gpu_hours: Amount = "0.000000"
    """GPU-hours in the month no catalog price covered (counted at no cost, not free)."""
    written_at: Timestamp


class GryviaChargebackStatus(GryviaModel):
    """The monthly reports, oldest first."""

    months: Annotated[list[ChargebackMonth], Field(max_length=MAX_MONTHS)] | None = None
    message: Str1024 | None = None


class GryviaChargeback(GryviaResource):
    """A chargeback policy: monthly cost-center reports of the tenants' metered GPU cost, with
    reservation idle cost and a platform share distributed over them."""

    kind: Literal["GryviaChargeback"] = "GryviaChargeback"
    spec: GryviaChargebackSpec
    status: GryviaChargebackStatus | None = None


CHARGEBACK_KIND = KindInfo(
    resource=resources.CHARGEBACK,
    model=GryviaChargeback,
    description=GryviaChargeback.__doc__ or "",
    printer_columns=(
        PrinterColumn("Allocate-By", ".spec.allocateBy"),
        PrinterColumn("Platform-%", ".spec.platformSharePercent"),
        PrinterColumn("Last-Month", ".status.months[-1:].month"),
        PrinterColumn("Last-Total", ".status.months[-1:].total"),
        AGE_COLUMN,
    ),
)
GryviaChargeback.kind_info = CHARGEBACK_KIND
