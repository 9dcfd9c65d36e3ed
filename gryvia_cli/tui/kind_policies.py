"""The registry's specs of the job-policy kinds: hooks (GryviaJobHook), priorities
(GryviaPriority), checkpoint guards (GryviaCheckpointGuard) and GPU sharing policies
(GryviaGPUSharingPolicy). Each is polled while its view is shown (they change rarely and few
sessions open them, so no watch runs for them); rows and details are the ones the CLI prints
(`gryvia hook|priority|checkpoint list -o wide` and `get`, from gryvia_cli/core)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from gryvia_cli.core.checkpointguards import GUARD_WIDE_COLUMNS, guard_details, guard_wide_row
from gryvia_cli.core.gpusharing import (
    SHARING_WIDE_COLUMNS,
    selector_text,
    sharing_details,
    sharing_row,
)
from gryvia_cli.core.hooks import HOOK_WIDE_COLUMNS, hook_details, hook_wide_row
from gryvia_cli.core.priorities import priority_details, priority_row
from gryvia_cli.tui.columns import header_columns
from gryvia_cli.tui.polledview import polled_view
from gryvia_cli.tui.registry import (
    Ctx,
    model_sections,
    row_cells,
)
from gryvia_cli.tui.widgets.rowtable import Cell, Column
from gryvia_operator.api.checkpointguard import GryviaCheckpointGuard
from gryvia_operator.api.gpusharing import GryviaGPUSharingPolicy
from gryvia_operator.api.jobhook import GryviaJobHook
from gryvia_operator.api.parse import parse_valid
from gryvia_operator.api.priority import GryviaPriority

M = TypeVar("M", bound=BaseModel)


def _models(model: type[M], ctx: Ctx, key: Callable[[M], Any]) -> list[M]:
    """The polled objects that validate as `model` (describe shows any object), by `key`."""
    return sorted(parse_valid(model, ctx.polled), key=key)


# -- hooks ------------------------------------------------------------------------------------

HOOK_READY = {"Valid": "ok", "Suspended": "disabled", "Pending": "info"}
"""Marker of a hook's Ready reason; any other (InvalidSpec, SecretMissing) is an error."""


def hook_cells(hook: GryviaJobHook, ctx: Ctx) -> list[Cell]:
    """NAMESPACE, then the cells of `gryvia hook list -o wide`: READY marked by its reason,
    FAILURES and LAST ERROR as warnings when there are any."""
    row = [hook.namespace, *hook_wide_row(hook, ctx.now)]
    failures = (hook.status.failures if hook.status else None) or 0
    error = bool(hook.status and hook.status.last_error)
    return row_cells(
        row,
        {
            4: HOOK_READY.get(str(row[4]), "error"),
            6: "warn" if failures else "",
            11: "warn" if error else "dim",
        },
    )


def _hook_search(hook: GryviaJobHook) -> str:
    return " ".join([hook.namespace, hook.name, hook.spec.webhook.url, *hook.spec.events]).lower()


HOOKS = polled_view(
    "jobhooks",
    GryviaJobHook,
    title="Job hooks",
    columns=header_columns(
        ("NAMESPACE", *HOOK_WIDE_COLUMNS),
        "14:3 16:0 16:2 20:1*48 13:0 9:2> 6:1> 5:4 14:5 6:6 13:5 24:6",
        labels={"NAME": "HOOK", "DELIVERIES": "DELIVERED", "FAILURES": "FAILED"},
    ),
    cells=hook_cells,
    search=_hook_search,
    placeholder="filter: namespace, hook, URL or event",
    details=lambda h, ctx: hook_details(h, ctx.now),
)

# -- priorities -------------------------------------------------------------------------------


def priority_cells(prio: GryviaPriority, ctx: Ctx) -> list[Cell]:
    """VALUE first (the view's order: highest first), then the rest of `gryvia priority list
    -o wide`; READY `yes` ok, `pending` info, `no (reason)` error."""
    name, value, *rest = priority_row(prio, wide=True)
    ready = str(rest[1])
    marker = "ok" if ready == "yes" else "info" if ready == "pending" else "error"
    return row_cells([value, name, *rest], {3: marker})


