"""`gryvia usage`: metered GPU-hours and estimated cost per tenant, SKU, day or job."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

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
from gryvia_cli.output import OutputFormat, info, note, render_data, render_table, warn
from gryvia_cli.views.reads import read_billable_tenants, read_usage_records
from gryvia_cli.views.usage import ESTIMATE_NOTE
from gryvia_operator.api.names import CLI_API_VERSION

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Collection, Sequence

    from gryvia_cli.core.billing import UsageRow
    from gryvia_operator.api import GryviaUsageRecord

app = typer.Typer()


def _complete_group(incomplete: str) -> list[str]:
    from gryvia_cli.core.billing import GROUPS

    return [g for g in (*GROUPS, "label:") if g.startswith(incomplete)]


@app.command("usage", rich_help_panel="Tenancy")
def usage(
    ctx: typer.Context,
    tenant: TenantOpt = None,
    from_: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="DATE",
            help="Usage at or after DATE (YYYY-MM-DD, UTC, or RFC 3339).",
            show_default=False,
        ),
    ] = None,
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            metavar="DATE",
            help="Usage before DATE; a date alone includes that whole UTC day.",
            show_default=False,
        ),
    ] = None,
    group_by: Annotated[
        str,
        typer.Option(
            "--group-by",
            metavar="GROUP",
            help="One row per tenant, sku, day (UTC), job (NAMESPACE/JOB), user (the "
            "submitter), project (label gryvia.io/project) or label:KEY (a job label).",
            autocompletion=_complete_group,
        ),
    ] = "tenant",
    format_: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="FORMAT",
            help="focus: one FinOps FOCUS 1.2 row per usage record and month (CSV, or JSON "
            "with -o json), for FinOps tools.",
            show_default=False,
        ),
    ] = None,
    output: ReportOutputOpt = None,
) -> None:
    """Metered GPU-hours and estimated cost per tenant, SKU, day, job, user, project or label.

    Reads the GryviaUsageRecords of all namespaces (one per job run) and totals the part of
    each run inside [--from, --to), and with `--group-by day` inside each UTC day: a run
    across a boundary is split at it in proportion to its running time, as invoices, `gryvia
    cost`, quotas and budgets split it (docs/billing.md, "Periods"). Columns: the group, GPU
    HOURS, COST, JOBS (distinct jobs with a part in the row), then a total line. Costs are
    estimates (GPU-hours x the catalog rate at metering time).
    Usage is grouped under the tenant the tenant rule names (a job outside any tenant's
    namespace: its team label, else its namespace); a name that is no GryviaTenant is marked
    `(no tenant: not invoiced)` (JSON `billable: false`) and never invoiced; `--group-by
    job` gives each job's cost so far. `--group-by user` totals by who submitted each job (the
    admission webhook's stamp), `project` by the jobs' label gryvia.io/project, `label:KEY`
    by any job label (e.g. `label:gryvia.io/team`); records without the value (metered before
    records carried it, or a job without the label) are the row `-`. Usage
    whose GPU type no enabled GryviaGpuSku priced is unpriced, in no cost: its COST reads
    `unpriced` (or `... + unpriced`; SKU `unpriced`) and a warning names its GPU-hours.
    Where the operator samples GPUs (docs/gpu-metrics.md), ACTIVE GPU HOURS (GPU-hours x the
    job's mean GPU activity, of sealed runs) and IDLE COST (the rest of those GPU-hours x the
    rate) follow; `-` for a group with no such run.

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: UsageReport, groupBy, from, to, tenant,
    items: [{<group> (`label` for label:KEY), gpuHours, cost, currency, jobs,
    unpricedGpuHours?, activeGpuHours?, idleCost?}], total: {...}, note}; `unpricedGpuHours`
    only with unpriced usage, `cost` null when none is priced, `activeGpuHours` and
    `idleCost` only with sampled runs.
    CSV: `<group>,gpu_hours,cost,currency,jobs` (then `active_gpu_hours,idle_cost` with
    sampled runs) and a final `total` line; cells that a
    spreadsheet would run as a formula get a leading apostrophe, cells holding a line break
    are quoted, numbers (negative ones too) stay numbers.

    `--format focus` writes the usage in the FinOps Foundation's FOCUS 1.2 format instead
    (docs/billing.md, "FOCUS export"): one row per usage record and UTC month with every
    mandatory FOCUS column (BilledCost, EffectiveCost, ListCost, ChargePeriodStart/End,
    BillingPeriodStart/End, BillingAccountId = the tenant, ...), ConsumedQuantity and
    PricingQuantity in GPU-Hours, SkuId, ResourceId (the job's uid), Tags (the job's
    labels) and x_User, x_Project, x_GpuType, x_Gpus, x_Unpriced; CSV, or {apiVersion,
    kind: FocusReport, focusVersion, from, to, items} with -o json|yaml. A tenant's
    BilledCost over a month sums to its invoice's subtotal; usage of names that are no
    GryviaTenant is never billed and left out.

    Examples:
      gryvia usage --from 2026-11-01 --to 2026-11-30
      gryvia usage --tenant vision --group-by day
      gryvia usage --group-by sku -o csv > usage.csv
      gryvia usage --group-by job
      gryvia usage --group-by project --from 2026-11-01 --to 2026-11-30
      gryvia usage --group-by label:gryvia.io/team -o json
      gryvia usage --format focus --from 2026-11-01 --to 2026-11-30 > focus.csv
    """
    from gryvia_cli.core.billing import usage_csv
    from gryvia_cli.views.usage import read_usage, usage_document, usage_window

    state = session(ctx)
    fmt = report_format(state, output)
    key, start, end = usage_window(group_by, from_, to)
    if format_ is not None and format_ != "focus":
        raise UsageError(
            f"--format {format_!r}: the one export format is focus",
            hint="for a CSV of this report use -o csv",
        )
    if format_ == "focus":
        access = state.access()
        records = read_usage_records(access, tenant)
        mine = [r for r in records if tenant is None or r.spec.tenant == tenant]
        _focus(mine, start, end, read_billable_tenants(access), fmt)
        return
    rows, total = read_usage(state, tenant, key, start, end)
    if total.unpriced_gpu_hours > 0:
        from gryvia_cli.core.unpriced import unpriced_warning

        hours, types = total.unpriced_gpu_hours, total.unpriced_gpu_types
        warn(unpriced_warning("usage", hours, types, "the costs"))
    if fmt is ReportFormat.csv:
        write_csv(usage_csv(rows, total, key))
        return
    if fmt is not ReportFormat.table:
        document = usage_document(rows, total, key, start, end, tenant)
        render_data(document, OutputFormat(fmt.value))
        return
    if not rows:
        info("No usage" + (f" for tenant {tenant}" if tenant else "") + " in this period.")
        return
    headers = [key.removeprefix("label:"), "gpu hours", "cost", "jobs"]
    if total.active_gpu_hours is not None:
        headers += ["active gpu hours", "idle cost"]
    render_table(headers, _table(rows, total))
    note(ESTIMATE_NOTE)


def _focus(
    records: Sequence[GryviaUsageRecord],
    start: dt.datetime | None,
    end: dt.datetime | None,
    tenants: Collection[str] | None,
    fmt: ReportFormat,
) -> None:
    """`usage --format focus`: FOCUS rows as CSV, or wrapped as JSON/YAML."""
    from gryvia_cli.core.billing import EVER, unbilled_usage
    from gryvia_cli.core.focus import FOCUS_VERSION, focus_csv, focus_json, focus_rows

    rows = focus_rows(records, start, end, tenants)
    for stray in unbilled_usage(records, tenants, start or EVER[0], end or EVER[1]):
        warn(
            f"left out {stray.gpu_hours:.4f} GPU-hours of {stray.key}: no GryviaTenant of that "
            "name, so never billed (gryvia usage shows it)"
        )
    if fmt not in (ReportFormat.table, ReportFormat.csv):
        render_data(
            {
                "apiVersion": CLI_API_VERSION,
                "kind": "FocusReport",
                "focusVersion": FOCUS_VERSION,
                "from": start.isoformat() if start else None,
                "to": end.isoformat() if end else None,
                "items": focus_json(rows),
            },
            OutputFormat(fmt.value),
        )
        return
    write_csv(focus_csv(rows))


def _table(rows: Sequence[UsageRow], total: UsageRow) -> list[list[object]]:
    from gryvia_cli.core.unpriced import money_text

    def use(row: UsageRow) -> list[object]:
        if total.active_gpu_hours is None:
            return []
        if row.active_gpu_hours is None or row.idle_cost is None:
            return ["-", "-"]
        return [f"{row.active_gpu_hours:.4f}", f"{row.idle_cost:.4f} {row.currency}"]

    return [
        [
            row.key if row.billable else f"{row.key} (no tenant: not invoiced)",
            f"{row.gpu_hours:.4f}",
            money_text(row.cost, row.currency, row.gpu_hours, row.unpriced_gpu_hours, places=4),
            row.jobs,
            *use(row),
        ]
        for row in (*rows, total)
    ]
