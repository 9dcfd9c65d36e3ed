"""GryviaInvoice: a tenant's monthly invoice from the ledger, with a life cycle.

`Draft -> Finalized -> Paid | Void` (a Draft may also be voided). Named
`inv-<tenant>-<yyyymm>-<revision>` (a voided month is invoiced again at the next revision),
numbered `INV-<tenant>-<NNNNNN>` (the tenant's highest number + 1). One line per ledger entry
whose run has a part in the month (UTC), billed for that part (`api.periods.split_in_window`:
a run crossing the month's end is split at it). The total is the month's metered cost rounded
once to the cent (half-up); the lines are rounded so that they sum to it (`line_amounts`:
largest remainder). Lines, total, number and ledger range never change; Paid and Void
invoices never change at all (CEL here; the webhook says the same and lets only Drafts be
deleted).

The status says where the operator pushed a Finalized invoice in Stripe (`--stripe`,
docs/billing.md "Stripe test mode"); the spec never records it.

Pure: `gryvia invoice finalize|void|mark-paid` and the webhook use these rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StringConstraints

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeInt64,
    PositiveInt32,
    PrinterColumn,
    SchemaExtra,
    Str63,
    Str253,
    cel_rules,
)
from gryvia_operator.api.ledger import Amount, HexHash, Timestamp

InvoiceState = Literal["Draft", "Finalized", "Paid", "Void"]
CENT = Decimal("0.01")
MAX_LINES = 5000
REASON_MIN, REASON_MAX = 3, 500
IMMUTABLE = "Paid and Void invoices are immutable"
TRANSITIONS = "an invoice moves only Draft -> Finalized -> Paid or Void (a Draft may be voided)"
FIXED = "tenant, month, number, revision, currency, total, lines and ledger never change"
VOID_REASON = f"a Void invoice needs voidReason ({REASON_MIN}-{REASON_MAX} characters)"
PAYMENT_ONCE = "payment is set once"
ALLOWED_NEXT: Mapping[str, frozenset[str]] = {
    "Draft": frozenset({"Finalized", "Void"}),
    "Finalized": frozenset({"Paid", "Void"}),
    "Paid": frozenset(),
    "Void": frozenset(),
}

Money = Annotated[str, StringConstraints(pattern=r"^[0-9]+\.[0-9]{2}$", max_length=32)]
"""An amount to the cent, e.g. `39.98`."""
Month = Annotated[str, StringConstraints(pattern=r"^[0-9]{4}-(0[1-9]|1[0-2])$", max_length=7)]


class InvoiceLine(GryviaModel):
    """One ledger entry billed: its GPU-hours in the month and their cost to the cent (the
    lines' amounts sum to the month's metered cost rounded once)."""

    sequence: NonNegativeInt64
    entry: Str253
    job: Str253
    sku: Str253 = ""
    gpu_hours: Amount
    rate: Amount
    amount: Money


class LedgerRange(GryviaModel):
    """The part of the tenant's chain the invoice covers, and the chain's head when built."""

    entries: NonNegativeInt64
    first_sequence: NonNegativeInt64
    last_sequence: NonNegativeInt64
    head_hash: HexHash


class Payment(GryviaModel):
    """How the invoice was paid (set once)."""

    method: Str63
    reference: Str253 = ""


class GryviaInvoiceSpec(GryviaModel):
    """A tenant's invoice for one UTC month, built from its ledger entries."""

    model_config = ConfigDict(
        json_schema_extra=cel_rules(
            [
                {
                    "rule": "!(oldSelf.state in ['Paid', 'Void']) || self == oldSelf",
                    "message": IMMUTABLE,
                },
                {
                    "rule": "oldSelf.state == self.state || "
                    "(oldSelf.state == 'Draft' && self.state in ['Finalized', 'Void']) || "
                    "(oldSelf.state == 'Finalized' && self.state in ['Paid', 'Void'])",
                    "message": TRANSITIONS,
                },
                {
                    "rule": "self.tenant == oldSelf.tenant && self.month == oldSelf.month && "
                    "self.number == oldSelf.number && self.revision == oldSelf.revision && "
                    "self.currency == oldSelf.currency && self.total == oldSelf.total",
                    "message": FIXED,
                },
                {
                    "rule": "self.state != 'Void' || (has(self.voidReason) && "
                    f"size(self.voidReason) >= {REASON_MIN})",
                    "message": VOID_REASON,
                },
                {
                    "rule": "!has(oldSelf.payment) || "
                    "(has(self.payment) && self.payment == oldSelf.payment)",
                    "message": PAYMENT_ONCE,
                },
            ]
        )
    )

    tenant: Annotated[str, StringConstraints(min_length=1, max_length=63)]
    month: Month
    """The UTC month billed, `YYYY-MM`."""
    revision: PositiveInt32 = 1
    """1, then one more for each re-invoicing of a voided month."""
    number: Annotated[str, StringConstraints(max_length=96)]
    """`INV-<tenant>-<6-digit number>`."""
    state: InvoiceState = "Draft"
    currency: Annotated[str, StringConstraints(min_length=1, max_length=8)] = "USD"
    lines: Annotated[
        list[InvoiceLine],
        Field(max_length=MAX_LINES),
        SchemaExtra({"x-kubernetes-validations": [{"rule": "self == oldSelf", "message": FIXED}]}),
    ] = Field(default_factory=list)
    """One line per ledger entry with a part in the month, in chain order."""
    total: Money
    """The month's metered cost rounded once to the cent; the sum of the lines' amounts."""
    ledger: Annotated[
        LedgerRange,
        SchemaExtra({"x-kubernetes-validations": [{"rule": "self == oldSelf", "message": FIXED}]}),
    ]
    finalized_at: Timestamp | None = None
    finalized_by: Str253 | None = None
    payment: Payment | None = None
    paid_at: Timestamp | None = None
    voided_at: Timestamp | None = None
    voided_by: Str253 | None = None
    void_reason: Annotated[str, StringConstraints(max_length=REASON_MAX)] | None = None