def _priority_rows(ctx: Ctx) -> dict[str, Any]:
    found = _models(GryviaPriority, ctx, lambda p: (-p.spec.value, p.name))
    return {p.name: p for p in found}


def _priority_details(prio: GryviaPriority, ctx: Ctx) -> list[tuple[str, str]]:
    """`gryvia priority get`'s lines; the jobs naming it are those the console watches."""
    used = Counter(
        item.summary.namespace
        for item in ctx.store.jobs.values()
        if (item.raw.get("spec") or {}).get("priorityClassName") == prio.name
    )
    return priority_details(prio, dict(used))


PRIORITIES = polled_view(
    "priorities",
    GryviaPriority,
    title="Priorities",
    columns=(
        Column("value", "VALUE", 11, 0, justify="right"),
        Column("name", "PRIORITY", 16, 0),
        Column("preemption", "PREEMPTION", 20, 1),
        Column("ready", "READY", 14, 0),
        Column("range", "SPEC.PRIORITY", 13, 2),
        Column("priority_class", "PRIORITYCLASS", 16, 3),
        Column("description", "DESCRIPTION", 12, 4, flex=True, max_width=60),
    ),
    cells=priority_cells,
    search=lambda p: f"{p.name} {p.spec.description or ''}".lower(),
    placeholder="filter: priority or description",
    details=_priority_details,
    rows=_priority_rows,
    order="highest first",
    descending=True,
    sort_values={"value": lambda p: p.spec.value},
    empty="No GryviaPriorities (the operator creates the table's with priorities enabled).",
    nouns="priorities",
)

# -- checkpoint guards ------------------------------------------------------------------------


def guard_cells(guard: GryviaCheckpointGuard, ctx: Ctx) -> list[Cell]:
    """NAMESPACE, then the cells of `gryvia checkpoint list -o wide`."""
    row = guard_wide_row(guard)
    last = str(row[4])
    return row_cells([guard.namespace, *row], {5: "dim" if last == "-" else "info"})


def _guard_search(guard: GryviaCheckpointGuard) -> str:
    jobs = " ".join(j.job for j in (guard.status.jobs or [])) if guard.status else ""
    selector = selector_text(guard.spec.job_selector, "")
    return f"{guard.namespace} {guard.name} {selector} {jobs}".lower()


CHECKPOINTS = polled_view(
    "checkpointguards",
    GryviaCheckpointGuard,
    title="Checkpoint guards",
    columns=header_columns(
        ("NAMESPACE", *GUARD_WIDE_COLUMNS),
        "14:3 16:0 16:1*40 8:1> 4:0> 26:2 18:4 9:5",
        labels={"NAME": "GUARD"},
    ),
    cells=guard_cells,
    search=_guard_search,
    placeholder="filter: namespace, guard, selector or job",
    details=lambda g, ctx: guard_details(g),
    sort_values={},
    noun="guard",
)

# -- GPU sharing policies ---------------------------------------------------------------------


def sharing_cells(policy: GryviaGPUSharingPolicy, ctx: Ctx) -> list[Cell]:
    """The cells of `core.gpusharing.sharing_row`; NODES dim while none is labelled."""
    row = sharing_row(policy, ctx.now)
    return row_cells(row, {5: "dim" if row[5] == "-" else ""})


def _sharing_search(policy: GryviaGPUSharingPolicy) -> str:
    nodes = " ".join((policy.status.nodes if policy.status else None) or [])
    selector = selector_text(policy.spec.node_selector, "")
    return f"{policy.name} {policy.spec.strategy} {selector} {nodes}".lower()


GPU_SHARING = polled_view(
    "gpusharingpolicies",
    GryviaGPUSharingPolicy,
    title="GPU sharing policies",
    columns=header_columns(
        SHARING_WIDE_COLUMNS,
        "16:0*22 12:0 17:1 34:3 14:4 14:2 15:0 5:5",
        labels={"NAME": "POLICY"},
        keys={"NODE SELECTOR": "selector"},
    ),
    cells=sharing_cells,
    search=_sharing_search,
    placeholder="filter: policy, strategy, selector or node",
    sections=model_sections(
        GryviaGPUSharingPolicy, "GPU sharing", lambda p, ctx: sharing_details(p)
    ),
    noun="policy",
    nouns="policies",
)
