"""Billing periods: the UTC window of a day, week or month, and the share of a metered run
inside a window.

The one period rule for money (docs/billing.md, "Periods"), shared by the operator (quota
`spentThisMonth`, budgets, projections) and the client (`gryvia cost`, estimate and finalized
invoices, the console's Cost view). Windows are half-open [start, end) in UTC: day = from
midnight, week = from Monday 00:00 (ISO 8601 weeks), month = from the 1st. A run is split at
the windows' edges: it counts in a window for the part of its GPU-hours and cost inside it,
in proportion to its running time there (it burned evenly: the FinOps "amortised" view of a
usage line); a run of no length counts wholly in the window holding its start.
`share_in_window` is the rule in floats (quotas, budgets, `gryvia cost`); `split_in_window` is
the same rule in Decimal, to 6 places, for invoices and `gryvia usage` (over the windows of
`run_windows`), whose windows of one run add up exactly.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any, Literal

from gryvia_operator.api.timeslicing import billed_gpus

if TYPE_CHECKING:
    from gryvia_operator.api.usagerecord import GryviaUsageRecord

Period = Literal["day", "week", "month"]
PERIODS: tuple[Period, ...] = ("day", "week", "month")
PLACES = Decimal("0.000001")
"""Amounts split by `split_in_window` have 6 places, as the ledger's (`api.ledger.amount`)."""
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_SECOND = dt.timedelta(seconds=1)
_NONE = Decimal("0.000000")


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


def in_window(
    run_start: dt.datetime, run_end: dt.datetime, start: dt.datetime, end: dt.datetime
) -> bool:
    """True when the run [run_start, run_end) has a part in the window [start, end) by the
    rule of `split_in_window` (times cut to whole seconds): it overlaps the window, or it has
    no length and starts inside it. The runs an invoice of the window bills."""
    first, last = _seconds(run_start), _seconds(run_end)
    lo, hi = _seconds(start), _seconds(end)
    if last <= first:
        return lo <= first < hi
    return max(first, lo) < min(last, hi)


def run_windows(
    run_start: dt.datetime,
    run_end: dt.datetime,
    start: dt.datetime,
    end: dt.datetime,
    period: Period | None = None,
) -> list[tuple[dt.datetime, dt.datetime]]:
    """The windows, in order, in which the run [run_start, run_end) counts within the range
    [start, end) (UTC): with `period`, the days, weeks or months it crosses (`period_window`),
    each clipped to the range; without, the range itself. Only windows it has a part in
    (`in_window`). A report of the range (`gryvia usage`, `--group-by day`) splits each of
    the run's amounts over them with `split_in_window`, so they add up to the range's part."""
    if period is None:
        return [(start, end)] if in_window(run_start, run_end, start, end) else []
    out: list[tuple[dt.datetime, dt.datetime]] = []
    lo, hi = period_window(period, max(run_start, start))
    while lo < end:
        window = (max(lo, start), min(hi, end))
        if in_window(run_start, run_end, *window):
            out.append(window)
        if hi >= run_end:
            break
        lo, hi = period_window(period, hi)
    return out


def split_in_window(
    quantity: Decimal,
    run_start: dt.datetime,
    run_end: dt.datetime,
    start: dt.datetime,
    end: dt.datetime,
) -> Decimal:
    """The part of `quantity` (GPU-hours or cost of the run [run_start, run_end), e.g. the
    ledger's 6-place `cost`) inside the window [start, end), as a Decimal with 6 places.

    The rule of `share_in_window` in Decimal: times are cut to whole seconds in UTC (what the
    ledger stores); the part before an instant t is `quantity x seconds of the run before t /
    seconds of the run`, rounded half-up to 6 places, and a window gets the part before its
    end minus the part before its start. So the windows of one run (the months, days or weeks
    it crosses) add up exactly to `quantity`. A run of no length counts wholly in the window
    holding its start. Datetimes must be aware (a naive one raises TypeError).
    """
    first, last = _seconds(run_start), _seconds(run_end)
    lo, hi = _seconds(start), _seconds(end)
    if last <= first:
        return quantity.quantize(PLACES, ROUND_HALF_UP) if lo <= first < hi else _NONE

    def before(when: int) -> Decimal:
        ran = min(max(when, first), last) - first
        return (quantity * ran / (last - first)).quantize(PLACES, ROUND_HALF_UP)

    return before(hi) - before(lo) if hi > lo else _NONE


def _seconds(when: dt.datetime) -> int:
    """Whole seconds since the epoch, cut down (an RFC3339 time to the second, as written)."""
    return (when - _EPOCH) // _SECOND