class StripePush(GryviaModel):
    """Where the invoice went in Stripe (opt-in `--stripe`, docs/billing.md "Stripe test
    mode"): written by the operator as it pushes, so a push resumed after a crash reuses the
    invoice already created there instead of creating a second one."""

    customer_id: Str253 = ""
    """The tenant's Stripe customer (`cus_...`)."""
    invoice_id: Str253 = ""
    """The Stripe invoice (`in_...`), set as soon as Stripe created it."""
    pushed_at: Timestamp | None = None
    """When every line was on the Stripe invoice and Stripe finalized it: the push is done."""


class GryviaInvoiceStatus(GryviaModel):
    """What the operator did with the invoice outside the cluster."""

    stripe: StripePush | None = None


class GryviaInvoice(GryviaResource):
    """A finalized monthly invoice of a tenant (Draft, Finalized, Paid or Void)."""

    kind: Literal["GryviaInvoice"] = "GryviaInvoice"
    spec: GryviaInvoiceSpec
    status: GryviaInvoiceStatus | None = None


INVOICE_KIND = KindInfo(
    resource=resources.INVOICE,
    model=GryviaInvoice,
    description=GryviaInvoice.__doc__ or "",
    printer_columns=(
        PrinterColumn("Number", ".spec.number"),
        PrinterColumn("Tenant", ".spec.tenant"),
        PrinterColumn("Month", ".spec.month"),
        PrinterColumn("State", ".spec.state"),
        PrinterColumn("Total", ".spec.total"),
        PrinterColumn("Currency", ".spec.currency"),
        PrinterColumn("Stripe", ".status.stripe.invoiceId", priority=1),
        AGE_COLUMN,
    ),
)
GryviaInvoice.kind_info = INVOICE_KIND


def invoice_name(tenant: str, month: str, revision: int) -> str:
    """`inv-<tenant>-<yyyymm>-<revision>`."""
    return f"inv-{tenant}-{month.replace('-', '')}-{revision}"


def line_amount(cost: str | Decimal) -> Decimal:
    """A 6-place cost rounded once to the cent, half-up (`0.493600` -> `0.49`): how an
    invoice's total is rounded from the metered cost."""
    return Decimal(cost).quantize(CENT, rounding=ROUND_HALF_UP)


def line_amounts(costs: Sequence[Decimal]) -> list[Decimal]:
    """The cent amounts of invoice lines whose metered costs are `costs` (Decimals >= 0, in
    line order), summing to `line_amount(sum(costs))`: the metered total rounded once.

    The largest-remainder method (docs/billing.md, "Rounding"): every cost is rounded down to
    the cent, then the cents still missing to reach the rounded total go one each to the lines
    with the largest remainders (ties: the earlier line). A line is never moved by more than
    a cent from its cost, and a cost already in whole cents is never changed: 81 lines of
    0.4936 (39.9816) are 29 x 0.50 + 52 x 0.49 = 39.98.
    """
    floors = [c.quantize(CENT, rounding=ROUND_FLOOR) for c in costs]
    missing = int((line_amount(sum(costs, Decimal(0))) - sum(floors, Decimal(0))) / CENT)
    order = sorted(range(len(costs)), key=lambda i: (floors[i] - costs[i], i))
    for i in order[:missing]:
        floors[i] += CENT
    return floors
