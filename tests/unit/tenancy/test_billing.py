"""Usage reports, invoices and CSV safety."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from gryvia_cli.core.billing import aggregate, invoices
from gryvia_cli.core.csvexport import csv_safe, to_csv
from gryvia_operator.api import GryviaUsageRecord
from gryvia_operator.api.periods import month_bounds

NOW = dt.datetime(2026, 12, 2, tzinfo=dt.UTC)


def _rec(
    tenant: str,
    job: str,
    start: str,
    hours: float,
    rate: float,
    sku: str = "h100",
    final: bool = True,
    currency: str = "USD",
) -> GryviaUsageRecord:
    return GryviaUsageRecord.model_validate(
        {
            "metadata": {"name": f"usage-{job}", "namespace": f"tenant-{tenant}"},
            "spec": {
                "tenant": tenant,
                "job": job,
                "jobUID": job,
                "sku": sku,
                "gpuType": "H100",
                "gpus": 8,
                "rate": rate,
                "currency": currency,
                "start": start,
                "gpuHours": hours,
                "cost": hours * rate,
                "final": final,
            },
        }
    )


RECORDS = [
    _rec("a", "j1", "2026-11-03T10:00:00Z", 8.0, 4.0),
    _rec("a", "j2", "2026-11-03T12:00:00Z", 2.0, 2.5, sku="l40"),
    _rec("b", "j3", "2026-11-20T00:00:00Z", 1.0, 4.0, final=False),
    _rec("b", "j4", "2026-10-31T11:29:59Z", 100.0, 4.0),  # October: 12.5 h to 23:59:59
]


def test_group_by_tenant_sku_and_day_in_period() -> None:
    start, end = month_bounds("2026-11")
    rows, total = aggregate(RECORDS, "tenant", start, end)
    assert [(r.key, r.gpu_hours, r.cost, r.jobs) for r in rows] == [
        ("a", 10.0, 37.0, 2),
        ("b", 1.0, 4.0, 1),
    ]
    assert (total.gpu_hours, total.cost, total.jobs) == (11.0, 41.0, 3)
    sku_rows, _ = aggregate(RECORDS, "sku", start, end)
    assert [r.key for r in sku_rows] == ["h100", "l40"]
    day_rows, _ = aggregate(RECORDS, "day", start, end, tenant="a")
    assert [(r.key, r.jobs) for r in day_rows] == [("2026-11-03", 2)]


def test_mixed_currencies_are_flagged() -> None:
    rows, total = aggregate(
        [RECORDS[0], _rec("a", "e", "2026-11-04T00:00:00Z", 1, 1, currency="EUR")], "tenant"
    )
    assert rows[0].currency == total.currency == "MIXED"


def test_invoice_per_tenant_with_lines_per_sku() -> None:
    inv = invoices(RECORDS, "2026-11", now=NOW)
    assert [i["number"] for i in inv] == ["INV-a-202611", "INV-b-202611"]
    a = inv[0]
    assert a["period"] == {"from": "2026-11-01", "to": "2026-11-30"}
    assert a["lines"] == [
        {"sku": "h100", "gpuType": "H100", "gpuHours": 8.0, "rate": 4.0, "amount": 32.0, "jobs": 1},
        {"sku": "l40", "gpuType": "H100", "gpuHours": 2.0, "rate": 2.5, "amount": 5.0, "jobs": 1},
    ]
    assert a["subtotal"] == 37.0 and a["open"] is False and a["status"] == "estimate"
    assert inv[1]["open"] is True
    assert invoices(RECORDS, "2026-11", tenant="b", now=NOW)[0]["subtotal"] == 4.0
    with pytest.raises(ValueError, match="use YYYY-MM"):
        invoices(RECORDS, "11/2026", now=NOW)


def test_csv_cells_cannot_become_formulas() -> None:
    assert csv_safe("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert csv_safe("+1") == "'+1" and csv_safe("@x") == "'@x" and csv_safe("-x") == "'-x"
    assert csv_safe(-3.5) == "-3.5" and csv_safe("team") == "team"
    assert to_csv(["tenant", "cost"], [["=cmd", 1.5]]) == "tenant,cost\n'=cmd,1.5\n"


def test_sealed_sampled_runs_add_active_gpu_hours_and_idle_cost_in_decimal() -> None:
    sampled = _rec("a", "s1", "2026-11-05T00:00:00Z", 8.0, 4.1)
    sampled.spec.active_gpu_hours = 2.0
    other = _rec("a", "s2", "2026-11-05T01:00:00Z", 1.0, 3.0)
    rows, total = aggregate([sampled, other], "job")
    by_key = {r.key: r for r in rows}
    assert by_key["tenant-a/s1"].active_gpu_hours == 2.0
    assert by_key["tenant-a/s1"].idle_cost == Decimal("24.600000")  # 6 h x 4.1, exactly
    assert by_key["tenant-a/s2"].active_gpu_hours is None
    assert by_key["tenant-a/s2"].as_dict("job").keys().isdisjoint({"activeGpuHours"})
    assert total.as_dict("job")["idleCost"] == 24.6 and total.active_gpu_hours == 2.0


def test_usage_csv_adds_active_gpu_hours_and_idle_cost_when_a_run_was_sampled() -> None:
    from gryvia_cli.core.billing import usage_csv

    sampled = _rec("a", "s1", "2026-11-05T00:00:00Z", 8.0, 4.1)
    sampled.spec.active_gpu_hours = 2.0
    other = _rec("b", "s2", "2026-11-05T01:00:00Z", 1.0, 3.0)
    rows, total = aggregate([sampled, other], "tenant")
    lines = usage_csv(rows, total, "tenant").splitlines()
    assert lines[0] == "tenant,gpu_hours,cost,currency,jobs,active_gpu_hours,idle_cost"
    assert lines[1:] == [
        "a,8.0,32.8,USD,1,2.0,24.6000",
        "b,1.0,3.0,USD,1,,",
        "total,9.0,35.8,USD,2,2.0,24.6000",
    ]
    plain, plain_total = aggregate([other], "tenant")
    assert usage_csv(plain, plain_total, "tenant").splitlines()[0].endswith(",currency,jobs")


def test_cost_counts_each_teams_active_gpu_hours_and_idle_cost_for_its_share_of_the_window() -> (
    None
):
    from gryvia_cli.core.cost import TeamScope, team_costs

    # 8 GPUs for 2 h from 23:00 on Dec 1: half of the run is on Dec 2 (the day window)
    sampled = _rec("a", "s1", "2026-12-01T23:00:00Z", 16.0, 4.0)
    sampled.spec.active_gpu_hours = 4.0
    other = _rec("b", "s2", "2026-12-02T01:00:00Z", 1.0, 3.0)
    scopes = [TeamScope(t, (f"tenant-{t}",), None, tenant=True) for t in ("a", "b")]
    now = dt.datetime(2026, 12, 2, 12, tzinfo=dt.UTC)
    a, b = team_costs(scopes, [sampled, other], "day", now)
    assert a.gpu_hours == 8.0 and a.active_gpu_hours == 2.0
    assert a.idle_cost == Decimal("24.000000") and isinstance(a.idle_cost, Decimal)  # 6 h x 4
    assert a.as_dict()["activeGpuHours"] == 2.0 and a.as_dict()["idleCost"] == 24.0
    assert b.active_gpu_hours is None and "idleCost" not in b.as_dict()
