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

from gryvia_cli.core.checkpointguards import guard_details, guard_wide_row
from gryvia_cli.core.gpusharing import selector_text, sharing_details, sharing_row
from gryvia_cli.core.hooks import hook_details, hook_wide_row
from gryvia_cli.core.priorities import priority_details, priority_row
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
    columns=(
        Column("namespace", "NAMESPACE", 14, 3),
        Column("name", "HOOK", 16, 0),
        Column("events", "EVENTS", 16, 2),
        Column("url", "URL", 20, 1, flex=True, max_width=48),
        Column("ready", "READY", 13, 0),
        Column("deliveries", "DELIVERED", 9, 2, justify="right"),
        Column("failures", "FAILED", 6, 1, justify="right"),
        Column("created", "AGE", 5, 4),
        Column("selector", "SELECTOR", 14, 5),
        Column("format", "FORMAT", 6, 6),
        Column("last_delivery", "LAST DELIVERY", 13, 5),
        Column("last_error", "LAST ERROR", 24, 6),
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
    columns=(
        Column("namespace", "NAMESPACE", 14, 3),
        Column("name", "GUARD", 16, 0),
        Column("selector", "SELECTOR", 16, 1, flex=True, max_width=40),
        Column("interval", "INTERVAL", 8, 1, justify="right"),
        Column("jobs", "JOBS", 4, 0, justify="right"),
        Column("last_restore", "LAST RESTORE", 26, 2),
        Column("directory", "DIRECTORY", 18, 4),
        Column("whole_job", "WHOLE JOB", 9, 5),
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
    columns=(
        Column("name", "POLICY", 16, 0, flex=True, max_width=22),
        Column("strategy", "STRATEGY", 12, 0),
        Column("sharing", "SHARING", 17, 1),
        Column("selector", "NODE SELECTOR", 34, 3),
        Column("config", "CONFIG", 14, 4),
        Column("nodes", "NODES", 14, 2),
        Column("ready", "READY", 15, 0),
        Column("created", "AGE", 5, 5),
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
