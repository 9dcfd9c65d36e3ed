"""Money that adds up (issue 38, points 1 and 2): one period rule for invoices, cost, quotas,
budgets and usage reports (a run crossing a month's end is split at the boundary), and invoice
lines rounded so that they sum to the rounded metered total (the finalized invoice equals the
estimate)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from gryvia_cli.core.billing import aggregate, invoices
from gryvia_cli.core.cost import TeamScope, team_costs
from gryvia_operator.api import GryviaUsageRecord
from gryvia_operator.api.invoice import GryviaInvoice, line_amounts
from gryvia_operator.api.invoicing import build_invoice, finalize_refusals
from gryvia_operator.api.ledger import build_entry
from gryvia_operator.api.periods import (
    MeteredRun,
    in_window,
    month_bounds,
    period_window,
    spend_in_window,
    split_in_window,
)
from tests.unit.api.test_ledger import record

UTC = dt.UTC
NEW_YEAR = dt.datetime(2027, 1, 2, 9, 0, tzinfo=UTC)  # November and December have ended


def _ledger(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    prev = ""
    for n, rec in enumerate(records, start=1):
        entry = build_entry(rec, sequence=n, prev_hash=prev, recorded_at=NEW_YEAR)
        prev = entry["spec"]["hash"]
        out.append(entry)
    return out


def _models(records: list[dict[str, Any]]) -> list[GryviaUsageRecord]:
    return [GryviaUsageRecord.model_validate(r) for r in records]


# 8 GPUs for 2 hours, one in November and one in December: 16 GPU-hours, 64.00 USD.
ACROSS = record(
    1,
    gpus=8,
    start="2026-11-30T23:00:00Z",
    end="2026-12-01T01:00:00Z",
    gpuHours=16.0,
    rate=4.0,
    cost=64.0,
)


def test_a_run_across_a_month_end_is_estimated_half_in_each_month_as_cost_counts_it() -> None:
    models = _models([ACROSS])
    scope = TeamScope("vision", ("tenant-vision",), None, tenant=True)
    for month, now in (("2026-11", dt.datetime(2026, 11, 30, 23, 59, tzinfo=UTC)),
                       ("2026-12", dt.datetime(2026, 12, 15, tzinfo=UTC))):  # fmt: skip
        (inv,) = invoices(models, month, now=NEW_YEAR)
        assert [(ln["gpuHours"], ln["amount"]) for ln in inv["lines"]] == [(8.0, 32.0)], month
        assert inv["subtotal"] == 32.0, month
        (team,) = team_costs([scope], models, "month", now)
        assert (team.gpu_hours, team.spent) == (8.0, 32.0), month  # `gryvia cost`
        hours, spent = spend_in_window([MeteredRun.of_record(models[0])], *month_bounds(month))
        assert (hours, spent) == (8.0, 32.0), month  # quotas' spentThisMonth and budgets


def test_usage_splits_a_run_across_a_month_end_by_month_and_by_day_as_invoices_do() -> None:
    sampled = dict(ACROSS, spec=dict(ACROSS["spec"], activeGPUHours=4.0))  # 12 h idle x 4.00
    models = _models([sampled])
    for month in ("2026-11", "2026-12"):
        (row,), total = aggregate(models, "tenant", *month_bounds(month))
        assert (row.key, row.gpu_hours, row.cost, row.jobs) == ("vision", 8.0, 32.0, 1), month
        assert (row.active_gpu_hours, row.idle_cost) == (2.0, Decimal("24.000000")), month
        assert (total.gpu_hours, total.cost) == (8.0, 32.0), month
    days, total = aggregate(models, "day")
    assert [(r.key, r.gpu_hours, r.cost, r.jobs) for r in days] == [
        ("2026-11-30", 8.0, 32.0, 1),
        ("2026-12-01", 8.0, 32.0, 1),
    ]
    assert (total.gpu_hours, total.cost, total.idle_cost) == (16.0, 64.0, Decimal("48.000000"))
    dec = month_bounds("2026-12")
    (only,), _ = aggregate(models, "day", *dec)
    assert (only.key, only.gpu_hours) == ("2026-12-01", 8.0)
    assert aggregate(models, "tenant", *month_bounds("2027-01")) == ([], aggregate([], "tenant")[1])


def test_a_run_across_a_month_end_is_finalized_half_in_each_month() -> None:
    entries = _ledger([ACROSS])
    for month in ("2026-11", "2026-12"):
        refused = finalize_refusals(
            "vision", month, records=[ACROSS], entries=entries, invoices=[], now=NEW_YEAR
        )
        assert refused == [], month
        inv = build_invoice("vision", month, entries, invoices=[], now=NEW_YEAR, by="alice")
        spec = inv["spec"]
        assert [(ln["entry"], ln["gpuHours"], ln["amount"]) for ln in spec["lines"]] == [
            ("le-r1", "8.000000", "32.00")
        ], month
        assert spec["total"] == "32.00", month
        GryviaInvoice.model_validate(inv)


def test_a_month_with_an_open_run_from_the_month_before_cannot_be_finalized() -> None:
    for hours in (32.0, 8.0):  # 4 h metered so far, into December; 1 h, to midnight
        running = record(2, start="2026-11-30T23:00:00Z", final=False, gpuHours=hours, gpus=8)
        del running["spec"]["end"]
        refused = finalize_refusals(
            "vision", "2026-12", records=[running], entries=[], invoices=[], now=NEW_YEAR
        )
        assert "1 usage record(s) of 2026-12 still open" in "\n".join(refused), hours
    later = finalize_refusals(
        "vision", "2026-10", records=[running], entries=[], invoices=[], now=NEW_YEAR
    )
    assert "still open" not in "\n".join(later)  # it started after October


def test_the_finalized_invoice_equals_the_estimate_to_the_cent() -> None:
    records = [record(n, cost=0.4936) for n in range(1, 82)]  # metered: 39.9816 USD
    (estimate,) = invoices(_models(records), "2026-11", now=NEW_YEAR)
    final = build_invoice("vision", "2026-11", _ledger(records), invoices=[], now=NEW_YEAR, by="")
    spec = final["spec"]
    assert estimate["subtotal"] == 39.98
    assert spec["total"] == "39.98"
    amounts = [Decimal(line["amount"]) for line in spec["lines"]]
    assert sum(amounts) == Decimal("39.98")
    assert amounts.count(Decimal("0.50")) == 29 and amounts.count(Decimal("0.49")) == 52
    GryviaInvoice.model_validate(final)


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_the_windows_of_a_run_add_up_exactly_to_its_amount() -> None:
    run = _at("2026-11-29T17:13:07Z"), _at("2026-12-02T03:01:59.9Z")  # cut to :59
    cost = Decimal("1234.567891")
    days = [_at("2026-11-29T00:00:00Z") + dt.timedelta(days=n) for n in range(5)]
    parts = [split_in_window(cost, *run, day, day + dt.timedelta(days=1)) for day in days]
    assert sum(parts) == cost and all(p.as_tuple().exponent == -6 for p in parts)
    months = [month_bounds(m) for m in ("2026-11", "2026-12")]
    assert sum(split_in_window(cost, *run, *m) for m in months) == cost
    week = period_window("week", run[0])  # Sunday 29 November: its week ends Monday 30th
    assert split_in_window(cost, *run, *week) == parts[0]
    assert split_in_window(cost, *run, *period_window("week", run[1])) == sum(parts[1:])
    assert split_in_window(cost, *run, *month_bounds("2027-01")) == 0
    assert in_window(*run, *months[1]) and not in_window(*run, *month_bounds("2026-10"))


def test_a_run_of_no_length_counts_wholly_where_it_starts() -> None:
    when = _at("2026-11-30T23:59:59Z")
    nov, dec = month_bounds("2026-11"), month_bounds("2026-12")
    assert split_in_window(Decimal("1.5"), when, when, *nov) == Decimal("1.500000")
    assert split_in_window(Decimal("1.5"), when, when, *dec) == 0
    assert in_window(when, when, *nov) and not in_window(when, when, *dec)
    ends_at_the_edge = _at("2026-11-30T23:00:00Z"), dec[0]
    assert not in_window(*ends_at_the_edge, *dec)


def test_line_amounts_give_the_missing_cents_to_the_largest_remainders() -> None:
    costs = [Decimal(c) for c in ("1.004000", "2.006000", "3.000000", "0.003000", "0.008000")]
    # metered 6.021 -> 6.02; floors 6.00; 2 cents to the remainders .008 and .006
    assert line_amounts(costs) == [Decimal(c) for c in ("1.00", "2.01", "3.00", "0.00", "0.01")]
    assert line_amounts([Decimal("0.005"), Decimal("0.005")]) == [Decimal("0.01"), Decimal("0")]
    assert line_amounts([]) == []
