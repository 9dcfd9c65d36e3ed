"""The registry's Budgets spec (`:budgets`): every GryviaBudget with its state, utilisation,
limits, period and forecast, watched through the store. Rows and details are the ones
`gryvia budget list -o wide` and `gryvia budget get` print (gryvia_cli/core/budgets.py)."""

from __future__ import annotations

from typing import Any

from gryvia_cli.core.budgets import (
    budget_details,
    budget_wide_row,
    scope_text,
    state_of,
    used_percent,
)
from gryvia_cli.core.quota import percent_marker
from gryvia_cli.tui.registry import Ctx, ObjectRef, ViewSpec, model_sections, register, row_cells
from gryvia_cli.tui.widgets.rowtable import Cell, Column
from gryvia_operator.api import GryviaBudget

_USED = 5
"""Index of USED in `budget_wide_row`."""


def _budget_rows(ctx: Ctx) -> dict[str, Any]:
    budgets = ctx.store.models("budgets", GryviaBudget)
    return {b.name: b for b in sorted(budgets, key=lambda b: b.name)}


def budget_cells(budget: GryviaBudget, ctx: Ctx) -> list[Cell]:
    """The cells of `gryvia budget list -o wide`; USED is marked by its percentage (warn from
    80 %, error from 100 %), STATE by the state."""
    percent = used_percent(budget)
    marker = percent_marker(percent) if percent is not None else "dim"
    return row_cells(budget_wide_row(budget), {_USED: marker})


def _budget_search(budget: GryviaBudget) -> str:
    return f"{budget.name} {scope_text(budget)} {state_of(budget)}".lower()


def _budget_ref(budget: GryviaBudget) -> ObjectRef:
    return ObjectRef("budgets", None, budget.name)


BUDGETS = register(
    ViewSpec(
        name="budgets",
        title="Budgets",
        columns=(
            Column("name", "BUDGET", 16, 0),
            Column("scope", "SCOPE", 17, 1),
            Column("period", "PERIOD", 12, 3),
            Column("spent", "SPENT", 12, 1, justify="right"),
            Column("limit", "LIMIT", 14, 2),
            Column("used", "USED", 6, 0, justify="right"),
            Column("state", "STATE", 8, 0),
            Column("forecast", "FORECAST", 20, 4, flex=True, max_width=48),
            Column("gpu_hours", "GPU-H", 7, 5, justify="right"),
            Column("enforcement", "ENFORCE", 8, 4),
            Column("alerts", "ALERTS", 9, 6),
            Column("receiver", "RECEIVER", 16, 7),
        ),
        rows=_budget_rows,
        cells=budget_cells,
        search=_budget_search,
        ref=_budget_ref,
        kinds=frozenset({"budgets"}),
        sections=model_sections(
            GryviaBudget, "Budget", lambda b, ctx: budget_details(b, ctx.now.date())
        ),
        sort_values={"used": used_percent},
        empty="No GryviaBudgets.",
        noun="budget",
        placeholder="filter: budget, scope or state",
    ),
    "budgets",
)
