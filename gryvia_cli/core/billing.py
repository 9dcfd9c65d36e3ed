"""Usage reports and invoice estimates from GryviaUsageRecords (pure, shared by CLI and TUI).

Rules: usage belongs to the record's `spec.tenant` (the operator writes it by the one tenant
rule, `gryvia_operator.api.attribution`). Records are selected by `spec.start` in [from, to)
(UTC), a run counted whole in the period it started in; amounts round to 2 places, hours to
4; jobs count distinct (namespace, job) pairs. Invoices are estimates, never tax invoices,
numbered `INV-<tenant>-<YYYYMM>`, one per tenant with usage in the UTC month, one line per
SKU (the GPU type when no SKU, else `unpriced`) with its GPU-hours, average rate and amount;
`open` while any record is not final.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gryvia_operator.api import GryviaUsageRecord
from gryvia_operator.api.periods import month_bounds

GroupBy = Literal["tenant", "sku", "day"]
_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class UsageRow:
    """Totals of one group: GPU-hours, cost (in `currency`, or MIXED) and distinct jobs."""

    key: str
    gpu_hours: float
    cost: float
    currency: str
    jobs: int

    def as_dict(self, group_by: str) -> dict[str, Any]:
        """Return the row as a JSON object (`group_by` names the key field)."""
        return {
            group_by: self.key,
            "gpuHours": round(self.gpu_hours, 4),
            "cost": round(self.cost, 4),
            "currency": self.currency,
            "jobs": self.jobs,
        }


def in_period(
    record: GryviaUsageRecord, start: dt.datetime | None, end: dt.datetime | None
) -> bool:
    """True when the record's `spec.start` lies in [start, end)."""
    when = record.spec.start
    return (start is None or when >= start) and (end is None or when < end)


def _key(record: GryviaUsageRecord, group_by: GroupBy) -> str:
    if group_by == "tenant":
        return record.spec.tenant
    if group_by == "sku":
        return record.spec.sku or record.spec.gpu_type or "unpriced"
    return record.spec.start.astimezone(dt.UTC).date().isoformat()


def aggregate(
    records: Iterable[GryviaUsageRecord],
    group_by: GroupBy,
    start: dt.datetime | None = None,
    end: dt.datetime | None = None,
    tenant: str | None = None,
) -> tuple[list[UsageRow], UsageRow]:
    """Group records and return (rows, total). Tenant and SKU rows are sorted by cost, highest
    first; day rows by date. Jobs count distinct (namespace, job) pairs."""
    hours: dict[str, float] = defaultdict(float)
    cost: dict[str, float] = defaultdict(float)
    currencies: dict[str, set[str]] = defaultdict(set)
    jobs: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for rec in records:
        if not in_period(rec, start, end) or (tenant and rec.spec.tenant != tenant):
            continue
        for key in (_key(rec, group_by), "\0total"):
            hours[key] += rec.spec.gpu_hours
            cost[key] += rec.spec.cost
            currencies[key].add(rec.spec.currency)
            jobs[key].add((rec.namespace, rec.spec.job))

    def row(key: str) -> UsageRow:
        cur = currencies[key]
        return UsageRow(
            key,
            hours[key],
            cost[key],
            next(iter(cur)) if len(cur) == 1 else ("MIXED" if cur else "USD"),
            len(jobs[key]),
        )

    keys = [k for k in hours if k != "\0total"]
    rows = [row(k) for k in keys]
    rows.sort(key=(lambda r: r.key) if group_by == "day" else (lambda r: (-r.cost, r.key)))
    total = row("\0total")
    return rows, UsageRow("total", total.gpu_hours, total.cost, total.currency, total.jobs)


def invoices(
    records: Iterable[GryviaUsageRecord], month: str, *, tenant: str | None = None, now: dt.datetime
) -> list[dict[str, Any]]:
    """Return the estimate invoices of `month` (`YYYY-MM`), one per tenant, sorted by tenant."""
    start, end = month_bounds(month)
    by_tenant: dict[str, list[GryviaUsageRecord]] = defaultdict(list)
    for rec in records:
        if in_period(rec, start, end) and (tenant is None or rec.spec.tenant == tenant):
            by_tenant[rec.spec.tenant].append(rec)
    out = []
    for name in sorted(by_tenant):
        recs = by_tenant[name]
        lines: dict[tuple[str, str], dict[str, Any]] = {}
        for rec in recs:
            sku = rec.spec.sku or rec.spec.gpu_type or "unpriced"
            line = lines.setdefault(
                (sku, rec.spec.gpu_type or ""),
                {
                    "sku": sku,
                    "gpuType": rec.spec.gpu_type or "",
                    "gpuHours": 0.0,
                    "amount": 0.0,
                    "jobs": set(),
                },
            )
            line["gpuHours"] += rec.spec.gpu_hours
            line["amount"] += rec.spec.cost
            line["jobs"].add((rec.namespace, rec.spec.job))
        rendered = []
        for line in sorted(lines.values(), key=lambda ln: (-ln["amount"], ln["sku"])):
            hrs, amount = line["gpuHours"], line["amount"]
            rendered.append(
                {
                    "sku": line["sku"],
                    "gpuType": line["gpuType"],
                    "gpuHours": round(hrs, 4),
                    "rate": round(amount / hrs, 4) if hrs else 0.0,
                    "amount": round(amount, 2),
                    "jobs": len(line["jobs"]),
                }
            )
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
                "subtotal": round(sum(r["amount"] for r in rendered), 2),
                "jobs": len({(r.namespace, r.spec.job) for r in recs}),
                "open": any(not r.spec.final for r in recs),
                "note": "Estimate from metered usage and catalog prices; not a tax invoice.",
            }
        )
    return out


def csv_safe(value: object) -> str:
    """Return a CSV cell that spreadsheets will not run as a formula (OWASP CSV injection):
    text starting with = + - @ tab or CR gets a leading apostrophe; numbers pass as they are."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_PREFIXES) else text


def to_csv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Return CSV text with every cell passed through `csv_safe`."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_safe(v) for v in row])
    return buf.getvalue()


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
    """CSV of a usage report: header `<group>,gpu_hours,cost,currency,jobs`, one line per
    row and a final `total` line; cells guarded against formula injection."""
    body = [
        (r.key, round(r.gpu_hours, 4), round(r.cost, 4), r.currency, r.jobs) for r in (*rows, total)
    ]
    return to_csv((group_by, "gpu_hours", "cost", "currency", "jobs"), body)


INVOICE_CSV_HEADER = (
    "invoice",
    "tenant",
    "period_from",
    "period_to",
    "sku",
    "gpuType",
    "jobs",
    "gpuHours",
    "rate",
    "amount",
    "currency",
)


def invoices_csv(items: Sequence[dict[str, Any]]) -> str:
    """CSV of invoices (as `invoices` returns them): one line per invoice line and a `TOTAL`
    line per invoice; cells guarded against formula injection."""
    body: list[tuple[object, ...]] = []
    for inv in items:
        head = (inv["number"], inv["tenant"], inv["period"]["from"], inv["period"]["to"])
        for line in inv["lines"]:
            body.append(
                (
                    *head,
                    line["sku"],
                    line["gpuType"],
                    line["jobs"],
                    line["gpuHours"],
                    line["rate"],
                    line["amount"],
                    inv["currency"],
                )
            )
        hours = round(sum(line["gpuHours"] for line in inv["lines"]), 4)
        body.append((*head, "TOTAL", "", inv["jobs"], hours, "", inv["subtotal"], inv["currency"]))
    return to_csv(INVOICE_CSV_HEADER, body)
