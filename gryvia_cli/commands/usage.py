"""`gryvia usage`: metered GPU-hours and estimated cost per tenant, SKU, day or job."""

from __future__ import annotations

from enum import StrEnum
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
from gryvia_operator.api.names import CLI_API_VERSION

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gryvia_cli.core.billing import GroupBy as BillingGroupBy
    from gryvia_cli.core.billing import UsageRow

app = typer.Typer()

ESTIMATE_NOTE = "costs are estimates from metered GPU time and catalog prices, not an invoice"


class GroupBy(StrEnum):
    """What one usage row totals."""

    tenant = "tenant"
    sku = "sku"
    day = "day"
    job = "job"


BILLING_GROUPS: dict[GroupBy, BillingGroupBy] = {
    GroupBy.tenant: "tenant",
    GroupBy.sku: "sku",
    GroupBy.day: "day",
    GroupBy.job: "job",
}


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
        GroupBy,
        typer.Option("--group-by", help="One row per tenant, SKU, UTC day or job (NAMESPACE/JOB)."),
    ] = GroupBy.tenant,
    output: ReportOutputOpt = None,
) -> None:
    """Metered GPU-hours and estimated cost per tenant, SKU, day or job.

    Reads the GryviaUsageRecords of all namespaces (one per job run) and totals the part of
    each run inside [--from, --to), and with `--group-by day` inside each UTC day: a run
    across a boundary is split at it in proportion to its running time, as invoices, `gryvia
    cost`, quotas and budgets split it (docs/billing.md, "Periods"). Columns: the group, GPU
    HOURS, COST, JOBS (distinct jobs with a part in the row), then a total line. Costs are
    estimates (GPU-hours x the catalog rate at metering time).
    Usage is grouped under the tenant the tenant rule names (a job outside any tenant's
    namespace: its team label, else its namespace); a name that is no GryviaTenant is marked
    `(no tenant: not invoiced)` (JSON `billable: false`) and never invoiced; `--group-by
    job` gives each job's cost so far. Usage
    whose GPU type no enabled GryviaGpuSku priced is unpriced, in no cost: its COST reads
    `unpriced` (or `... + unpriced`; SKU `unpriced`) and a warning names its GPU-hours.
    Where the operator samples GPUs (docs/gpu-metrics.md), ACTIVE GPU HOURS (GPU-hours x the
    job's mean GPU activity, of sealed runs) and IDLE COST (the rest of those GPU-hours x the
    rate) follow; `-` for a group with no such run.

    JSON/YAML: {apiVersion: gryvia.io/cli, kind: UsageReport, groupBy, from, to, tenant,
    items: [{<group>, gpuHours, cost, currency, jobs, unpricedGpuHours?, activeGpuHours?,
    idleCost?}], total: {...}, note}; `unpricedGpuHours` only with unpriced usage, `cost` null
    when none is priced, `activeGpuHours` and `idleCost` only with sampled runs.
    CSV: `<group>,gpu_hours,cost,currency,jobs` (then `active_gpu_hours,idle_cost` with
    sampled runs) and a final `total` line; cells that a
    spreadsheet would run as a formula get a leading apostrophe, cells holding a line break
    are quoted, numbers (negative ones too) stay numbers.

    Examples:
      gryvia usage --from 2026-11-01 --to 2026-11-30
      gryvia usage --tenant vision --group-by day
      gryvia usage --group-by sku -o csv > usage.csv
      gryvia usage --group-by job
    """
    from gryvia_cli.core.billing import aggregate, parse_when, usage_csv

    state = session(ctx)
    fmt = report_format(state, output)
    try:
        start = parse_when(from_, option="--from") if from_ else None
        end = parse_when(to, option="--to", end=True) if to else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if start and end and start >= end:
        raise UsageError(f"--from {from_} is not before --to {to}")
    access = state.access()
    records = read_usage_records(access, tenant)
    tenants = read_billable_tenants(access)
    key = BILLING_GROUPS[group_by]
    rows, total = aggregate(records, key, start, end, tenant, tenants)
    if total.unpriced_gpu_hours > 0:
        from gryvia_cli.core.unpriced import unpriced_warning

        hours, types = total.unpriced_gpu_hours, total.unpriced_gpu_types
        warn(unpriced_warning("usage", hours, types, "the costs"))
    if fmt is ReportFormat.csv:
        write_csv(usage_csv(rows, total, key))
        return
    if fmt is not ReportFormat.table:
        total_dict = total.as_dict(key)
        total_dict.pop(key)
        render_data(
            {
                "apiVersion": CLI_API_VERSION,
                "kind": "UsageReport",
                "groupBy": key,
                "from": start.isoformat() if start else None,
                "to": end.isoformat() if end else None,
                "tenant": tenant,
                "items": [row.as_dict(key) for row in rows],
                "total": total_dict,
                "note": ESTIMATE_NOTE,
            },
            OutputFormat(fmt.value),
        )
        return
    if not rows:
        info("No usage" + (f" for tenant {tenant}" if tenant else "") + " in this period.")
        return
    headers = [key, "gpu hours", "cost", "jobs"]
    if total.active_gpu_hours is not None:
        headers += ["active gpu hours", "idle cost"]
    render_table(headers, _table(rows, total))
    note(ESTIMATE_NOTE)


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
