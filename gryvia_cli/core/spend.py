"""What jobs have spent: one job's cost so far, spend per day of the month, the top jobs (pure).

Metered cost comes from GryviaUsageRecords; a job without records yet is priced with
`core.estimate`'s catalog rate times the hours it has run. Month windows are UTC
(`api.periods.period_window`), and a run crossing a day or the 1st counts for its part inside
(`api.periods.record_share`), so the days of a month add up to the month's spend.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gryvia_cli.core.estimate import estimate_cost
from gryvia_cli.core.jobs import JobSummary, durations
from gryvia_operator.api.periods import period_window, record_share

if TYPE_CHECKING:  # only annotations: building the models is left to whoever validates them
    from gryvia_operator.api import GryviaGpuSku, GryviaQuota, GryviaTenant, GryviaUsageRecord


@dataclass(frozen=True)
class JobCost:
    """Cost so far (metered, or estimated from the catalog rate), the hourly burn and a
    whole-run estimate (None while open-ended: no timeout and not finished); amounts in
    `currency`."""

    so_far: float
    per_hour: float
    estimate: float | None
    currency: str
    metered: bool


def job_cost(
    job: JobSummary,
    uid: str,
    records: Iterable[GryviaUsageRecord],
    skus: Iterable[GryviaGpuSku],
    tenants: Iterable[GryviaTenant],
    quotas: Iterable[GryviaQuota],
    now: dt.datetime,
) -> JobCost:
    """Metered cost from the job's usage records (by UID, else namespace and name), else
    `core.estimate`'s rate x hours run; the estimate is the finished run, or the timeout's
    cost from `core.estimate.estimate_cost`. The hourly burn of a job whose newest record
    bills time-sliced units as fewer physical GPUs (`physicalGPUs`) is scaled to them."""
    mine = [
        r
        for r in records
        if (uid and r.spec.job_uid == uid)
        or (r.namespace == job.namespace and r.spec.job == job.name)
    ]
    est = estimate_cost(job, job.namespace, skus, tenants, quotas)
    per_hour = (est.per_hour or 0.0) if est else 0.0
    currency = est.rate.currency if est and est.rate else (mine[0].spec.currency if mine else "USD")
    latest = max(mine, key=lambda r: r.spec.start) if mine else None
    if latest is not None and latest.spec.physical_gpus is not None and latest.spec.gpus > 0:
        # Time-sliced units are billed as the physical GPUs they stand for
        # (docs/gpu-sharing.md): the burn is the catalog rate x physical GPUs.
        per_hour *= latest.spec.physical_gpus / latest.spec.gpus
    ran = durations(job, now)["running"] or 0.0
    so_far = sum(r.spec.cost for r in mine) if mine else per_hour * ran / 3600
    estimate = so_far if job.terminal else (est.for_timeout if est else None)
    return JobCost(so_far, per_hour, estimate, currency, bool(mine))


def daily_spend(records: Sequence[GryviaUsageRecord], now: dt.datetime) -> list[float]:
    """Cost per UTC day from the 1st of the month holding `now` to today (one float per day,
    the 1st first), each run split over the days it ran."""
    start, _ = period_window("month", now)
    days = (now.astimezone(dt.UTC).date() - start.date()).days + 1
    out = [0.0] * days
    for rec in records:
        for i in range(days):
            day = start + dt.timedelta(days=i)
            share = record_share(rec, day, day + dt.timedelta(days=1))
            if share:
                out[i] += rec.spec.cost * share
    return out


@dataclass(frozen=True)
class JobSpend:
    """Metered usage of one job in the month: GPU hours and cost (in `currency`), the tenant
    its records were billed to, and whether a run is still open."""

    namespace: str
    job: str
    tenant: str
    gpu_type: str
    gpu_hours: float
    cost: float
    currency: str
    open: bool


def top_jobs(records: Sequence[GryviaUsageRecord], now: dt.datetime, n: int = 10) -> list[JobSpend]:
    """The `n` jobs with the highest metered cost in the month of `now` (runs crossing the
    1st counted for their part in the month), highest first, ties by namespace and name."""
    start, end = period_window("month", now)
    acc: dict[tuple[str, str], list[tuple[GryviaUsageRecord, float]]] = defaultdict(list)
    for rec in records:
        share = record_share(rec, start, end)
        if share > 0:
            acc[(rec.namespace, rec.spec.job)].append((rec, share))
    out = [
        JobSpend(
            ns,
            job,
            recs[0][0].spec.tenant,
            recs[0][0].spec.gpu_type or "-",
            sum(r.spec.gpu_hours * share for r, share in recs),
            sum(r.spec.cost * share for r, share in recs),
            recs[0][0].spec.currency,
            any(not r.spec.final for r, _ in recs),
        )
        for (ns, job), recs in acc.items()
    ]
    out.sort(key=lambda s: (-s.cost, s.namespace, s.job))
    return out[:n]


def cost_text(cost: JobCost) -> str:
    """A job's cost so far for tables: `12.00 USD` when metered, `~12.00 USD` when estimated
    from the catalog rate and the hours run, `-` without records or a price."""
    if not cost.metered and not cost.per_hour:
        return "-"
    return f"{'' if cost.metered else '~'}{cost.so_far:.2f} {cost.currency}"
