"""`gryvia invoice`: monthly invoice estimates per tenant from metered usage; `finalize`,
`void`, `mark-paid` and `show` of the invoices built from the billing ledger."""

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
from gryvia_cli.output import OutputFormat, emit, info, note, render_data, success, warn
from gryvia_cli.views.ledger import read_invoices
from gryvia_cli.views.reads import read_billable_tenants, read_usage_records, try_read
from gryvia_operator.api.names import CLI_API_VERSION

app = typer.Typer()


@app.callback(invoke_without_command=True)
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

    Built from the GryviaUsageRecords whose run has a part in the month (UTC), each counted
    for that part (a run crossing the month's end is split at it, as `gryvia cost` counts
    it): one invoice per tenant, numbered INV-<tenant>-<YYYYMM>, with columns SKU, GPU TYPE,
    JOBS, GPU HOURS, RATE/H (the catalog rate the runs were metered at), AMOUNT and a
    subtotal: the metered cost rounded once to the cent, which the lines sum to (largest
    remainder), as in the finalized invoice of the month. Status is
    always "estimate" (no payments); an invoice is open while any of its runs is still
    metering. Only existing GryviaTenants are invoiced: usage attributed to another name (a
    job in a plain namespace) is not, and a note gives its amount (`gryvia usage` lists it
    under that name). Usage whose GPU type
    no enabled GryviaGpuSku priced is unpriced: a line of SKU `unpriced` with no rate and the
    amount `unpriced`, left out of the subtotal, and a warning names its GPU-hours and types.

    With the billing ledger on, a month is invoiced for good with `gryvia invoice finalize
    TENANT MONTH` (a GryviaInvoice: Finalized, then Paid or Void); the estimate then names
    that invoice. See `gryvia invoice finalize --help`.

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: InvoiceList, month, items: [{number, tenant,
    period: {from, to}, currency, status, generatedAt, lines: [{sku, gpuType, gpuHours, rate,
    amount, jobs, unpricedGpuHours?}], subtotal, jobs, open, note, unpricedGpuHours?,
    finalized?: {name, number, state, total, stripeInvoiceId?}}]} (stripeInvoiceId: the
    Stripe invoice it was pushed as); an unpriced line has `rate` and `amount` null,
    `subtotal` is null when no line is priced.
    CSV: `invoice,tenant,period_from,period_to,sku,gpuType,jobs,gpuHours,rate,amount,currency`
    and a TOTAL line per invoice (an unpriced line: empty rate, amount `unpriced`);
    formula-like cells get a leading apostrophe.

    Examples:
      gryvia invoice
      gryvia invoice --tenant vision --month 2026-11
      gryvia invoice --month 2026-11 -o csv > invoices.csv
      gryvia invoice finalize vision 2026-11
    """
    if ctx.invoked_subcommand is not None:
        return
    from gryvia_cli.core.billing import invoices, unbilled_usage
    from gryvia_cli.core.invoicecsv import invoices_csv
    from gryvia_cli.views.invoices import render_estimate, warn_unpriced
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
    _link_finalized(items, try_read(lambda: read_invoices(access), "invoices") or [], period)
    start, end = month_bounds(period)
    stray = [] if tenant else unbilled_usage(records, tenants, start, end)
    warn_unpriced(items)
    if fmt is ReportFormat.csv:
        write_csv(invoices_csv(items))
        return
    if fmt is not ReportFormat.table:
        render_data(
            {"apiVersion": CLI_API_VERSION, "kind": "InvoiceList", "month": period, "items": items},
            OutputFormat(fmt.value),
        )
        return
    for row in stray:
        note(
            f"{row.cost:.2f} {row.currency} of usage ({row.jobs} job(s)) in {period} is "
            f"attributed to {row.key}, which is not a GryviaTenant, and is not invoiced "
            f"(gryvia tenant create {row.key} bills it; gryvia usage shows it)"
        )
    if not items:
        info(f"No usage in {period}" + (f" for tenant {tenant}" if tenant else "") + ".")
        return
    for index, inv in enumerate(items):
        if index:
            emit()
        render_estimate(inv)
    note("invoices are estimates from metered GPU time and catalog prices; not tax invoices")


def _link_finalized(items: list[dict[str, Any]], stored: list[dict[str, Any]], month: str) -> None:
    """Name, in each estimate, the tenant's finalized (or paid) invoice of the month."""
    for inv in stored:
        spec = inv.get("spec") or {}
        if spec.get("month") != month or spec.get("state") not in ("Finalized", "Paid"):
            continue
        for item in items:
            if item["tenant"] == spec.get("tenant"):
                item["finalized"] = {
                    "name": (inv.get("metadata") or {}).get("name"),
                    "number": spec.get("number"),
                    "state": spec.get("state"),
                    "total": spec.get("total"),
                }
                stripe = ((inv.get("status") or {}).get("stripe") or {}).get("invoiceId")
                if stripe:
                    item["finalized"]["stripeInvoiceId"] = stripe


