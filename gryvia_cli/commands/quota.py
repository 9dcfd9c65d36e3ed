"""`gryvia quota [TEAM] [--budget]`: each team's GPU quota use and, with --budget, its spend."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gryvia_cli.cli.options import OutputOpt, render_raw
from gryvia_cli.cli.session import session
from gryvia_cli.core.cells import Marked
from gryvia_cli.errors import NotFoundError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    emit,
    emit_marked,
    info,
    render_data,
    render_table,
    section,
    warn,
)

app = typer.Typer()


def _lines(lines: list[tuple[str, Any]]) -> None:
    for label, value in lines:
        emit_marked([f"{label + ':':<20}", value])


@app.command("quota", rich_help_panel="Tenancy")
def quota(
    ctx: typer.Context,
    team: Annotated[
        str | None,
        typer.Argument(help="Only the quotas of this team.", show_default=False),
    ] = None,
    budget: Annotated[
        bool, typer.Option("-b", "--budget", help="Also show spend against the monthly budget.")
    ] = False,
    fair_share: Annotated[
        bool,
        typer.Option(
            "--fair-share",
            help="Only the Kueue fair-share view: nominal, used, borrowed and lent GPUs per "
            "team and GPU type (needs the Kueue integration).",
        ),
    ] = False,
    output: OutputOpt = None,
) -> None:
    """GPU quota use per team, and spend against the budget.

    Per quota: allocated GPUs a/max (p%), max GPUs per job, running jobs r/max, queued jobs,
    allowed GPU types, GPU-hours this month and the phase, then each GryviaBudget of the team
    or its namespaces (spend of limit, state, alert thresholds, forecast). With --budget: spent,
    budget,
    remaining, used %, projected month-end spend, the alert threshold (a percentage, 0-100)
    and whether the limit is hard (jobs then wait in Queued once the budget is spent).

    With the Kueue integration (docs/kueue.md) a fair-share table follows: per team and GPU
    type the nominal quota of its ClusterQueue, the GPUs used, borrowed from the cohort and
    lent to it, and who borrows from whom. Kueue records what a team borrows, not from whom:
    lent is the cohort's borrowed GPUs shared among the teams with unused quota in proportion
    to it. `--fair-share` prints only that table.

    `-o json|yaml` prints the GryviaQuotaList (only TEAM's quotas when given); with --fair-share
    a FairShareList (apiVersion cli.gryvia.io/v1) whose items have cohort, team, clusterQueue,
    gpuType, flavor, nominal, used, borrowed, lent and lendable (GPUs).

    Examples:
      gryvia quota
      gryvia quota vision --budget
      gryvia quota vision -o json | jq '.items[0].status.budgetStatus'
      gryvia quota --fair-share -o json | jq '.items[] | select(.borrowed > 0)'
    """
    from gryvia_cli.core.budgets import budget_line, budgets_covering
    from gryvia_cli.core.quota import budget_lines, phase_cell, usage_lines
    from gryvia_cli.views.reads import read_optional
    from gryvia_operator.api import GryviaBudget, GryviaQuota
    from gryvia_operator.api.parse import parse_all, parse_valid

    state = session(ctx)
    fmt = state.fmt(output)
    if fair_share:
        _fair_share(state.access(), team, fmt, required=True)
        return
    data = state.access().list_objects(r.QUOTA)
    items = [
        i
        for i in data.get("items") or []
        if team is None or (i.get("spec") or {}).get("team") == team
    ]
    if team is not None and not items:
        raise NotFoundError(f"no quota for team {team}", hint="see 'gryvia quota'")
    if render_raw({**data, "items": items}, r.QUOTA, fmt):
        return
    quotas, problems = parse_all(GryviaQuota, items)
    for problem in problems:
        warn(f"skipped an invalid quota: {problem}")
    if not quotas:
        warn("No quotas found.")
        _fair_share(state.access(), team, fmt, required=False)
        return
    budgets = parse_valid(GryviaBudget, read_optional(state.access(), r.BUDGET))
    for index, q in enumerate(sorted(quotas, key=lambda q: (q.spec.team, q.name))):
        if index:
            emit()
        section(f"Quota: {q.spec.team}")
        _lines(
            [
                ("Quota", q.name),
                ("Team", q.spec.team),
                ("Namespaces", ", ".join(q.spec.namespaces)),
                *usage_lines(q),
            ]
        )
        if budget:
            lines, notes = budget_lines(q)
            _lines(lines)
            for n in notes:
                glyph = "✗" if n.marker == "error" else "⚠"
                emit_marked([Marked(f"{glyph} {n.text}", n.marker)])
        _lines([("Status", phase_cell(q))])
        for b in budgets_covering(budgets, q.spec.team, q.spec.namespaces):
            _lines([("Budget", budget_line(b))])
    if budget:
        info("Spend is an estimate from metered GPU time and catalog prices (USD).")
    _fair_share(state.access(), team, fmt, required=False)


def _fair_share(access: Any, team: str | None, fmt: OutputFormat, *, required: bool) -> None:
    """Print the Kueue fair-share rows (of `team` only when given). `required`: the user asked
    for them, so a cluster without the integration is an error and -o json|yaml prints them;
    otherwise nothing is printed when there are none or they cannot be read."""
    from gryvia_cli.core.fairshare import (
        FAIR_SHARE_COLUMNS,
        borrowing_notes,
        fair_share,
        fair_share_cells,
    )
    from gryvia_cli.views.reads import read_optional, try_read
    from gryvia_operator.api.names import CLI_API_VERSION
    from gryvia_operator.api.resources import CLUSTER_QUEUE, RESOURCE_FLAVOR

    selector = "app.kubernetes.io/managed-by=gryvia-operator"
    problems: list[str] = []
    queues = try_read(
        lambda: read_optional(access, CLUSTER_QUEUE, label_selector=selector),
        "Kueue ClusterQueues",
        problems if not required else None,
    )
    flavors = try_read(
        lambda: read_optional(access, RESOURCE_FLAVOR), "Kueue ResourceFlavors", problems
    )
    rows = fair_share(queues or [], flavors or [])
    notes = borrowing_notes(rows)
    if team is not None:
        rows = [row for row in rows if row.team == team]
        notes = [n for n in notes if n.startswith(f"{team} ") or f" {team} (" in n]
    if required and fmt in MACHINE_FORMATS:
        render_data(
            {
                "apiVersion": CLI_API_VERSION,
                "kind": "FairShareList",
                "items": [row.as_dict() for row in rows],
                "notes": notes,
            },
            fmt,
        )
        return
    if not rows:
        if required:
            raise NotFoundError(
                "no Kueue ClusterQueues of Gryvia" + (f" for team {team}" if team else ""),
                hint="the operator keeps them with --enable-kueue (docs/kueue.md)",
            )
        return
    if not required:
        emit()
        section("Kueue fair share")
    render_table(FAIR_SHARE_COLUMNS, [fair_share_cells(row) for row in rows])
    for text in notes:
        info(text)
