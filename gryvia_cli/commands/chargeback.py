"""`gryvia chargeback show|export MONTH`: a month's cost-center report (GryviaChargeback)."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.reports import ReportFormat, ReportOutputOpt, report_format, write_csv
from gryvia_cli.cli.session import session
from gryvia_cli.output import OutputFormat, info, note, render_data, render_table, warn

app = typer.Typer()

MonthArg = Annotated[str, typer.Argument(metavar="MONTH", help="The UTC month, YYYY-MM.")]
NameOpt = Annotated[
    str | None,
    typer.Option(
        "--name", help="The GryviaChargeback [default: the only one].", show_default=False
    ),
]


@app.callback()
def chargeback() -> None:
    """A month's cost-center report: show it or export its records.

    A GryviaChargeback (docs/billing.md, Chargeback) charges the tenants' metered GPU cost
    to cost centers, with the reservations' idle cost and a platform share added in
    proportion; the operator writes each closed month's report once."""


COLUMNS = ["COST CENTER", "TENANT", "METERED", "RESERVATION IDLE", "PLATFORM", "TOTAL", "RECORDS"]


@app.command("show")
def show(
    ctx: typer.Context, month: MonthArg, name: NameOpt = None, output: ReportOutputOpt = None
) -> None:
    """A month's charge per cost center and tenant: metered cost, its shares of the
    reservations' idle cost and of the platform share, and the total.

    A closed month shows the report the operator wrote once (status of the GryviaChargeback);
    an open or not yet reported month shows a preview by the same rule, marked as such.
    Shared costs are split in proportion to metered cost, to the cent (docs/billing.md,
    Chargeback). JSON/YAML: {apiVersion, kind: ChargebackReport, chargeback, written,
    recordsMatch, month, currency, metered, reservationIdle, reservationIdleGpuHours,
    platform, shared, total, lines: [{costCenter, tenant, metered, reservationIdle, platform,
    total, usageRecords}], usageRecords, recordsDigest, unpricedGpuHours, writtenAt}.

    Examples:
      gryvia chargeback show 2026-11
      gryvia chargeback show 2026-11 -o json | jq '.lines[] | {costCenter, total}'
    """
    from gryvia_cli.views.chargeback import month_chargeback

    state = session(ctx)
    fmt = report_format(state, output)
    found = month_chargeback(state, name, month)
    report = found.report
    if fmt is not ReportFormat.table and fmt is not ReportFormat.csv:
        render_data(found.as_dict(), OutputFormat(fmt.value))
        return
    if fmt is ReportFormat.csv:
        from gryvia_cli.core.csvexport import to_csv

        header = ["costCenter", "tenant", "metered", "reservationIdle", "platform", "total"]
        rows = [
            [x.cost_center, x.tenant, x.metered, x.reservation_idle, x.platform, x.total]
            for x in report.lines
        ]
        write_csv(to_csv([*header, "currency"], [[*row, report.currency] for row in rows]))
        return
    if not found.written:
        note(f"preview: {found.policy} has not written {month} (it does once the month closes)")
    elif not found.digest_matches:
        warn("the usage records changed since this report was written; it stays as written")
    info(f"Chargeback {found.policy}, {month} ({report.currency})")
    render_table(
        COLUMNS,
        [
            [
                x.cost_center,
                x.tenant,
                x.metered,
                x.reservation_idle,
                x.platform,
                x.total,
                x.usage_records,
            ]
            for x in report.lines
        ],
    )
    info(
        f"Metered {report.metered}, reservation idle {report.reservation_idle} "
        f"({report.reservation_idle_gpu_hours} GPU-hours), platform {report.platform}: "
        f"total {report.total} {report.currency}"
    )


@app.command("export")
def export(
    ctx: typer.Context, month: MonthArg, name: NameOpt = None, output: ReportOutputOpt = None
) -> None:
    """The usage records behind a month's chargeback, one row each (CSV by default): month,
    costCenter, tenant, project, usageRecord, job, gpuHours, cost (6 places: the record's
    cost for the part of its run in the month), currency, sealed.

    The rows of a cost center and tenant add up to that line's metered cost before rounding;
    a written report's recordsDigest is checked against them (a warning when the records
    changed after it was written). -o json: {apiVersion, kind: ChargebackExport, report (as
    `show -o json`), records: [{...the columns}]}.

    Examples:
      gryvia chargeback export 2026-11 > chargeback-2026-11.csv
      gryvia chargeback export 2026-11 -o json > chargeback-2026-11.json
    """
    from gryvia_cli.core.csvexport import to_csv
    from gryvia_cli.views.chargeback import EXPORT_COLUMNS, export_rows, month_chargeback

    state = session(ctx)
    local = output or ReportFormat.csv
    fmt = report_format(state, local)
    found = month_chargeback(state, name, month)
    if found.written and not found.digest_matches:
        warn("the usage records changed since the report was written (recordsDigest differs)")
    rows = export_rows(month, found.parts)
    if fmt in (ReportFormat.csv, ReportFormat.table):
        write_csv(to_csv(EXPORT_COLUMNS, rows))
        return
    document = {
        **found.as_dict(),
        "kind": "ChargebackExport",
        "records": [dict(zip(EXPORT_COLUMNS, map(str, row), strict=True)) for row in rows],
    }
    render_data(document, OutputFormat(fmt.value))
