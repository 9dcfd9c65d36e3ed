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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from gryvia_operator.api.timeslicing import billed_gpus

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


@dataclass(frozen=True)
class MeteredRun:
    """What billing windows need of one usage record: its start and end (None while open),
    the GPUs it bills (`api.timeslicing.billed_gpus`: physical GPUs for time-sliced units,
    e.g. 0.25), GPU-hours metered so far and cost (USD or the record's currency)."""

    start: dt.datetime
    end: dt.datetime | None
    gpus: float
    gpu_hours: float
    cost: float

    @classmethod
    def of_record(cls, record: GryviaUsageRecord) -> MeteredRun:
        """The run of a validated usage record."""
        spec = record.spec
        gpus = spec.gpus if spec.physical_gpus is None else spec.physical_gpus
        return cls(spec.start, spec.end, gpus, spec.gpu_hours, spec.cost)

    @classmethod
    def of_raw(cls, obj: Mapping[str, Any]) -> MeteredRun | None:
        """The run of a raw GryviaUsageRecord as the API returns it (no model validation:
        the operator reads thousands every second); None when its spec is malformed."""
        spec = obj.get("spec") or {}
        try:
            start = _utc(spec["start"])
            end = _utc(spec["end"]) if spec.get("end") else None
            return cls(
                start,
                end,
                billed_gpus(spec),
                float(spec.get("gpuHours") or 0.0),
                float(spec.get("cost") or 0.0),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def interval(self) -> tuple[dt.datetime, dt.datetime]:
        """`start` to `end`, or for an open run to start + GPU-hours / billed GPUs (the
        running time billed up to its last refresh)."""
        if self.end is not None:
            return self.start, self.end
        hours = self.gpu_hours / self.gpus if self.gpus else 0.0
        return self.start, self.start + dt.timedelta(hours=hours)


def _utc(value: Any) -> dt.datetime:
    when = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def record_share(record: GryviaUsageRecord, start: dt.datetime, end: dt.datetime) -> float:
    """The fraction (0..1) of a usage record's metered run inside [start, end)."""
    return share_in_window(*MeteredRun.of_record(record).interval(), start, end)


def spend_in_window(
    runs: Iterable[MeteredRun], start: dt.datetime, end: dt.datetime
) -> tuple[Decimal, Decimal]:
    """(GPU-hours, cost) of metered runs inside [start, end), each counted for its share.

    Summed in Decimal, exact: each run's GPU-hours and cost as the record wrote them (a float
    read back by its shortest repr, `16.01` is 16.01) times its share, so 16.01 + 16.01 + 67.68
    is 99.70, never 99.70000000000002 as a float sum is. The budget gates compare this spend
    with their limits (`api.budgetgate`, `reconcile.quotas`), where reaching a limit exactly
    is allowed; callers that only display it may convert to float."""
    hours = cost = Decimal(0)
    for run in runs:
        share = share_in_window(*run.interval(), start, end)
        if share:
            part = Decimal(repr(share))
            hours += Decimal(repr(run.gpu_hours)) * part
            cost += Decimal(repr(run.cost)) * part
    return hours, cost
