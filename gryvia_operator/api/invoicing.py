"""Invoice rules: what blocks finalizing a month, the lines and total built from the ledger,
numbering and revisions, and which spec updates are allowed.

A month bills each ledger entry for the part of its run inside the month, by the period rule
of `api.periods` (`in_window`, `split_in_window`), so a run crossing a month's end is billed
in both months, as `gryvia cost`, quotas and budgets count it; the lines are rounded by
`api.invoice.line_amounts` so that they sum to the metered total rounded once.

Pure: `gryvia invoice finalize|void|mark-paid` and the billing webhook use these rules; the
model and its names live in `gryvia_operator.api.invoice`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from gryvia_operator.api.attribution import billable, not_a_tenant
from gryvia_operator.api.invoice import (
    ALLOWED_NEXT,
    FIXED,
    IMMUTABLE,
    MAX_LINES,
    PAYMENT_ONCE,
    REASON_MAX,
    REASON_MIN,
    TRANSITIONS,
    VOID_REASON,
    invoice_name,
    line_amounts,
)
from gryvia_operator.api.ledger import timestamp, verify
from gryvia_operator.api.names import API_VERSION, LABEL_TENANT
from gryvia_operator.api.periods import MeteredRun, in_window, month_bounds, split_in_window
from gryvia_operator.api.usagerecord import is_unpriced


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))


def _in_month(obj: Mapping[str, Any], start: dt.datetime, end: dt.datetime) -> bool:
    """True when a raw usage record's or ledger entry's run has a part in [start, end): it
    overlaps it (`api.periods.in_window`), or it has no end yet and started before `end` (it
    may run on into the month whatever its last refresh says). False when its times are
    unreadable."""
    run = MeteredRun.of_raw(obj)
    if run is None:
        return False
    return run.start < end if run.end is None else in_window(*run.interval(), start, end)


def _listed(names: Sequence[str], limit: int = 5) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def ledger_off_text(sealed: int) -> str:
    """The refusal when the cluster has no GryviaLedgerEntry at all though `sealed` usage
    records are sealed: the operator runs without the billing ledger."""
    return (
        f"the billing ledger is off: no GryviaLedgerEntry exists although {sealed} usage "
        "record(s) are sealed, so the operator runs without --billing-ledger; turn it on "
        "(chart value billing.ledger.enabled: true, which needs the webhook), wait until the "
        "sealed records are ledgered (gryvia ledger verify TENANT), then finalize again"
    )


def finalize_refusals(
    tenant: str,
    month: str,
    *,
    records: Iterable[Mapping[str, Any]],
    entries: Sequence[Mapping[str, Any]],
    invoices: Iterable[Mapping[str, Any]],
    now: dt.datetime | None = None,
    tenants: set[str] | None = None,
    allow_unpriced: bool = False,
) -> list[str]:
    """Why `tenant`'s invoice for `month` cannot be finalized now (empty: it can).

    `records`: raw GryviaUsageRecords (any tenant; only the tenant's runs with a part in the
    month count: a run from the month before still open blocks it); `entries`: raw
    GryviaLedgerEntries (the whole chain is verified); `invoices`: raw GryviaInvoices.
    Reasons: records still open, sealed records not in the ledger yet, a broken chain, mixed
    currencies, no ledgered usage, an invoice already Finalized or Paid; with `now` (UTC), a
    month that has not ended (runs may still start in it); the billing ledger off (no
    GryviaLedgerEntry at all though records are sealed: `ledger_off_text`, naming the
    flag and chart value); with `tenants` (the existing
    GryviaTenant names), a name that is no GryviaTenant (`attribution.not_a_tenant`: estimates
    never bill it either); unless
    `allow_unpriced`, unpriced runs in the month (`unpriced_types`: they would be billed 0.00
    though they have no price, docs/billing.md "Unpriced usage"). Raises ValueError for a
    month not written `YYYY-MM`.
    """
    reasons: list[str] = []
    start, end = month_bounds(month)
    records = list(records)
    sealed = sum(1 for r in records if _spec(r).get("final") is True)
    off = not entries and sealed > 0
    if now is not None and now < end:
        reasons.append(
            f"{month} has not ended yet (it ends {timestamp(end)}) and runs may still "
            "start in it; finalize it from then on"
        )
    mine = [r for r in records if _spec(r).get("tenant") == tenant and _in_month(r, start, end)]
    open_ = sorted(_name(r) for r in mine if _spec(r).get("final") is not True)
    if open_:
        reasons.append(
            f"{len(open_)} usage record(s) of {month} still open (their jobs still run): "
            f"{_listed(open_)}; finalize after they end"
        )
    unpriced = unpriced_types(tenant, month, mine)
    if unpriced and not allow_unpriced:
        types = ", ".join(unpriced)
        reasons.append(
            f"usage of {month} on GPU type {types} is unpriced (no enabled GryviaGpuSku priced "
            "it when it was metered) and would be invoiced at 0.00; pass --allow-unpriced to "
            f"finalize it at 0.00 anyway (add or enable a GryviaGpuSku for {types} to price "
            "later runs)"
        )
    ledgered = {str((_spec(e).get("usageRecord") or {}).get("uid")) for e in entries}
    missing = sorted(
        _name(r)
        for r in mine
        if _spec(r).get("final") is True
        and str((r.get("metadata") or {}).get("uid")) not in ledgered
    )
    if missing and off:
        reasons.append(ledger_off_text(sealed))
    elif missing:
        reasons.append(
            f"{len(missing)} sealed usage record(s) not in the ledger yet: {_listed(missing)}; "
            "the operator writes them when billing.ledger.enabled is on (wait, then retry)"
        )
    check = verify(tenant, entries)
    if not check.valid:
        reasons.append(
            f"the ledger chain of {tenant} is invalid ({_listed(list(check.problems), 2)}); "
            f"see: gryvia ledger verify {tenant}"
        )
    billed = month_entries(tenant, month, entries)
    currencies = sorted({str(_spec(e).get("currency")) for e in billed})
    if len(currencies) > 1:
        reasons.append(
            f"the entries of {month} use several currencies ({', '.join(currencies)}); "
            "one invoice has one currency"
        )
    if not billable(tenant, tenants):
        reasons.append(not_a_tenant(tenant))
    elif not billed and not open_ and not missing:
        text = f"tenant {tenant} has no ledgered usage in {month}"
        reasons.append(f"{text}; {ledger_off_text(sealed)}" if off else text)
    for inv in invoices:
        spec = _spec(inv)
        same = spec.get("tenant") == tenant and spec.get("month") == month
        if same and spec.get("state") in ("Finalized", "Paid"):
            reasons.append(
                f"invoice {spec.get('number')} ({_name(inv)}) for {month} is already "
                f"{spec.get('state')}; void it first to invoice the month again"
            )
    return reasons


def unpriced_types(tenant: str, month: str, records: Iterable[Mapping[str, Any]]) -> list[str]:
    """The GPU types (sorted; `unknown` when a record names none) of `tenant`'s unpriced
    usage records (`api.usagerecord.is_unpriced`) whose run has a part in `month` (UTC),
    from raw GryviaUsageRecords; empty when all are priced. Raises ValueError for a month not
    written `YYYY-MM`."""
    start, end = month_bounds(month)
    return sorted(
        {
            str(_spec(r).get("gpuType") or "unknown")
            for r in records
            if _spec(r).get("tenant") == tenant
            and is_unpriced(_spec(r))
            and _in_month(r, start, end)
        }
    )


def month_entries(
    tenant: str, month: str, entries: Iterable[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The tenant's entries whose run has a part in `month` (UTC; `api.periods.in_window`),
    in chain order. Raises ValueError for a month not written `YYYY-MM`."""
    start, end = month_bounds(month)
    found = [e for e in entries if _spec(e).get("tenant") == tenant and _in_month(e, start, end)]
    return sorted(found, key=lambda e: int(_spec(e).get("sequence") or 0))


