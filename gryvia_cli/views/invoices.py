"""Renderings of `gryvia invoice`: an estimate invoice, a finalized GryviaInvoice, and the
warnings for unpriced usage in them (docs/billing.md, "Unpriced usage")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gryvia_cli.cli.reports import ReportFormat, write_csv
from gryvia_cli.core.cells import plural
from gryvia_cli.core.invoicecsv import rate_text
from gryvia_cli.core.unpriced import UNPRICED, unpriced_warning
from gryvia_cli.output import OutputFormat, emit, render_data, render_table, section, warn
from gryvia_cli.views.ledger import invoice_csv

INVOICE_COLUMNS = ("sku", "gpu type", "jobs", "gpu hours", "rate/h", "amount")


def render_estimate(inv: Mapping[str, Any]) -> None:
    """Print one estimate invoice (as `core.billing.invoices` builds it) as a table: an
    unpriced line's rate is `-` and its amount `unpriced`, and the subtotal says how many
    GPU-hours it leaves out."""
    cur = inv["currency"]
    section(f"Invoice {inv['number']} ({inv['status']})")
    emit(f"Tenant:   {inv['tenant']}")
    emit(f"Period:   {inv['period']['from']} to {inv['period']['to']} (UTC)")
    if inv["open"]:
        emit("Open:     yes, some runs are still metering")
    final = inv.get("finalized")
    if final:
        emit(
            f"Final:    {final['number']} ({final['state']}, {final['total']} {cur}); "
            f"see: gryvia invoice show {final['name']}"
        )
        if final.get("stripeInvoiceId"):
            emit(f"Stripe:   {final['stripeInvoiceId']}")
    render_table(
        INVOICE_COLUMNS,
        [
            [
                line["sku"],
                line["gpuType"] or "-",
                line["jobs"],
                f"{line['gpuHours']:.4f}",
                "-" if line["rate"] is None else f"{rate_text(line['rate'])} {cur}",
                UNPRICED if line["amount"] is None else f"{line['amount']:.2f} {cur}",
            ]
            for line in inv["lines"]
        ],
    )
    subtotal = "-" if inv["subtotal"] is None else f"{inv['subtotal']:.2f} {cur}"
    unpriced = inv.get("unpricedGpuHours")
    if unpriced:
        subtotal += f" + {unpriced:.4f} GPU-hours {UNPRICED}"
    emit(f"Subtotal: {subtotal} ({inv['jobs']} job(s))")


def warn_unpriced(items: Sequence[Mapping[str, Any]]) -> None:
    """One stderr warning per estimate invoice with unpriced usage: its GPU-hours and GPU
    types, the fix, and that the month is finalized only with --allow-unpriced."""
    for inv in items:
        hours = inv.get("unpricedGpuHours")
        if not hours:
            continue
        types = [line["gpuType"] for line in inv["lines"] if line["amount"] is None]
        warn(
            unpriced_warning(inv["number"], hours, types, "the subtotal")
            + "; `gryvia invoice finalize` bills them only with --allow-unpriced (at 0.00)"
        )


def stripe_text(inv: Mapping[str, Any]) -> str:
    """Where a GryviaInvoice went in Stripe (`status.stripe`, `--stripe` on the operator):
    `in_... (customer cus_..., pushed 2026-12-01T00:00:05Z)`, `in_... (push under way)`, or ""
    when it was not pushed."""
    pushed = ((inv.get("status") or {}).get("stripe") or {}) if isinstance(inv, Mapping) else {}
    if not pushed.get("invoiceId"):
        return ""
    when = f"pushed {pushed['pushedAt']}" if pushed.get("pushedAt") else "push under way"
    return f"{pushed['invoiceId']} (customer {pushed.get('customerId') or '-'}, {when})"


def show_invoice(inv: dict[str, Any], fmt: ReportFormat) -> None:
    """Print a GryviaInvoice as a table, CSV, JSON or YAML (the object as stored)."""
    if fmt is ReportFormat.csv:
        write_csv(invoice_csv([inv]))
        return
    if fmt is not ReportFormat.table:
        render_data(inv, OutputFormat(fmt.value))
        return
    spec = inv.get("spec") or {}
    cur = spec.get("currency")
    section(f"Invoice {spec.get('number')} ({spec.get('state')})")
    emit(f"Name:     {(inv.get('metadata') or {}).get('name')}")
    emit(f"Tenant:   {spec.get('tenant')}")
    emit(f"Month:    {spec.get('month')} (UTC)")
    ledger = spec.get("ledger") or {}
    emit(
        f"Ledger:   sequences {ledger.get('firstSequence')}-{ledger.get('lastSequence')} "
        f"({plural(int(ledger.get('entries') or 0), 'entry', 'entries')})"
    )
    for key, label in (("finalizedAt", "Final:   "), ("paidAt", "Paid:    ")):
        if spec.get(key):
            emit(f"{label} {spec[key]}")
    if spec.get("voidedAt"):
        emit(f"Void:     {spec['voidedAt']} by {spec.get('voidedBy')}: {spec.get('voidReason')}")
    stripe = stripe_text(inv)
    if stripe:
        emit(f"Stripe:   {stripe}")
    render_table(
        ("seq", "job", "sku", "gpu hours", "rate/h", "amount"),
        [
            [
                line.get("sequence"),
                line.get("job"),
                line.get("sku") or "-",
                line.get("gpuHours"),
                f"{line.get('rate')} {cur}",
                f"{line.get('amount')} {cur}",
            ]
            for line in spec.get("lines") or []
        ],
    )
    emit(f"Total:    {spec.get('total')} {cur} (the metered cost rounded once to the cent)")
