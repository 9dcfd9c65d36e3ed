"""Billing periods: the UTC window of a day, week or month, and the share of a metered run
inside a window.

One rule for the operator (quota budgets, projections) and the client (`gryvia cost`,
`usage`, `invoice`, the console's Cost view). Windows are half-open [start, end) in UTC:
day = from midnight, week = from Monday 00:00 (ISO 8601 weeks), month = from the 1st. A run
that crosses a window's edge counts for the part of its GPU-hours inside the window, assuming
it burned evenly (the FinOps "amortised" view of a usage line).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from gryvia_operator.api.usagerecord import GryviaUsageRecord

Period = Literal["day", "week", "month"]
PERIODS: tuple[Period, ...] = ("day", "week", "month")


def month_bounds(month: str) -> tuple[dt.datetime, dt.datetime]:
    """[start, end) in UTC of a `YYYY-MM` month. Raises ValueError naming the format."""
    try:
        start = dt.datetime.strptime(month, "%Y-%m").replace(tzinfo=dt.UTC)
    except ValueError:
        raise ValueError(f"--month {month!r}: use YYYY-MM, e.g. 2026-11") from None
    end = (start + dt.timedelta(days=32)).replace(day=1)
    return start, end


def period_window(period: Period, now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """[start, end) in UTC of the day, week (Monday to Monday) or month holding `now`."""
    utc = now.astimezone(dt.UTC)
    midnight = utc.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "day":
        return midnight, midnight + dt.timedelta(days=1)
    if period == "week":
        monday = midnight - dt.timedelta(days=midnight.weekday())
        return monday, monday + dt.timedelta(days=7)
    return month_bounds(f"{utc:%Y-%m}")


def elapsed_fraction(period: Period, now: dt.datetime) -> float:
    """The part (0..1] of the period holding `now` that has passed (never 0, so a linear
    projection `spent / fraction` is always defined)."""
    start, end = period_window(period, now)
    return min(max((now - start) / (end - start), 1e-6), 1.0)


def share_in_window(
    run_start: dt.datetime, run_end: dt.datetime, start: dt.datetime, end: dt.datetime
) -> float:
    """The fraction (0..1) of the run [run_start, run_end) that lies in [start, end); a run
    of no length counts wholly when it starts inside."""
    if run_end <= run_start:
        return 1.0 if start <= run_start < end else 0.0
    overlap = (min(run_end, end) - max(run_start, start)).total_seconds()
    return max(overlap, 0.0) / (run_end - run_start).total_seconds()


def metered_interval(record: GryviaUsageRecord) -> tuple[dt.datetime, dt.datetime]:
    """The run a usage record has metered so far: `spec.start` to `spec.end`, or for an open
    record to start + GPU-hours / GPUs (the running time billed up to its last refresh)."""
    spec = record.spec
    if spec.end is not None:
        return spec.start, spec.end
    hours = spec.gpu_hours / spec.gpus if spec.gpus else 0.0
    return spec.start, spec.start + dt.timedelta(hours=hours)


def record_share(record: GryviaUsageRecord, start: dt.datetime, end: dt.datetime) -> float:
    """The fraction (0..1) of a usage record's metered run inside [start, end)."""
    return share_in_window(*metered_interval(record), start, end)


def spend_in_window(
    records: Iterable[GryviaUsageRecord], start: dt.datetime, end: dt.datetime
) -> tuple[float, float]:
    """(GPU-hours, cost) of `records` inside [start, end), each counted for its share."""
    hours = cost = 0.0
    for record in records:
        share = record_share(record, start, end)
        if share:
            hours += record.spec.gpu_hours * share
            cost += record.spec.cost * share
    return hours, cost
