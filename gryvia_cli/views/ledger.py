"""Reads and renderings of the billing ledger shared by `gryvia ledger` and `gryvia invoice`:
raw GryviaLedgerEntries, GryviaInvoices and GryviaUsageRecords, and an invoice as CSV."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gryvia_cli.core.csvexport import to_csv
from gryvia_cli.errors import NotFoundError
from gryvia_cli.kube import resources as r
from gryvia_cli.views.reads import read_optional

INVOICE_CSV_HEADER = (
    "invoice",
    "number",
    "tenant",
    "month",
    "state",
    "sequence",
    "entry",
    "job",
    "sku",
    "gpuHours",
    "rate",
    "amount",
    "currency",
)


def read_entries(access: Any) -> list[dict[str, Any]]:
    """Every GryviaLedgerEntry ([] when the kind is not installed). All of them, not by
    label: an entry with a wrong label is still part of its tenant's chain."""
    return read_optional(access, r.LEDGER_ENTRY)


def read_invoices(access: Any) -> list[dict[str, Any]]:
    """Every GryviaInvoice ([] when the kind is not installed)."""
    return read_optional(access, r.INVOICE)


def read_records(access: Any) -> list[dict[str, Any]]:
    """Every GryviaUsageRecord in all namespaces, raw (uid and annotations kept)."""
    return read_optional(access, r.USAGE_RECORD)


def read_invoice(access: Any, name: str) -> dict[str, Any]:
    """One GryviaInvoice by name (`inv-...`) or number (`INV-...`); NotFoundError with a hint."""
    if not name.startswith("INV-"):
        try:
            return access.get(r.INVOICE, name)  # type: ignore[no-any-return]
        except NotFoundError:
            pass
    for inv in read_invoices(access):
        if (inv.get("spec") or {}).get("number") == name:
            return inv
    raise NotFoundError(
        f'invoice "{name}" not found',
        hint="name an invoice inv-<tenant>-<yyyymm>-<revision> or its number INV-...; "
        "see: kubectl get gryviainvoices",
    )


def invoice_csv(invoices: list[Mapping[str, Any]]) -> str:
    """CSV of finalized invoices: one row per line, then a `TOTAL` row per invoice."""
    rows: list[list[object]] = []
    for inv in invoices:
        spec = inv.get("spec") or {}
        name = (inv.get("metadata") or {}).get("name")
        head = [name, spec.get("number"), spec.get("tenant"), spec.get("month"), spec.get("state")]
        for line in spec.get("lines") or []:
            rows.append(
                [
                    *head,
                    line.get("sequence"),
                    line.get("entry"),
                    line.get("job"),
                    line.get("sku"),
                    line.get("gpuHours"),
                    line.get("rate"),
                    line.get("amount"),
                    spec.get("currency"),
                ]
            )
        rows.append([*head, "", "TOTAL", "", "", "", "", spec.get("total"), spec.get("currency")])
    return to_csv(INVOICE_CSV_HEADER, rows)
