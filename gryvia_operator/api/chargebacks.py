"""Chargeback rules: which cost center a run's cost goes to, the shared costs of a month,
and their split over the lines to the cent. Pure: the operator writes a closed month's report
with `allocate`, and `gryvia chargeback show|export` computes the same report and its
per-record rows.

The month's metered cost is each usage record's cost for the part of its run inside the
month (`api.periods.split_in_window`, as invoices bill it). Shared costs: a reservation's idle
GPU-hours are its allocated GPUs x the hours it held them in the month, less the GPU-hours of
the runs that opted in (`spec.reservation` of their usage records), priced at the catalog
rate of its GPU type (`api.pricing.select_rate`); the platform share is
`platformSharePercent` % of the metered cost. Each is rounded once to the cent and split over
the lines in proportion to their metered cost by the largest-remainder method (the rule of
`api.invoice.line_amounts`), so the shares add up to the whole exactly.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from typing import Any

from gryvia_operator.api.chargeback import ChargebackLine, ChargebackMonth, GryviaChargebackSpec
from gryvia_operator.api.gpusku import GryviaGpuSku
from gryvia_operator.api.invoice import CENT, line_amount, line_amounts
from gryvia_operator.api.periods import MeteredRun, in_window, month_bounds, split_in_window
from gryvia_operator.api.reservation import GryviaReservation

SIX = Decimal("0.000001")


@dataclass(frozen=True)
class RecordPart:
    """One usage record's part in the month: the row `gryvia chargeback export` writes."""

    record: str
    job: str
    tenant: str
    project: str
    cost_center: str
    gpu_hours: Decimal
    cost: Decimal
    """6 places, the record's currency."""
    currency: str
    sealed: bool
    reservation: str
    unpriced: bool


def cost_center(spec: GryviaChargebackSpec, tenant: str, project: str) -> str:
    """The cost center of a run of `tenant` with `project` ("" when none) under `spec`."""
    if spec.allocate_by == "tenant":
        return tenant or spec.default_cost_center
    if spec.allocate_by == "project":
        return project or spec.default_cost_center
    for rule in spec.mapping or []:
        tenants_ok = rule.tenants is None or tenant in rule.tenants
        projects_ok = rule.projects is None or project in rule.projects
        if tenants_ok and projects_ok and (rule.tenants or rule.projects):
            return rule.cost_center
    return spec.default_cost_center


def record_parts(
    spec: GryviaChargebackSpec, month: str, records: Iterable[Mapping[str, Any]]
) -> list[RecordPart]:
    """The part in `month` (UTC, `YYYY-MM`) of every raw GryviaUsageRecord that has one, by
    record name. Raises ValueError for a month not written `YYYY-MM`."""
    start, end = month_bounds(month)
    parts = []
    for obj in records:
        run = MeteredRun.of_raw(obj)
        if run is None:
            continue
        run_start, run_end = run.interval()
        if not in_window(run_start, run_end, start, end):
            continue
        s = obj.get("spec") or {}
        tenant, project = str(s.get("tenant") or ""), str(s.get("project") or "")
        parts.append(
            RecordPart(
                record=str((obj.get("metadata") or {}).get("name") or ""),
                job=str(s.get("job") or ""),
                tenant=tenant,
                project=project,
                cost_center=cost_center(spec, tenant, project),
                gpu_hours=split_in_window(
                    Decimal(repr(run.gpu_hours)), run_start, run_end, start, end
                ),
                cost=split_in_window(Decimal(repr(run.cost)), run_start, run_end, start, end),
                currency=str(s.get("currency") or "USD"),
                sealed=bool(s.get("final")),
                reservation=str(s.get("reservation") or ""),
                unpriced=bool(s.get("unpriced")),
            )
        )
    return sorted(parts, key=lambda p: p.record)


def digest(parts: Sequence[RecordPart]) -> str:
    """SHA-256 (hex) over `name cost` lines of the parts in name order: the report's
    `recordsDigest`, so an export recomputed later can show it used the same records."""
    text = "".join(f"{p.record} {p.cost}\n" for p in sorted(parts, key=lambda p: p.record))
    return hashlib.sha256(text.encode()).hexdigest()


def distribute(total: Decimal, weights: Sequence[Decimal]) -> list[Decimal]:
    """`total` (whole cents) split over `weights` (>= 0) in proportion, to the cent, summing
    to `total` exactly: each share rounded down, the cents left going one each to the largest
    remainders (ties: the earlier). All weights 0: evenly by the same rule. Raises ValueError
    for an empty `weights` with a non-zero total."""
    if not weights:
        if total:
            raise ValueError("nothing to distribute a non-zero total over")
        return []
    whole = sum(weights, Decimal(0))
    use = list(weights) if whole else [Decimal(1)] * len(weights)
    whole = whole or Decimal(len(weights))
    raw = [total * w / whole for w in use]
    shares = [r.quantize(CENT, ROUND_FLOOR) for r in raw]
    left = int(((total - sum(shares, Decimal(0))) / CENT).to_integral_value())
    order = sorted(range(len(raw)), key=lambda i: (-(raw[i] - shares[i]), i))
    for i in order[:left]:
        shares[i] += CENT
    return shares