_NUMBER = re.compile(r"-(\d+)$")


def next_number(tenant: str, invoices: Iterable[Mapping[str, Any]]) -> str:
    """`INV-<tenant>-<NNNNNN>`: one more than the tenant's highest invoice number."""
    highest = 0
    for inv in invoices:
        spec = _spec(inv)
        match = _NUMBER.search(str(spec.get("number") or ""))
        if spec.get("tenant") == tenant and match:
            highest = max(highest, int(match.group(1)))
    return f"INV-{tenant}-{highest + 1:06d}"


def next_revision(tenant: str, month: str, invoices: Iterable[Mapping[str, Any]]) -> int:
    """One more than the highest revision of the tenant's invoices for `month` (1 first)."""
    revisions = [
        int(_spec(i).get("revision") or 1)
        for i in invoices
        if _spec(i).get("tenant") == tenant and _spec(i).get("month") == month
    ]
    return max(revisions, default=0) + 1


def build_invoice(
    tenant: str,
    month: str,
    entries: Sequence[Mapping[str, Any]],
    *,
    invoices: Iterable[Mapping[str, Any]],
    now: dt.datetime,
    by: str,
) -> dict[str, Any]:
    """The Finalized GryviaInvoice manifest of `tenant`'s `month` from the whole chain
    `entries` (check `finalize_refusals` first).

    One line per entry with a part in the month (`month_entries`), in chain order: its
    GPU-hours and cost inside the month (`api.periods.split_in_window`, 6 places; the whole
    entry when its run lies in the month), the amount to the cent by `api.invoice.line_amounts`;
    the total is the month's metered cost rounded once to the cent (half-up), which the lines
    sum to. Raises ValueError when the month has no entries or more lines than an invoice
    holds."""
    billed = month_entries(tenant, month, entries)
    if not billed:
        raise ValueError(f"tenant {tenant} has no ledgered usage in {month}")
    if len(billed) > MAX_LINES:
        raise ValueError(f"{len(billed)} entries in {month}; an invoice holds {MAX_LINES} lines")
    start, end = month_bounds(month)
    lines: list[dict[str, Any]] = []
    costs: list[Decimal] = []
    for e in billed:
        spec, run = _spec(e), MeteredRun.of_raw(e)
        if run is None:  # month_entries keeps only readable runs
            raise ValueError(f"ledger entry {_name(e)} has unreadable start or end")
        interval = run.interval()
        costs.append(split_in_window(Decimal(str(spec["cost"])), *interval, start, end))
        hours = split_in_window(Decimal(str(spec["gpuHours"])), *interval, start, end)
        lines.append(
            {
                "sequence": int(spec["sequence"]),
                "entry": str((e.get("metadata") or {}).get("name")),
                "job": str(spec.get("job") or ""),
                "sku": str(spec.get("sku") or ""),
                "gpuHours": str(hours),
                "rate": str(spec["rate"]),
            }
        )
    for line, cents in zip(lines, line_amounts(costs), strict=True):
        line["amount"] = str(cents)
    known = list(invoices)
    revision = next_revision(tenant, month, known)
    head = verify(tenant, entries).head
    spec_out: dict[str, Any] = {
        "tenant": tenant,
        "month": month,
        "revision": revision,
        "number": next_number(tenant, known),
        "state": "Finalized",
        "currency": str(_spec(billed[0]).get("currency") or "USD"),
        "lines": lines,
        "total": str(sum((Decimal(str(line["amount"])) for line in lines), Decimal("0.00"))),
        "ledger": {
            "entries": len(lines),
            "firstSequence": lines[0]["sequence"],
            "lastSequence": lines[-1]["sequence"],
            "headHash": head.hash,
        },
        "finalizedAt": timestamp(now),
        "finalizedBy": by,
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaInvoice",
        "metadata": {
            "name": invoice_name(tenant, month, revision),
            "labels": {LABEL_TENANT: tenant},
        },
        "spec": spec_out,
    }


