"""The `gryvia quota` report of one GryviaQuota: GPU use against limits and, with --budget,
spend against the monthly budget (pure).

Rules: figures come from the quota's status as the operator wrote it, and what it has not
written yet is computed from the spec; `budget.alertThreshold` is a percentage 0..100, compared
with the percent used as it is; a hard limit at 100 % keeps new GPU jobs of the team Queued.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gryvia_cli.core.cells import Marked
from gryvia_operator.api import GryviaQuota

WARN_PERCENT = 80.0
Line = tuple[str, Any]
"""A (label, value) line; the value is text or a Marked cell."""


@dataclass(frozen=True)
class Note:
    """A remark under a quota: `warn` or `error`, and its text."""

    marker: str
    text: str


def percent_marker(percent: float | None) -> str:
    """`error` from 100 %, `warn` from 80 %, else `ok` (`unknown` without a percentage)."""
    if percent is None:
        return "unknown"
    return "error" if percent >= 100 else "warn" if percent >= WARN_PERCENT else "ok"


QUOTA_PHASE_MARKERS = {"Active": "ok", "Full": "warn", "-": "unknown"}
"""How a quota's phase is coloured: Active ok, Full (at the limit) warn, others error."""


def quota_phase_marker(phase: str) -> str:
    """The marker of a quota phase: `ok` Active, `warn` Full, `unknown` `-`, else `error`."""
    return QUOTA_PHASE_MARKERS.get(phase, "error")


def gpu_use_marker(allocated: int, limit: int) -> str:
    """GPUs in use against `maxGPUs`: `error` only above the limit, `warn` from 80 % up to
    a full quota (8 of 8 is Full, not exceeded), else `ok`."""
    if allocated > limit:
        return "error"
    return "warn" if limit and allocated >= WARN_PERCENT / 100 * limit else "ok"


def _limit(used: int, limit: int | None) -> str:
    return f"{used}/{limit}" if limit else f"{used} (no limit)"


def usage_lines(quota: GryviaQuota) -> list[Line]:
    """Allocated `a/max (p%)`, max per job, running `r/maxRunning`, queued, allowed GPU
    types and GPU-hours this month."""
    limits = quota.spec.gpu_quota
    usage = quota.status.current_usage if quota.status else None
    allocated = (usage.allocated_gpus if usage else None) or 0
    percent = 100.0 * allocated / limits.max_gpus if limits.max_gpus else None
    alloc_text = f"{allocated}/{limits.max_gpus}" + (
        f" ({percent:.0f}%)" if percent is not None else " (no GPUs allowed)"
    )
    running = (usage.running_jobs if usage else None) or 0
    queued = (usage.queued_jobs if usage else None) or 0
    return [
        ("Allocated GPUs", Marked(alloc_text, gpu_use_marker(allocated, limits.max_gpus))),
        (
            "Max GPUs per job",
            str(limits.max_gpus_per_job) if limits.max_gpus_per_job else "no limit",
        ),
        ("Running jobs", _limit(running, limits.max_running_jobs)),
        ("Queued jobs", _limit(queued, limits.max_queued_jobs)),
        ("Allowed GPU types", ", ".join(limits.allowed_gpu_types or []) or "any"),
        ("GPU hours (month)", f"{(usage.gpu_hours if usage else None) or 0.0:.2f}"),
    ]


def budget_figures(quota: GryviaQuota) -> dict[str, float] | None:
    """spent, budget, remaining, percent and projected (USD) from the status, computing what
    the operator has not written yet; None when the quota has no monthly budget."""
    budget = quota.spec.budget
    if budget is None or budget.monthly_budget is None:
        return None
    limit = budget.monthly_budget
    status = quota.status.budget_status if quota.status else None
    spent = (status.spent_this_month if status else None) or 0.0
    percent = status.percent_used if status and status.percent_used is not None else None
    if percent is None:
        percent = 100.0 * spent / limit if limit else 0.0
    remaining = status.remaining_budget if status and status.remaining_budget is not None else None
    projected = status.projected_spend if status and status.projected_spend is not None else None
    return {
        "spent": spent,
        "budget": limit,
        "remaining": limit - spent if remaining is None else remaining,
        "percent": percent,
        "projected": spent if projected is None else projected,
    }


def budget_lines(quota: GryviaQuota) -> tuple[list[Line], list[Note]]:
    """Spent, budget, remaining, used %, projected, alert threshold and hard limit lines,
    and the notes: hard limit reached, budget exceeded, alert threshold reached, projected
    to exceed."""
    figures = budget_figures(quota)
    if figures is None:
        return [("Budget", "none set")], []
    budget = quota.spec.budget
    assert budget is not None
    spent, limit, percent = figures["spent"], figures["budget"], figures["percent"]
    threshold = budget.alert_threshold
    lines: list[Line] = [
        ("Spent", f"{spent:.2f} USD"),
        ("Budget", f"{limit:.2f} USD"),
        (
            "Remaining",
            Marked(
                f"{figures['remaining']:.2f} USD", "error" if figures["remaining"] < 0 else "ok"
            ),
        ),
        ("Used", Marked(f"{percent:.1f}%", percent_marker(percent))),
        (
            "Projected",
            Marked(
                f"{figures['projected']:.2f} USD",
                "warn" if figures["projected"] > limit else "ok",
            ),
        ),
        ("Alert threshold", f"{threshold:g}%" if threshold is not None else "-"),
        ("Hard limit", "yes" if budget.hard_limit else "no"),
    ]
    notes: list[Note] = []
    if budget.hard_limit and percent >= 100:
        notes.append(
            Note(
                "error",
                f"hard limit reached: new GPU jobs of team {quota.spec.team} wait in phase "
                "Queued until the budget is raised or the month ends",
            )
        )
    elif percent >= 100:
        notes.append(Note("warn", "budget exceeded (no hard limit: jobs still start)"))
    elif threshold is not None and percent >= threshold:
        notes.append(Note("warn", f"alert threshold ({threshold:g}%) reached"))
    if percent < 100 and figures["projected"] > limit:
        notes.append(
            Note(
                "warn",
                f"projected to exceed the budget by month end ({figures['projected']:.2f} USD)",
            )
        )
    return lines, notes


def phase_cell(quota: GryviaQuota) -> Marked:
    """`status.phase` coloured by `quota_phase_marker` (Active ok, Full warn, exceeded an
    error), `-` before the first status."""
    phase = (quota.status.phase if quota.status else None) or "-"
    return Marked(phase, quota_phase_marker(phase))
