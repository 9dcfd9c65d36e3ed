"""The registry's spec of idle policies (GryviaIdlePolicy, `:idle`): polled while the view is
shown; rows and details are those of `gryvia idle-policy list -o wide` and `get`
(gryvia_cli/core/idlepolicies.py); the detail view lists each idle job with what was measured
and done."""

from __future__ import annotations

from gryvia_cli.core.idlepolicies import (
    IDLE_POLICY_WIDE_COLUMNS,
    idle_policy_details,
    idle_policy_wide_row,
)
from gryvia_cli.tui.columns import header_columns
from gryvia_cli.tui.polledview import polled_view
from gryvia_cli.tui.registry import Ctx, row_cells
from gryvia_cli.tui.widgets.rowtable import Cell
from gryvia_operator.api.idlepolicy import GryviaIdlePolicy

ACTION_MARKERS = {"warn": "info", "suspend": "warn", "cancel": "error"}
"""Marker of the ACTION cell: how hard the policy acts."""


def idle_policy_cells(policy: GryviaIdlePolicy, ctx: Ctx) -> list[Cell]:
    """NAMESPACE, then the cells of `gryvia idle-policy list -o wide`; ACTION marked, IDLE a
    warning while any covered job is idle."""
    row = [policy.namespace, *idle_policy_wide_row(policy, ctx.now)]
    idle = row[7]
    return row_cells(
        row, {2: ACTION_MARKERS[policy.spec.action], 7: "warn" if idle not in (0, "-") else ""}
    )


def _search(policy: GryviaIdlePolicy) -> str:
    jobs = " ".join(j.job for j in ((policy.status.jobs if policy.status else None) or []))
    return f"{policy.namespace} {policy.name} {policy.spec.action} {jobs}".lower()


IDLE_POLICIES = polled_view(
    "idlepolicies",
    GryviaIdlePolicy,
    title="Idle policies",
    columns=header_columns(
        ("NAMESPACE", *IDLE_POLICY_WIDE_COLUMNS),
        "14:3 16:0*32 7:0 9:1> 6:1> 6:2> 7:1> 4:0> 5:2 9:4 10:4 24:5",
        labels={"NAME": "POLICY"},
        keys={"JOB-TYPES": "types"},
    ),
    cells=idle_policy_cells,
    search=_search,
    placeholder="filter: namespace, policy, action or idle job",
    details=lambda p, ctx: idle_policy_details(p, ctx.now),
)
