"""`gryvia cost [TEAM] [--period day|week|month]`: spend per team against its budget."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gryvia_cli.cli.options import OutputOpt
from gryvia_cli.cli.session import session
from gryvia_cli.core.cells import Marked
from gryvia_cli.errors import UsageError
from gryvia_cli.output import MACHINE_FORMATS, info, note, render_data, render_table, warn

if TYPE_CHECKING:
    from gryvia_cli.cli.session import Session
    from gryvia_cli.core.cost import TeamCost
    from gryvia_operator.api.periods import Period as CostPeriod

app = typer.Typer()

COST_COLUMNS = ("team", "spent", "budget", "remaining", "% used", "projected")
GPU_USE_COLUMNS = ("gpu hours", "active gpu hours", "idle cost")
"""Added after PROJECTED when some team has runs the operator sampled (docs/gpu-metrics.md)."""


class Period(StrEnum):
    """The window spend is counted in (UTC)."""

    day = "day"
    week = "week"
    month = "month"


PERIODS: dict[Period, CostPeriod] = {
    Period.day: "day",
    Period.week: "week",
    Period.month: "month",
}


def _money(value: float | None, currency: str) -> str:
    return "-" if value is None else f"{value:.2f} {currency}"


def cost_row(item: TeamCost) -> list[object]:
    """TEAM, SPENT, BUDGET, REMAINING, % USED, PROJECTED (coloured by how much is used);
    SPENT and PROJECTED say `unpriced` for usage without a price (`core.unpriced`)."""
    from gryvia_cli.core.quota import percent_marker
    from gryvia_cli.core.unpriced import money_text

    cur = item.currency
    percent = item.percent
    over = item.budget is not None and item.projected > item.budget
    hours, unpriced = item.gpu_hours, item.unpriced_gpu_hours
    return [
        item.team,
        money_text(item.spent, cur, hours, unpriced),
        _money(item.budget, "USD"),
        Marked(_money(item.remaining, "USD"), "error" if (item.remaining or 0) < 0 else "ok"),
        Marked("-" if percent is None else f"{percent:.1f}%", percent_marker(percent)),
        Marked(money_text(item.projected, cur, hours, unpriced), "warn" if over else "ok"),
    ]


def gpu_use_cells(item: TeamCost) -> list[object]:
    """GPU HOURS (allocated), ACTIVE GPU HOURS and IDLE COST of a team; the last two `-` for
    a team with no sampled run in the window."""
    hours = f"{item.gpu_hours:.4f}"
    if item.active_gpu_hours is None or item.idle_cost is None:
        return [hours, "-", "-"]
    return [hours, f"{item.active_gpu_hours:.4f}", f"{item.idle_cost:.4f} {item.currency}"]


def warn_unpriced(items: list[TeamCost]) -> None:
    """One stderr warning per team with unpriced usage: its GPU-hours, types and the fix."""
    from gryvia_cli.core.unpriced import unpriced_warning

    for item in items:
        if item.unpriced_gpu_hours > 0:
            what = f"team {item.team}"
            hours, types = item.unpriced_gpu_hours, item.unpriced_gpu_types
            warn(unpriced_warning(what, hours, types, "its spend"))


@app.command("cost", rich_help_panel="Tenancy")
def cost(
    ctx: typer.Context,
    team: Annotated[str | None, typer.Argument(help="Only this team.", show_default=False)] = None,
    period: Annotated[
        Period,
        typer.Option(
            "-p", "--period", help="day = today, week = since Monday, month = since the 1st (UTC)."
        ),
    ] = Period.month,
    all_teams: Annotated[
        bool,
        typer.Option(
            "-A",
            "--all-namespaces",
            "--all",
            help="Every team and tenant (the default without TEAM; like -A of other commands).",
        ),
    ] = False,
    group_by: Annotated[
        str | None,
        typer.Option(
            "--group-by",
            metavar="GROUP",
            help="Spend per user (the submitter), project (label gryvia.io/project) or "
            "label:KEY (a job label) instead of per team.",
            show_default=False,
        ),
    ] = None,
    output: OutputOpt = None,
) -> None:
    """Spend per team in a day, week or month, against its budget.

    Teams are the GryviaQuota teams (their namespaces) and the tenants (tenant-NAME). A
    team's spend is the estimated cost of the usage records attributed to the tenant of its
    name (spec.tenant, the tenant `gryvia usage` shows them under) and of those in its
    quotas' namespaces, inside the period; a run that began before the period counts only
    for its part inside it. Prices are those the
    catalog (GryviaGpuSku) gave at metering time. BUDGET is the monthly budget (the quota's
    budget.monthlyBudget, else the tenant's quotas.costUSD.monthly), prorated to a day or a
    week; PROJECTED extends the spend linearly to the end of the period. Usage whose GPU
    type no enabled GryviaGpuSku priced is unpriced, in no amount: SPENT reads `unpriced`
    (or `... + unpriced`) and a warning names its GPU-hours and types. Then one line per
    GryviaBudget of the team (all budgets without TEAM): its spend of limit, state, alert
    thresholds and forecast, as the operator last computed them (`gryvia budget get`).
    Where the operator samples GPUs (docs/gpu-metrics.md), GPU HOURS (allocated), ACTIVE GPU
    HOURS (GPU-hours x the job's mean GPU activity, of sealed runs) and IDLE COST (the rest of
    those GPU-hours x the rate) follow, each run counted for its part in the period; `-` for
    a team with no such run. `--group-by user`, `project` or `label:KEY` shows the spend of
    each submitter, project or label value instead (records without one are the row `-`),
    then the GryviaBudgets of that scope type (`user`, `project`).

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: CostReport, period, from, to, items: [{team,
    namespaces, spent, budget, monthlyBudget, remaining, percentUsed, projected, currency,
    gpuHours, jobs, unpricedGpuHours?, activeGpuHours?, idleCost?}], budgets: [{name, scope,
    period, state, usage, utilization, limit, thresholds, forecast}], total: {spent, budget,
    remaining, activeGpuHours?, idleCost?}};
    `unpricedGpuHours` only with unpriced usage, `spent` and `projected` null when none of a
    team's usage is priced (docs/billing.md, "Unpriced usage"); `activeGpuHours` and
    `idleCost` only for a team with sampled runs, and `total.activeGpuHours` and
    `total.idleCost` when some team has them.

    Examples:
      gryvia cost
      gryvia cost -A
      gryvia cost vision --period week
      gryvia cost -p day -o json | jq '.items[] | {team, spent}'
      gryvia cost --group-by project
    """
    from gryvia_cli.core.budgets import budget_line
    from gryvia_cli.views.cost import read_team_costs

    if all_teams and team is not None:
        raise UsageError(
            f"pass either TEAM ({team}) or -A/--all-namespaces, not both",
            hint="gryvia cost -A shows every team; gryvia cost TEAM one of them",
        )
    state = session(ctx)
    fmt = state.fmt(output)
    if group_by is not None:
        _by_group(state, group_by, team, PERIODS[period], fmt)
        return
    report = read_team_costs(state, team, PERIODS[period])
    for text in report.warnings:
        warn(text)
    items, chosen, window = report.items, report.budgets, report.window
    start, end = report.start, report.end
    spent, total_budget = report.spent, report.total_budget
    warn_unpriced(items)
    if fmt in MACHINE_FORMATS:
        render_data(report.as_dict(), fmt)
        return
    if not items and not chosen:
        info("No quotas or tenants found.")
        return
    info(f"Period: {window}, {start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC")
    sampled = any(i.active_gpu_hours is not None for i in items)
    columns = COST_COLUMNS + GPU_USE_COLUMNS if sampled else COST_COLUMNS
    extra = gpu_use_cells if sampled else lambda _: []
    render_table(columns, [cost_row(i) + extra(i) for i in items])
    currencies = {i.currency for i in items if i.spent}
    currency = currencies.pop() if len(currencies) == 1 else "MIXED" if currencies else "USD"
    unpriced = " + unpriced" if any(i.unpriced_gpu_hours > 0 for i in items) else ""
    info(f"Total spent: {spent:.2f} {currency}{unpriced}")
    if total_budget is not None:
        info(f"Total budget: {total_budget:.2f} USD, remaining {total_budget - spent:.2f} USD")
        if total_budget:
            info(f"Overall usage: {100.0 * spent / total_budget:.1f}%")
    for b in chosen:
        info(budget_line(b))
    if window != "month":
        note(f"budgets are the monthly budgets prorated to the {window}")
    note("spend is an estimate from metered GPU time and catalog prices")


def _by_group(
    state: Session,
    group_by: str,
    team: str | None,
    window: CostPeriod,
    fmt: Any,
) -> None:
    """`cost --group-by`: spend per user, project or label value in the period, then the
    budgets of that scope type."""
    from gryvia_cli.core.billing import group_field
    from gryvia_cli.core.budgets import budget_line
    from gryvia_cli.core.unpriced import money_text
    from gryvia_cli.views.cost import read_group_costs

    report = read_group_costs(state, group_by, team, window)
    if fmt in MACHINE_FORMATS:
        render_data(report.as_dict(), fmt)
        return
    items, total, chosen = report.items, report.total, report.budgets
    start, end = report.start, report.end
    field = group_field(report.key)
    info(f"Period: {window}, {start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC")
    rows = [
        [
            i.row.key,
            money_text(i.row.cost, i.row.currency, i.row.gpu_hours, i.row.unpriced_gpu_hours),
            f"{i.row.gpu_hours:.4f}",
            i.row.jobs,
            money_text(i.projected, i.row.currency, i.row.gpu_hours, i.row.unpriced_gpu_hours),
        ]
        for i in items
    ]
    if rows:
        render_table((field, "spent", "gpu hours", "jobs", "projected"), rows)
    else:
        info(f"No usage in this {window}.")
    info(f"Total spent: {total.cost:.2f} {total.currency}")
    for b in chosen:
        info(budget_line(b))
    note("spend is an estimate from metered GPU time and catalog prices")