def reservation_idle(
    reservations: Iterable[GryviaReservation],
    parts: Sequence[RecordPart],
    skus: Sequence[GryviaGpuSku],
    month: str,
    now: dt.datetime,
) -> tuple[Decimal, Decimal]:
    """(idle GPU-hours, their cost) of the reservations in `month`: GPUs held x the hours
    held inside the month (actualStartTime to actualEndTime, or to `now` while still held),
    less the GPU-hours of the runs that used them, never below 0. GPUs held: allocatedGPUs
    while held, else (released: the status says 0) spec.resources.gpuCount; a reservation
    of exact nodes that has released them is not counted. A reservation of a type no SKU
    prices adds hours, no cost."""
    from gryvia_operator.api.pricing import select_rate

    start, end = month_bounds(month)
    used: dict[str, Decimal] = {}
    for part in parts:
        if part.reservation:
            used[part.reservation] = used.get(part.reservation, Decimal(0)) + part.gpu_hours
    hours_total = cost_total = Decimal(0)
    for res in reservations:
        status = res.status
        gpus = (status.allocated_gpus if status else 0) or res.spec.resources.gpu_count or 0
        if status is None or not gpus or status.actual_start_time is None:
            continue
        held_from = max(status.actual_start_time, start)
        held_to = min(status.actual_end_time or now, end)
        if held_to <= held_from:
            continue
        seconds = Decimal(int((held_to - held_from).total_seconds()))
        held = Decimal(gpus) * seconds / Decimal(3600)
        idle = max(held - used.get(res.metadata.name or "", Decimal(0)), Decimal(0))
        idle = idle.quantize(SIX)
        rate = select_rate(res.spec.resources.gpu_type, skus)
        hours_total += idle
        if rate is not None:
            cost_total += idle * Decimal(repr(rate.per_gpu_hour))
    return hours_total, cost_total


def allocate(
    spec: GryviaChargebackSpec,
    month: str,
    records: Iterable[Mapping[str, Any]],
    reservations: Iterable[GryviaReservation],
    skus: Sequence[GryviaGpuSku],
    *,
    now: dt.datetime,
) -> ChargebackMonth:
    """The report of `month`: one line per (cost center, tenant) in name order, each with its
    metered cost to the cent (the lines sum to the month's metered cost rounded once), its
    shares of the reservations' idle cost and of the platform share (each pool rounded once,
    split by `distribute`), and its total. Runs in another currency than the month's (the
    first record's) are left out of the lines. Raises ValueError for a bad month."""
    parts = record_parts(spec, month, records)
    currency = parts[0].currency if parts else "USD"
    same = [p for p in parts if p.currency == currency]
    groups: dict[tuple[str, str], list[RecordPart]] = {}
    for part in same:
        groups.setdefault((part.cost_center, part.tenant), []).append(part)
    keys = sorted(groups)
    costs = [sum((p.cost for p in groups[k]), Decimal(0)) for k in keys]
    metered = line_amounts(costs)
    idle_hours, idle_cost = (
        reservation_idle(reservations, same, skus, month, now)
        if spec.reservation_idle
        else (Decimal(0), Decimal(0))
    )
    idle_total = line_amount(idle_cost)
    platform_total = line_amount(
        sum(costs, Decimal(0)) * Decimal(spec.platform_share_percent) / 100
    )
    if not keys and (idle_total or platform_total):  # nobody ran: the default center pays
        keys, costs, metered = [(spec.default_cost_center, "")], [Decimal(0)], [Decimal("0.00")]
        groups[keys[0]] = []
    idle = distribute(idle_total, costs)
    platform = distribute(platform_total, costs)
    lines = [
        ChargebackLine(
            cost_center=cc,
            tenant=tenant,
            metered=str(m),
            reservation_idle=str(i),
            platform=str(p),
            total=str(m + i + p),
            usage_records=len(groups[(cc, tenant)]),
        )
        for (cc, tenant), m, i, p in zip(keys, metered, idle, platform, strict=True)
    ]
    metered_sum = sum(metered, Decimal("0.00"))
    unpriced = sum((p.gpu_hours for p in same if p.unpriced), Decimal(0))
    return ChargebackMonth(
        month=month,
        currency=currency,
        metered=str(metered_sum),
        reservation_idle=str(idle_total),
        reservation_idle_gpu_hours=str(idle_hours.quantize(SIX)),
        platform=str(platform_total),
        shared=str(idle_total + platform_total),
        total=str(metered_sum + idle_total + platform_total),
        lines=lines,
        usage_records=len(same),
        records_digest=digest(same),
        unpriced_gpu_hours=str(unpriced.quantize(SIX)),
        written_at=now.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def closed_months(spec: GryviaChargebackSpec, created: dt.datetime, now: dt.datetime) -> list[str]:
    """The months from `spec.startMonth` (else the month of `created`) that are closed at
    `now`: ended at least `closeAfterMinutes` ago; oldest first, at most the last keepMonths."""
    first = spec.start_month or created.astimezone(dt.UTC).strftime("%Y-%m")
    cutoff = now - dt.timedelta(minutes=spec.close_after_minutes)
    out: list[str] = []
    month = first
    while True:
        _, end = month_bounds(month)
        if end > cutoff:
            break
        out.append(month)
        month = end.strftime("%Y-%m")
    return out[-spec.keep_months :]


def next_close(spec: GryviaChargebackSpec, now: dt.datetime) -> dt.datetime:
    """When the month holding `now - closeAfterMinutes` closes."""
    shifted = now - dt.timedelta(minutes=spec.close_after_minutes)
    _, end = month_bounds(shifted.astimezone(dt.UTC).strftime("%Y-%m"))
    return end + dt.timedelta(minutes=spec.close_after_minutes)
