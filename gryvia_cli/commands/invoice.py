"""`gryvia invoice`: monthly invoice estimates per tenant from metered usage."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gryvia_cli.cli.reports import (
    ReportFormat,
    ReportOutputOpt,
    TenantOpt,
    report_format,
    write_csv,
)
from gryvia_cli.cli.session import session
from gryvia_cli.errors import UsageError
from gryvia_cli.output import OutputFormat, emit, info, note, render_data, render_table, section
from gryvia_cli.views.reads import read_billable_tenants, read_usage_records
from gryvia_operator.api.names import CLI_API_VERSION

app = typer.Typer()

INVOICE_COLUMNS = ("sku", "gpu type", "jobs", "gpu hours", "rate/h", "amount")


@app.command("invoice", rich_help_panel="Tenancy")
def invoice(
    ctx: typer.Context,
    tenant: TenantOpt = None,
    month: Annotated[
        str | None,
        typer.Option(
            "--month",
            metavar="YYYY-MM",
            help="The UTC month [default: the current month].",
            show_default=False,
        ),
    ] = None,
    output: ReportOutputOpt = None,
) -> None:
    """Monthly invoice estimates per tenant, one line per SKU.

    Built from the GryviaUsageRecords whose run started in the month (UTC): one invoice per
    tenant, numbered INV-<tenant>-<YYYYMM>, with columns SKU, GPU TYPE, JOBS, GPU HOURS,
    RATE/H (the catalog rate the runs were metered at), AMOUNT and a subtotal. Status is
    always "estimate" (no payments); an invoice is open while any of its runs is still
    metering. Only existing tenants are invoiced: usage of a tenant that does not exist is
    `unattributed` (a note gives its amount; `gryvia usage` lists it).

    JSON/YAML: {apiVersion: gryvia.io/cli, kind: InvoiceList, month, items: [{number, tenant,
    period: {from, to}, currency, status, generatedAt, lines: [{sku, gpuType, gpuHours, rate,
    amount, jobs}], subtotal, jobs, open, note}]}.
    CSV: `invoice,tenant,period_from,period_to,sku,gpuType,jobs,gpuHours,rate,amount,currency`
    and a TOTAL line per invoice; formula-like cells get a leading apostrophe.

    Examples:
      gryvia invoice
      gryvia invoice --tenant vision --month 2026-11
      gryvia invoice --month 2026-11 -o csv > invoices.csv
    """
    from gryvia_cli.core.billing import invoices, invoices_csv, unattributed_usage
    from gryvia_operator.api.periods import month_bounds

    state = session(ctx)
    fmt = report_format(state, output)
    now = state.now()
    period = month or f"{now:%Y-%m}"
    try:
        month_bounds(period)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    access = state.access()
    records = read_usage_records(access, tenant)
    tenants = read_billable_tenants(access)
    items = invoices(records, period, tenant=tenant, now=now, tenants=tenants)
    start, end = month_bounds(period)
    stray = None if tenant else unattributed_usage(records, tenants, start, end)
    if fmt is ReportFormat.csv:
        write_csv(invoices_csv(items))
        return
    if fmt is not ReportFormat.table:
        render_data(
            {"apiVersion": CLI_API_VERSION, "kind": "InvoiceList", "month": period, "items": items},
            OutputFormat(fmt.value),
        )
        return
    if stray is not None:
        note(
            f"{stray.cost:.2f} {stray.currency} of usage ({stray.jobs} job(s)) in {period} "
            "belongs to no existing tenant and is not invoiced; "
            "see it as `unattributed` in: gryvia usage"
        )
    if not items:
        info(f"No usage in {period}" + (f" for tenant {tenant}" if tenant else "") + ".")
        return
    for index, inv in enumerate(items):
        if index:
            emit()
        _render_invoice(inv)
    note("invoices are estimates from metered GPU time and catalog prices; not tax invoices")


def _render_invoice(inv: dict[str, Any]) -> None:
    from gryvia_cli.core.billing import rate_text

    cur = inv["currency"]
    section(f"Invoice {inv['number']} ({inv['status']})")
    emit(f"Tenant:   {inv['tenant']}")
    emit(f"Period:   {inv['period']['from']} to {inv['period']['to']} (UTC)")
    if inv["open"]:
        emit("Open:     yes, some runs are still metering")
    render_table(
        INVOICE_COLUMNS,
        [
            [
                line["sku"],
                line["gpuType"] or "-",
                line["jobs"],
                f"{line['gpuHours']:.4f}",
                f"{rate_text(line['rate'])} {cur}",
                f"{line['amount']:.2f} {cur}",
            ]
            for line in inv["lines"]
        ],
    )
    emit(f"Subtotal: {inv['subtotal']:.2f} {cur} ({inv['jobs']} job(s))")