_FIXED_KEYS = ("tenant", "month", "number", "revision", "currency", "total", "lines", "ledger")


def update_problems(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Why an update of an invoice's spec from `old` to `new` is refused (the CEL rules'
    words; empty: allowed)."""
    if old == new:
        return []
    state, after = str(old.get("state") or "Draft"), str(new.get("state") or "Draft")
    if state in ("Paid", "Void"):
        return [f"the invoice is {state}; {IMMUTABLE}"]
    problems = []
    if after != state and after not in ALLOWED_NEXT.get(state, frozenset()):
        problems.append(f"{state} -> {after} is not allowed: {TRANSITIONS}")
    changed = [k for k in _FIXED_KEYS if old.get(k) != new.get(k)]
    if changed:
        problems.append(f"{', '.join(changed)} changed: {FIXED}")
    if old.get("payment") is not None and new.get("payment") != old.get("payment"):
        problems.append(PAYMENT_ONCE)
    if after == "Void" and len(str(new.get("voidReason") or "")) < REASON_MIN:
        problems.append(VOID_REASON)
    return problems


def void_patch(reason: str, *, now: dt.datetime, by: str) -> dict[str, Any]:
    """The spec patch voiding an invoice. Raises ValueError when the reason is too short or
    too long (3-500 characters)."""
    text = reason.strip()
    if not REASON_MIN <= len(text) <= REASON_MAX:
        raise ValueError(f"--reason must be {REASON_MIN}-{REASON_MAX} characters, got {len(text)}")
    return {"state": "Void", "voidedAt": timestamp(now), "voidedBy": by, "voidReason": text}


def paid_patch(*, now: dt.datetime, method: str, reference: str = "") -> dict[str, Any]:
    """The spec patch marking an invoice Paid (payment recorded once)."""
    return {
        "state": "Paid",
        "paidAt": timestamp(now),
        "payment": {"method": method, "reference": reference},
    }
