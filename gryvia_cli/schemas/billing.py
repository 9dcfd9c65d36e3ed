"""The documents about invoicing: `gryvia invoice` (InvoiceList), `gryvia ledger verify`
(LedgerVerification) and `gryvia chargeback show|export` (ChargebackReport,
ChargebackExport)."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from gryvia_cli.schemas.base import CliModel, Document
from gryvia_operator.api.chargeback import ChargebackMonth


class InvoicePeriod(CliModel):
    """The invoiced month, first and last day inclusive."""

    from_: str = Field(alias="from")
    """First day (YYYY-MM-DD)."""
    to: str
    """Last day (YYYY-MM-DD)."""


class InvoiceLine(CliModel):
    """One SKU and rate of the month."""

    sku: str
    """The SKU (its GPU type when it names none; `unpriced` without a price)."""
    gpuType: str
    gpuHours: float
    rate: float | None
    """Price per GPU-hour; null for an unpriced line."""
    amount: float | None
    """The line's amount to the cent; null for an unpriced line."""
    jobs: int
    unpricedGpuHours: float | None = None
    """Only on an unpriced line."""


class FinalizedInvoice(CliModel):
    """The tenant's GryviaInvoice of the month, once finalized (Finalized or Paid)."""

    name: str | None
    number: str | None
    state: str | None
    total: str | None


class Invoice(CliModel):
    """One tenant's invoice estimate for the month."""

    number: str
    """`INV-<tenant>-<YYYYMM>`."""
    tenant: str
    period: InvoicePeriod
    currency: str
    """The usage's currency, `MIXED` when it has several."""
    status: Literal["estimate"]
    generatedAt: str
    """When the estimate was computed (RFC 3339, UTC)."""
    lines: list[InvoiceLine]
    subtotal: float | None
    """Null when no line is priced."""
    jobs: int
    open: bool
    """True while some usage record of the month is not final."""
    note: str
    unpricedGpuHours: float | None = None
    """Only with unpriced usage."""
    finalized: FinalizedInvoice | None = None
    """Only once the month was finalized (`gryvia invoice finalize`)."""


class InvoiceList(Document):
    """`gryvia invoice -o json`: one estimate per tenant for the month."""

    kind: Literal["InvoiceList"]
    month: str
    """YYYY-MM."""
    items: list[Invoice]


class LedgerVerification(Document):
    """`gryvia ledger verify TENANT -o json`: the tenant's ledger chain checked."""

    kind: Literal["LedgerVerification"]
    tenant: str
    entries: int
    """GryviaLedgerEntries of the tenant."""
    valid: bool
    problems: list[str]
    """Each names the entry: edited content, broken link, gap or duplicate."""
    headSequence: int
    """The last entry's sequence (0: empty chain)."""
    headHash: str
    """The last entry's hash ("" when empty)."""
    hashVersion: str
    """The hash version (docs/billing.md)."""


class ChargebackReport(Document, ChargebackMonth):
    """`gryvia chargeback show MONTH -o json`: the month's report (GryviaChargeback
    status.months[], docs/reference/crds.md) with the policy and where it came from."""

    model_config = ConfigDict(alias_generator=None, serialize_by_alias=True)

    kind: Literal["ChargebackReport", "ChargebackExport"]
    chargeback: str
    """The GryviaChargeback's name."""
    written: bool
    """True for the report the operator wrote; false for a preview of an open month."""
    recordsMatch: bool
    """Whether the usage records still give the report's recordsDigest."""


class ExportRecord(CliModel):
    """One usage record's part of the month (every value a string, as in the CSV)."""

    month: str
    costCenter: str
    tenant: str
    project: str
    usageRecord: str
    job: str
    gpuHours: str
    cost: str
    """The record's cost for the part of its run in the month, 6 places."""
    currency: str
    sealed: str


class ChargebackExport(ChargebackReport):
    """`gryvia chargeback export MONTH -o json`: the report and the usage records behind it."""

    kind: Literal["ChargebackExport"]
    records: list[ExportRecord]
