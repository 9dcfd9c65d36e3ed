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
    emit,
    emit_marked,
    info,
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
    output: OutputOpt = None,
) -> None:
    """GPU quota use per team, and spend against the budget.

    Per quota: allocated GPUs a/max (p%), max GPUs per job, running jobs r/max, queued jobs,
    allowed GPU types, GPU-hours this month and the phase, then each GryviaBudget of the team
    or its namespaces (spend of limit, state, alert thresholds, forecast). With --budget: spent,
    budget,
    remaining, used %, projected month-end spend, the alert threshold (a percentage, 0-100)
    and whether the limit is hard (jobs then wait in Queued once the budget is spent).

    `-o json|yaml` prints the GryviaQuotaList (only TEAM's quotas when given).

    Examples:
      gryvia quota
      gryvia quota vision --budget
      gryvia quota vision -o json | jq '.items[0].status.budgetStatus'
    """
    from gryvia_cli.core.budgets import budget_line, budgets_covering
    from gryvia_cli.core.quota import budget_lines, phase_cell, usage_lines
    from gryvia_cli.views.reads import read_optional
    from gryvia_operator.api import GryviaBudget, GryviaQuota
    from gryvia_operator.api.parse import parse_all, parse_valid

    state = session(ctx)
    fmt = state.fmt(output)
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