NameArg = Annotated[
    str,
    typer.Argument(
        metavar="NAME", help="Invoice name (inv-...) or number (INV-...).", show_default=False
    ),
]


@app.command("finalize")
def finalize(
    ctx: typer.Context,
    tenant: Annotated[
        str, typer.Argument(metavar="TENANT", help="Tenant to invoice.", show_default=False)
    ],
    month: Annotated[
        str, typer.Argument(metavar="YYYY-MM", help="The UTC month.", show_default=False)
    ],
    allow_unpriced: Annotated[
        bool,
        typer.Option(
            "--allow-unpriced",
            help="Finalize a month with unpriced usage (no enabled SKU priced its GPU type), "
            "billing it at 0.00.",
        ),
    ] = False,
    output: ReportOutputOpt = None,
) -> None:
    """Finalize a tenant's month from the ledger: a GryviaInvoice, one line per entry.

    Refused, with the reason, while the month has not ended (UTC), while a usage record of
    the month is still open, while sealed records are not in the ledger yet (no entry at
    all: the ledger is off, turn on billing.ledger.enabled / --billing-ledger), when the
    tenant's chain does not verify, when the month mixes currencies, when the tenant does
    not exist, when the month has a Finalized or Paid invoice already (void it first; the
    new one gets the next revision), or when the month has unpriced usage (its GPU type had
    no enabled GryviaGpuSku), unless --allow-unpriced bills it at 0.00. One line per ledger
    entry whose run has a part in the month, for that part (a run crossing the month's end
    is split at it); the total is the month's metered cost rounded once to the cent and the
    lines are rounded to sum to it (largest remainder), so it equals the month's estimate.
    The invoice is named inv-<tenant>-<yyyymm>-<revision> and numbered INV-<tenant>-<NNNNNN>.

    -o json/yaml print the GryviaInvoice as stored; -o csv one row per line and a TOTAL row.

    Examples:
      gryvia invoice finalize vision 2026-11
      gryvia invoice finalize vision 2026-11 -o csv > inv.csv
      gryvia invoice finalize vision 2026-11 --allow-unpriced
    """
    from gryvia_cli.errors import GryviaError
    from gryvia_cli.kube import resources as r
    from gryvia_cli.views.invoices import show_invoice
    from gryvia_cli.views.ledger import read_entries, read_records
    from gryvia_operator.api.invoicing import build_invoice, finalize_refusals, unpriced_types
    from gryvia_operator.api.periods import month_bounds

    state = session(ctx)
    fmt = report_format(state, output)
    try:
        month_bounds(month)
        if len(month) != 7:
            raise ValueError(f"MONTH {month!r}: use YYYY-MM, e.g. 2026-11")
    except ValueError as exc:
        raise UsageError(str(exc).replace("--month", "MONTH")) from None
    access = state.access()
    records, entries = read_records(access), read_entries(access)
    stored = read_invoices(access)
    tenants = read_billable_tenants(access)
    now = state.now()
    reasons = finalize_refusals(
        tenant,
        month,
        records=records,
        entries=entries,
        invoices=stored,
        now=now,
        tenants=tenants,
        allow_unpriced=allow_unpriced,
    )
    if reasons:
        raise GryviaError(
            f"cannot finalize {tenant}'s invoice for {month}: " + "; ".join(reasons),
            hint=_refusal_hint(tenant, month, stored, tenants),
        )
    body = build_invoice(tenant, month, entries, invoices=stored, now=now, by=access.context.user)
    created = access.create(r.INVOICE, body, None)
    unpriced = unpriced_types(tenant, month, records)
    if unpriced:
        warn(
            f"usage on GPU type {', '.join(unpriced)} is unpriced and was invoiced at 0.00 "
            "(--allow-unpriced)"
        )
    if fmt is ReportFormat.table:
        spec = created.get("spec") or body["spec"]
        success(
            f"finalized {spec['number']} ({body['metadata']['name']}): "
            f"{len(spec['lines'])} line(s), total {spec['total']} {spec['currency']}"
        )
        return
    show_invoice(created, fmt)


