"""Usage reports and invoice estimates from GryviaUsageRecords (pure, shared by CLI and TUI).

Rules: usage belongs to the record's `spec.tenant` (the operator writes it by the one tenant
rule, `gryvia_operator.api.attribution`), and reports show it under that name; only an
existing GryviaTenant is invoiced (`attribution.billable`): the usage of another name (a job
in a plain namespace such as `research` or `default`, a deleted tenant) is reported under it
with `billable: false` and never invoiced (`unbilled_usage` says how much). Usage
reports (`aggregate`) count each record for the part of its run in [from, to) (UTC), and by
day for its part in each day, by the one period rule (`api.periods`, as invoices, `gryvia
cost`, quotas and budgets); amounts round to 2 places, hours to 4; jobs count distinct
(namespace, job) pairs. Invoices are estimates, never tax invoices, numbered
`INV-<tenant>-<YYYYMM>`, one per existing tenant with usage in the UTC month, one line per SKU
(`unpriced` without a price, `sku_key`) and catalog rate, with its GPU-hours, that rate (as
metered, never recomputed from rounded totals) and amount; `open` while any record is not
final. Invoices follow the money rules of the finalized invoice (`api.invoicing`), so that a
closed month's estimate equals it to the cent: each record counts for the part of its run in
the month (`api.periods.split_in_window` on its cost as the ledger writes it: a run crossing
the month's end is split at it, as `gryvia cost`, quotas and budgets count it), the subtotal
is that metered cost rounded once to the cent, and the lines are rounded to sum to it
(`api.invoice.line_amounts`, largest remainder). Unpriced runs (`core.unpriced`) are in no
amount: their GPU-hours are counted and said (`unpricedGpuHours`), an invoice gives them
lines of SKU `unpriced` with no rate and no amount.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gryvia_cli.core.csvexport import to_csv
from gryvia_cli.core.gpuuse import idle_cost, usage_fields
from gryvia_cli.core.unpriced import UNPRICED, only_unpriced
from gryvia_operator.api import GryviaUsageRecord
from gryvia_operator.api.attribution import billable
from gryvia_operator.api.invoice import line_amount, line_amounts
from gryvia_operator.api.ledger import amount
from gryvia_operator.api.periods import (
    MeteredRun,
    in_window,
    month_bounds,
    run_windows,
    split_in_window,
)
from gryvia_operator.api.usagerecord import is_unpriced

_LABEL_KEY = re.compile(
    r"(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
)
"""A Kubernetes label key: an optional DNS-subdomain prefix and `/`, then a name of up to 63
characters (Kubernetes' "Labels and Selectors", syntax and character set)."""
GroupBy = str
"""What one usage row totals: one of GROUPS, or `label:KEY` (the jobs' label KEY)."""
GROUPS = ("tenant", "sku", "day", "job", "user", "project")
"""The fixed groupings of `gryvia usage --group-by`; `label:KEY` is the open one."""
NO_VALUE = "-"
"""The row of records that carry no user, project or label value (metered before records
carried them, or a job without the label)."""


def parse_group_by(text: str, option: str = "--group-by") -> GroupBy:
    """`text` as a grouping: one of GROUPS, or `label:KEY` with KEY a Kubernetes label key
    (`label:gryvia.io/team`, `label:team`). Raises ValueError naming `option`, the value and
    the choices."""
    value = text.strip()
    if value in GROUPS:
        return value
    key = value.removeprefix("label:")
    if value.startswith("label:") and _LABEL_KEY.fullmatch(key):
        return value
    raise ValueError(
        f"{option} {text!r}: use one of {', '.join(GROUPS)}, or label:KEY with KEY a label "
        "key (e.g. label:gryvia.io/team)"
    )


def group_field(group_by: GroupBy) -> str:
    """The JSON field and CSV column naming a row's group: the grouping itself, or `label`
    for `label:KEY`."""
    return "label" if group_by.startswith("label:") else group_by


EVER = (dt.datetime(1, 1, 1, tzinfo=dt.UTC), dt.datetime(9999, 1, 1, tzinfo=dt.UTC))
"""The range of a report with no `--from` or `--to`."""


@dataclass(frozen=True)
class UsageRow:
    """Totals of one group: GPU-hours, cost (in `currency`, or MIXED) and distinct jobs;
    `unpriced_gpu_hours` of the GPU-hours had no price (in no cost), on `unpriced_gpu_types`."""

    key: str
    gpu_hours: float
    cost: float
    currency: str
    jobs: int
    unpriced_gpu_hours: float = 0.0
    unpriced_gpu_types: tuple[str, ...] = ()
    active_gpu_hours: float | None = None
    """Active GPU-hours of its sealed, sampled runs (`spec.activeGPUHours`); None: none."""
    idle_cost: Decimal | None = None
    """What the idle part of those runs cost: (GPU-hours - active) x rate, in `currency`."""
    billable: bool = True
    """False for a tenant row whose name is no existing GryviaTenant (never invoiced)."""

    def as_dict(self, group_by: str) -> dict[str, Any]:
        """Return the row as a JSON object (`group_by` names the key field); with unpriced
        usage also `unpricedGpuHours`, and `cost` null when none of it is priced."""
        none = only_unpriced(self.gpu_hours, self.unpriced_gpu_hours)
        out: dict[str, Any] = {
            group_by: self.key,
            "gpuHours": round(self.gpu_hours, 4),
            "cost": None if none else round(self.cost, 4),
            "currency": self.currency,
            "jobs": self.jobs,
        }
        out.update(usage_fields(self.unpriced_gpu_hours, self.active_gpu_hours, self.idle_cost))
        if not self.billable:
            out["billable"] = False
        return out


def sku_key(record: GryviaUsageRecord) -> str:
    """The SKU a record is reported and invoiced under: `unpriced` without a price
    (`api.usagerecord.is_unpriced`), else its SKU (its GPU type when it names none, `-` when
    it names neither: a CPU-only run, which has nothing to price)."""
    if is_unpriced(record.spec):
        return UNPRICED
    return record.spec.sku or record.spec.gpu_type or "-"


def _key(record: GryviaUsageRecord, group_by: GroupBy) -> str:
    """The row of a record grouped by tenant, SKU, job (`namespace/job`), user (the
    submitter), project or a label of the job (days are its windows' dates); NO_VALUE for a
    record that carries no such value."""
    spec = record.spec
    if group_by == "tenant":
        return spec.tenant
    if group_by == "sku":
        return sku_key(record)
    if group_by == "user":
        return spec.user or NO_VALUE
    if group_by == "project":
        return spec.project or NO_VALUE
    if group_by.startswith("label:"):
        return (spec.job_labels or {}).get(group_by.removeprefix("label:")) or NO_VALUE
    return f"{record.namespace}/{spec.job}"


def aggregate(
    records: Iterable[GryviaUsageRecord],
    group_by: GroupBy,
    start: dt.datetime | None = None,
    end: dt.datetime | None = None,
    tenant: str | None = None,
    tenants: Collection[str] | None = None,
) -> tuple[list[UsageRow], UsageRow]:
    """Group records in [start, end) (UTC; None: unbounded) and return (rows, total). Each
    record counts for the part of its run in the range, and grouped by day for its part in
    each UTC day (`api.periods.run_windows`): its GPU-hours, cost, active GPU-hours and idle
    cost split in Decimal by `api.periods.split_in_window`, as invoices split them. Tenant,
    SKU and job (`namespace/job`) rows are sorted by cost, highest first; day rows by date.
    Jobs count distinct (namespace, job) pairs with a part in the row. `tenants` are the
    existing tenants' names (None: unknown); a tenant row of any other name has `billable`
    False, and `tenant` filters on the record's tenant. Unpriced records count in
    `unpriced_gpu_hours`; sealed, sampled records in their active GPU-hours and idle cost
    (`idle_cost`)."""
    hours: dict[str, Decimal] = defaultdict(Decimal)
    unpriced: dict[str, Decimal] = defaultdict(Decimal)
    types: dict[str, set[str]] = defaultdict(set)
    cost: dict[str, Decimal] = defaultdict(Decimal)
    currencies: dict[str, set[str]] = defaultdict(set)
    jobs: dict[str, set[tuple[str, str]]] = defaultdict(set)
    active: dict[str, Decimal] = {}
    idle: dict[str, Decimal] = {}
    lo, hi = start or EVER[0], end or EVER[1]
    for rec in records:
        run = MeteredRun.of_record(rec).interval()
        whole = run_windows(*run, lo, hi)
        if not whole or (tenant and rec.spec.tenant != tenant):
            continue
        if group_by == "day":
            parts = [(w[0].date().isoformat(), w) for w in run_windows(*run, lo, hi, "day")]
        else:
            parts = [(_key(rec, group_by), whole[0])]
        no_price = is_unpriced(rec.spec)
        wasted = idle_cost(rec)
        metered = Decimal(amount(rec.spec.gpu_hours)), Decimal(amount(rec.spec.cost))
        used = Decimal(amount(rec.spec.active_gpu_hours or 0))
        for key, window in (*parts, ("\0total", whole[0])):
            part_hours, part_cost = (split_in_window(q, *run, *window) for q in metered)
            if wasted is not None:
                active[key] = active.get(key, Decimal(0)) + split_in_window(used, *run, *window)
                idle[key] = idle.get(key, Decimal(0)) + split_in_window(wasted, *run, *window)
            hours[key] += part_hours
            if no_price:
                unpriced[key] += part_hours
                types[key].add(rec.spec.gpu_type or "")
            cost[key] += part_cost
            currencies[key].add(rec.spec.currency)
            jobs[key].add((rec.namespace, rec.spec.job))

    def row(key: str) -> UsageRow:
        cur = currencies[key]
        return UsageRow(
            key,
            float(hours[key]),
            float(cost[key]),
            next(iter(cur)) if len(cur) == 1 else ("MIXED" if cur else "USD"),
            len(jobs[key]),
            float(unpriced[key]),
            tuple(sorted(types[key])),
            None if key not in active else float(active[key]),
            idle.get(key),
            group_by != "tenant" or key == "\0total" or billable(key, tenants),
        )

    keys = [k for k in hours if k != "\0total"]
    rows = [row(k) for k in keys]
    rows.sort(key=(lambda r: r.key) if group_by == "day" else (lambda r: (-r.cost, r.key)))
    total = row("\0total")
    return rows, dataclasses.replace(total, key="total")


def window_part(
    record: GryviaUsageRecord, start: dt.datetime, end: dt.datetime
) -> tuple[Decimal, Decimal] | None:
    """(GPU-hours, cost) of a record inside [start, end) as an invoice bills them (6-place
    Decimals: the record's amounts as the ledger writes them, `api.ledger.amount`, split by
    `api.periods.split_in_window`; an open record up to its last refresh), or None when its
    run has no part in the window."""
    run = MeteredRun.of_record(record).interval()
    if not in_window(*run, start, end):
        return None
    hours = split_in_window(Decimal(amount(record.spec.gpu_hours)), *run, start, end)
    return hours, split_in_window(Decimal(amount(record.spec.cost)), *run, start, end)


def unbilled_usage(
    records: Iterable[GryviaUsageRecord],
    tenants: Collection[str] | None,
    start: dt.datetime,
    end: dt.datetime,
) -> list[UsageRow]:
    """The usage in [start, end) of each name that is no existing GryviaTenant (one row per
    name, `billable` False, highest cost first; each record for its part in the window, as
    `invoices` would bill it), or [] when there is none or the tenants are unknown
    (`tenants` None)."""
    if tenants is None:
        return []
    stray = [rec for rec in records if not billable(rec.spec.tenant, tenants)]
    rows, _ = aggregate(stray, "tenant", start, end, tenants=tenants)
    return rows


def invoices(
    records: Iterable[GryviaUsageRecord],
    month: str,
    *,
    tenant: str | None = None,
    now: dt.datetime,
    tenants: Collection[str] | None = None,
) -> list[dict[str, Any]]:
    """Return the estimate invoices of `month` (`YYYY-MM`), one per tenant, sorted by tenant.

    `tenants` are the existing tenants' names (None: unknown, every record's tenant is
    billed); usage of a name that is no existing tenant is never invoiced (see
    `unbilled_usage`). Each record counts for its part in the month (`window_part`).
    Each line is one SKU at one metered rate; line amounts and the subtotal are floats to the
    cent computed in Decimal: the subtotal is the month's metered cost rounded once, half-up,
    and the lines sum to it (`api.invoice.line_amounts`), as in a finalized invoice. Unpriced
    runs make lines of SKU `unpriced` per GPU type with `rate` and `amount` None and
    `unpricedGpuHours`; an invoice with any has `unpricedGpuHours` too, and its `subtotal`
    is None when no line is priced. Raises ValueError for a month not written `YYYY-MM`."""
    start, end = month_bounds(month)
    by_tenant: dict[str, list[tuple[GryviaUsageRecord, Decimal, Decimal]]] = defaultdict(list)
    for rec in records:
        billed = rec.spec.tenant
        if not billable(billed, tenants):
            continue
        part = window_part(rec, start, end)
        if part is not None and (tenant is None or billed == tenant):
            by_tenant[billed].append((rec, *part))
    out = []
    for name in sorted(by_tenant):
        recs = [rec for rec, _, _ in by_tenant[name]]
        lines: dict[tuple[str, str, float], dict[str, Any]] = {}
        for rec, part_hours, part_cost in by_tenant[name]:
            sku = sku_key(rec)
            line = lines.setdefault(
                (sku, rec.spec.gpu_type or "", rec.spec.rate),
                {
                    "sku": sku,
                    "gpuType": rec.spec.gpu_type or "",
                    "rate": rec.spec.rate,
                    "gpuHours": Decimal(0),
                    "amount": Decimal(0),
                    "jobs": set(),
                    "unpriced": is_unpriced(rec.spec),
                },
            )
            line["gpuHours"] += part_hours
            line["amount"] += part_cost
            line["jobs"].add((rec.namespace, rec.spec.job))
        ordered = sorted(lines.values(), key=lambda ln: (-ln["amount"], ln["sku"], ln["rate"]))
        metered = [line["amount"] for line in ordered]
        rendered = [
            _line_item(line, cents)
            for line, cents in zip(ordered, line_amounts(metered), strict=True)
        ]
        unpriced = sum((ln["gpuHours"] for ln in ordered if ln["unpriced"]), Decimal(0))
        priced = any(not ln["unpriced"] for ln in ordered)
        currencies = {r.spec.currency for r in recs}
        out.append(
            {
                "number": f"INV-{name}-{start:%Y%m}",
                "tenant": name,
                "period": {
                    "from": start.date().isoformat(),
                    "to": (end - dt.timedelta(days=1)).date().isoformat(),
                },
                "currency": currencies.pop() if len(currencies) == 1 else "MIXED",
                "status": "estimate",
                "generatedAt": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "lines": rendered,
                "subtotal": float(line_amount(sum(metered, Decimal(0)))) if priced else None,
                "jobs": len({(r.namespace, r.spec.job) for r in recs}),
                "open": any(not r.spec.final for r in recs),
                "note": "Estimate from metered usage and catalog prices; not a tax invoice.",
            }
            | ({"unpricedGpuHours": round(float(unpriced), 4)} if unpriced else {})
        )
    return out


def _line_item(line: dict[str, Any], cents: Decimal) -> dict[str, Any]:
    """The JSON line of an estimate invoice; an unpriced one has no rate and no amount."""
    hours = round(float(line["gpuHours"]), 4)
    item = {
        "sku": line["sku"],
        "gpuType": line["gpuType"],
        "gpuHours": hours,
        "rate": None if line["unpriced"] else line["rate"],
        "amount": None if line["unpriced"] else float(cents),
        "jobs": len(line["jobs"]),
    }
    return item | ({"unpricedGpuHours": hours} if line["unpriced"] else {})


def parse_when(text: str, *, option: str, end: bool = False) -> dt.datetime:
    """Parse a `--from`/`--to` value: `YYYY-MM-DD` (midnight UTC; with `end`, the next
    midnight, so that the whole day is covered) or RFC 3339 (`2026-11-03T10:00:00Z`; no offset
    means UTC). Raises ValueError naming the option and both forms."""
    raw = text.strip()
    try:
        if len(raw) == 10:
            day = dt.datetime.strptime(raw, "%Y-%m-%d").replace(tzinfo=dt.UTC)
            return day + dt.timedelta(days=1) if end else day
        when = dt.datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"{option} {text!r}: use YYYY-MM-DD or RFC 3339, e.g. 2026-11-03 or "
            "2026-11-03T10:00:00Z"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def usage_csv(rows: Sequence[UsageRow], total: UsageRow, group_by: GroupBy) -> str:
    """CSV of a usage report: header `<group>,gpu_hours,cost,currency,jobs` (then
    `active_gpu_hours,idle_cost` when some run was sampled, empty cells for a row without
    one), one line per row and a final `total` line; the cost of a row of only unpriced usage
    is `unpriced`; cells guarded against formula injection."""
    use = ("active_gpu_hours", "idle_cost") if total.active_gpu_hours is not None else ()
    body = [
        (r.key, round(r.gpu_hours, 4), _csv_cost(r), r.currency, r.jobs, *_csv_use(r, use))
        for r in (*rows, total)
    ]
    return to_csv((group_field(group_by), "gpu_hours", "cost", "currency", "jobs", *use), body)


def _csv_use(row: UsageRow, use: tuple[str, ...]) -> tuple[object, ...]:
    if not use:
        return ()
    active, idle = row.active_gpu_hours, row.idle_cost
    return ("" if active is None else round(active, 4), "" if idle is None else round(idle, 4))


def _csv_cost(row: UsageRow) -> object:
    return UNPRICED if only_unpriced(row.gpu_hours, row.unpriced_gpu_hours) else round(row.cost, 4)