def _refusal_hint(
    tenant: str, month: str, stored: list[dict[str, Any]], tenants: set[str] | None
) -> str | None:
    """What to look at after a refused finalize: the month's final invoice when it has one,
    none for a tenant that does not exist, else the estimate."""
    for inv in stored:
        spec = inv.get("spec") or {}
        same = spec.get("tenant") == tenant and spec.get("month") == month
        if same and spec.get("state") in ("Finalized", "Paid"):
            return f"see: gryvia invoice show {(inv.get('metadata') or {}).get('name')}"
    if tenants is not None and tenant not in tenants:
        return None
    return f"the estimate meanwhile: gryvia invoice --tenant {tenant} --month {month}"


def _change(ctx: typer.Context, name: str, patch: dict[str, Any], done: str) -> None:
    """Apply a life-cycle `patch` to invoice `name` after the same checks the webhook makes."""
    from gryvia_cli.errors import GryviaError
    from gryvia_cli.kube import resources as r
    from gryvia_cli.views.ledger import read_invoice
    from gryvia_operator.api.invoicing import update_problems

    access = session(ctx).access()
    inv = read_invoice(access, name)
    meta, spec = inv.get("metadata") or {}, inv.get("spec") or {}
    problems = update_problems(spec, {**spec, **patch})
    if problems:
        raise GryviaError(f"invoice {meta.get('name')} cannot change: " + "; ".join(problems))
    access.merge_patch(
        r.INVOICE,
        str(meta.get("name")),
        None,
        {"metadata": {"resourceVersion": meta.get("resourceVersion")}, "spec": patch},
    )
    success(f"{done} {spec.get('number')} ({meta.get('name')})")


@app.command("void")
def void(
    ctx: typer.Context,
    name: NameArg,
    reason: Annotated[
        str, typer.Option("--reason", metavar="TEXT", help="Why (3-500 characters).")
    ],
) -> None:
    """Void a Draft or Finalized invoice (for good: Void invoices never change again).

    The month can then be finalized again, as the next revision.

    Examples:
      gryvia invoice void inv-vision-202611-1 --reason "billed at the wrong rate"
    """
    from gryvia_operator.api.invoicing import void_patch

    state = session(ctx)
    try:
        void_patch(reason, now=state.now(), by="")  # the reason, checked before connecting
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    patch = void_patch(reason, now=state.now(), by=state.access().context.user)
    _change(ctx, name, patch, "voided")


@app.command("mark-paid")
def mark_paid(
    ctx: typer.Context,
    name: NameArg,
    method: Annotated[
        str, typer.Option("--method", metavar="TEXT", help="How it was paid.")
    ] = "manual",
    reference: Annotated[
        str, typer.Option("--reference", metavar="TEXT", help="Payment reference.")
    ] = "",
) -> None:
    """Mark a Finalized invoice Paid (for good: Paid invoices never change again).

    Examples:
      gryvia invoice mark-paid INV-vision-000001 --reference "wire 2026-1187"
    """
    from gryvia_operator.api.invoicing import paid_patch

    patch = paid_patch(now=session(ctx).now(), method=method, reference=reference)
    _change(ctx, name, patch, "paid")


@app.command("show")
def show(ctx: typer.Context, name: NameArg, output: ReportOutputOpt = None) -> None:
    """Show a finalized invoice: its lines, total and life cycle.

    With the operator's Stripe push on (`--stripe`), also the Stripe invoice it became
    (status.stripe: invoiceId, customerId, pushedAt), which -o json/yaml print as stored.

    Examples:
      gryvia invoice show inv-vision-202611-1
      gryvia invoice show INV-vision-000001 -o csv
    """
    from gryvia_cli.views.invoices import show_invoice
    from gryvia_cli.views.ledger import read_invoice

    state = session(ctx)
    show_invoice(read_invoice(state.access(), name), report_format(state, output))
