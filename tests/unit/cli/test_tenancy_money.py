"""Pure money helpers of the CLI: cost windows and team spend, usage dates, billing CSV and
the submit cost estimate."""

from __future__ import annotations

import csv
import datetime as dt
import io
from typing import Any

import pytest

from gryvia_cli.core import billing, cost, estimate, invoicecsv
from gryvia_cli.core.jobs import summarize_job
from gryvia_operator.api import GryviaGpuSku, GryviaQuota, GryviaTenant, GryviaUsageRecord, periods
from tests.builders import make_job
from tests.unit.cli.test_tenancy_core import CATALOG, quota, record, tenant

UTC = dt.UTC


# -- cost windows ------------------------------------------------------------------------------

WEDNESDAY = dt.datetime(2026, 11, 18, 15, 30, tzinfo=UTC)


def test_period_windows_are_utc_day_week_and_month() -> None:
    assert periods.period_window("day", WEDNESDAY) == (
        dt.datetime(2026, 11, 18, tzinfo=UTC),
        dt.datetime(2026, 11, 19, tzinfo=UTC),
    )
    assert periods.period_window("week", WEDNESDAY) == (
        dt.datetime(2026, 11, 16, tzinfo=UTC),  # Monday
        dt.datetime(2026, 11, 23, tzinfo=UTC),
    )
    assert periods.period_window("month", WEDNESDAY) == (
        dt.datetime(2026, 11, 1, tzinfo=UTC),
        dt.datetime(2026, 12, 1, tzinfo=UTC),
    )
    monday = dt.datetime(2026, 11, 16, 0, 0, tzinfo=UTC)
    assert periods.period_window("week", monday)[0] == monday
    local = dt.datetime(2026, 11, 19, 1, 0, tzinfo=dt.timezone(dt.timedelta(hours=3)))
    assert periods.period_window("day", local)[0] == dt.datetime(2026, 11, 18, tzinfo=UTC)


def _records(*objs: dict[str, Any]) -> list[GryviaUsageRecord]:
    return [GryviaUsageRecord.model_validate(o) for o in objs]


def test_share_in_window_prorates_runs_crossing_the_start() -> None:
    start, end = periods.period_window("day", WEDNESDAY)
    # 8 GPUs from 22:00 the day before to 02:00: half of it today
    crossing, inside, before, open_ = _records(
        record("a", "x", "2026-11-17T22:00:00Z", 32.0, end="2026-11-18T02:00:00Z"),
        record("a", "y", "2026-11-18T09:00:00Z", 8.0, end="2026-11-18T10:00:00Z"),
        record("a", "z", "2026-11-16T09:00:00Z", 8.0, end="2026-11-16T10:00:00Z"),
        record("a", "o", "2026-11-18T13:00:00Z", 16.0, final=False),  # 2 h metered so far
    )
    assert periods.record_share(crossing, start, end) == pytest.approx(0.5)
    assert periods.record_share(inside, start, end) == 1.0
    assert periods.record_share(before, start, end) == 0.0
    assert periods.record_share(open_, start, end) == 1.0


def test_the_operators_raw_reading_of_records_spends_what_the_models_do() -> None:
    raw = [
        record("a", "x", "2026-11-17T22:00:00Z", 32.0, end="2026-11-18T02:00:00Z"),
        record("a", "y", "2026-11-18T09:00:00Z", 8.0, end="2026-11-18T10:00:00Z"),
        record("a", "o", "2026-11-18T13:00:00Z", 16.0, final=False),
        {"metadata": {"name": "broken"}, "spec": {"start": "yesterday"}},
    ]
    start, end = periods.period_window("day", WEDNESDAY)
    runs = [run for run in map(periods.MeteredRun.of_raw, raw) if run is not None]
    assert len(runs) == 3  # the malformed one is skipped
    from_models = periods.spend_in_window(
        [periods.MeteredRun.of_record(r) for r in _records(*raw[:3])], start, end
    )
    assert periods.spend_in_window(runs, start, end) == pytest.approx(from_models)
    assert from_models[0] == pytest.approx(16.0 + 8.0 + 16.0)  # half of x, all of y and o


def test_team_costs_change_with_the_period() -> None:
    quotas = [
        GryviaQuota.model_validate(
            quota(
                "vq",
                "vision",
                ["tenant-vision", "vision-dev"],
                budget={"monthlyBudget": 3000},
            )
        )
    ]
    tenants = [
        GryviaTenant.model_validate(tenant("vision")),
        GryviaTenant.model_validate(tenant("nlp", quotas={"costUSD": {"monthly": 600}})),
    ]
    scopes = cost.team_scopes(quotas, tenants)
    assert scopes == [
        cost.TeamScope("nlp", ("tenant-nlp",), 600, tenant=True),
        cost.TeamScope(
            "vision",
            ("tenant-vision", "vision-dev"),
            3000,
            tenant=True,
            quota_namespaces=("tenant-vision", "vision-dev"),
        ),
    ]
    records = _records(
        record("vision", "today", "2026-11-18T09:00:00Z", 8.0, end="2026-11-18T10:00:00Z"),
        record("vision", "monday", "2026-11-16T09:00:00Z", 16.0, end="2026-11-16T11:00:00Z"),
        record("x", "dev", "2026-11-02T09:00:00Z", 8.0, namespace="vision-dev"),
        record("x", "october", "2026-10-30T09:00:00Z", 80.0, end="2026-10-30T19:00:00Z"),
        record("nlp", "n", "2026-11-18T12:00:00Z", 4.0, rate=2.5, end="2026-11-18T12:30:00Z"),
        record("other", "o", "2026-11-18T12:00:00Z", 100.0, namespace="elsewhere"),
    )
    spent = {
        period: {c.team: c.spent for c in cost.team_costs(scopes, records, period, WEDNESDAY)}
        for period in periods.PERIODS
    }
    assert spent["day"] == {"nlp": 10.0, "vision": 32.0}
    assert spent["week"] == {"nlp": 10.0, "vision": 32.0 + 64.0}
    assert spent["month"] == {"nlp": 10.0, "vision": 32.0 + 64.0 + 32.0}
    day = {c.team: c for c in cost.team_costs(scopes, records, "day", WEDNESDAY)}
    assert day["vision"].budget == pytest.approx(100.0)  # 3000 / 30 days
    assert day["vision"].monthly_budget == 3000
    assert day["vision"].remaining == pytest.approx(68.0)
    assert day["vision"].percent == pytest.approx(32.0)
    assert day["vision"].projected == pytest.approx(32.0 / (15.5 / 24))
    assert day["vision"].jobs == 1
    month = {c.team: c for c in cost.team_costs(scopes, records, "month", WEDNESDAY)}
    assert month["vision"].budget == 3000
    assert month["vision"].jobs == 3
    assert month["vision"].as_dict()["namespaces"] == ["tenant-vision", "vision-dev"]
    week = {c.team: c for c in cost.team_costs(scopes, records, "week", WEDNESDAY)}
    assert week["nlp"].budget == pytest.approx(600 * 7 / 30)


# -- usage dates and CSV -----------------------------------------------------------------------


def test_usage_dates_accept_dates_and_rfc3339() -> None:
    assert billing.parse_when("2026-11-03", option="--from") == dt.datetime(2026, 11, 3, tzinfo=UTC)
    assert billing.parse_when("2026-11-03", option="--to", end=True) == dt.datetime(
        2026, 11, 4, tzinfo=UTC
    )
    assert billing.parse_when("2026-11-03T10:00:00Z", option="--to", end=True) == dt.datetime(
        2026, 11, 3, 10, tzinfo=UTC
    )
    assert billing.parse_when("2026-11-03T10:00:00+02:00", option="--from") == dt.datetime(
        2026, 11, 3, 8, tzinfo=UTC
    )
    assert billing.parse_when("2026-11-03T10:00:00", option="--from").tzinfo is not None
    for bad in ("yesterday", "2026-13-01", "03/11/2026"):
        with pytest.raises(ValueError, match=r"--from .*use YYYY-MM-DD or RFC 3339"):
            billing.parse_when(bad, option="--from")


def test_usage_csv_has_a_total_row_and_guards_formulas() -> None:
    records = _records(
        record("=cmd|calc", "a", "2026-11-03T10:00:00Z", 8.0),
        record("vision", "b", "2026-11-03T11:00:00Z", 2.0),
    )
    rows, total = billing.aggregate(records, "tenant")
    text = billing.usage_csv(rows, total, "tenant")
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[0] == ["tenant", "gpu_hours", "cost", "currency", "jobs"]
    assert parsed[1] == ["'=cmd|calc", "8.0", "32.0", "USD", "1"]
    assert parsed[-1] == ["total", "10.0", "40.0", "USD", "2"]


def test_invoice_csv_lines_and_total_rows() -> None:
    records = _records(
        record("vision", "a", "2026-11-03T10:00:00Z", 8.0),
        record(
            "vision", "b", "2026-11-04T10:00:00Z", 2.0, rate=2.5, sku_name="l40", gpu_type="L40"
        ),
        record("nlp", "c", "2026-11-05T10:00:00Z", 1.0, sku_name="+sku"),
    )
    items = billing.invoices(records, "2026-11", now=WEDNESDAY)
    parsed = list(csv.reader(io.StringIO(invoicecsv.invoices_csv(items))))
    assert parsed[0] == list(invoicecsv.INVOICE_CSV_HEADER)
    assert ",".join(parsed[0]) == (
        "invoice,tenant,period_from,period_to,sku,gpuType,jobs,gpuHours,rate,amount,currency"
    )
    assert parsed[1] == [
        "INV-nlp-202611",
        "nlp",
        "2026-11-01",
        "2026-11-30",
        "'+sku",
        "A100-80G",
        "1",
        "1.0",
        "4.00",
        "4.00",
        "USD",
    ]  # money with 2 decimals, as the table and a finalized invoice's CSV
    totals = [row for row in parsed if row[4] == "TOTAL"]
    assert [(t[0], t[6], t[7], t[9]) for t in totals] == [
        ("INV-nlp-202611", "1", "1.0", "4.00"),
        ("INV-vision-202611", "2", "10.0", "37.00"),
    ]


# -- submit estimate ---------------------------------------------------------------------------

SKUS = [GryviaGpuSku.model_validate(s) for s in CATALOG]


def _job(gpus: int, gpu_type: str, timeout: str | None = None, ns: str = "ml") -> Any:
    builder = make_job("train", ns).gpus(gpus).gpu_type(gpu_type)
    if timeout:
        builder = builder.set(timeout=timeout)
    return summarize_job(builder.obj())


def test_estimate_per_hour_and_for_the_timeout_from_the_catalog() -> None:
    est = estimate.estimate_cost(_job(8, "A100-80G", "2h"), "ml", SKUS, [], [])
    assert est is not None and est.rate is not None
    assert est.per_hour == 32.0 and est.for_timeout == 64.0
    assert est.lines() == [
        "  estimated cost: 32.00 USD/hour (8 GPUs x 4.00 USD per GPU-hour, SKU a100-80g)",
        "  estimated cost for its timeout (2h): 64.00 USD",
    ]
    assert est.warnings == ()
    h100 = estimate.estimate_cost(_job(2, "h100"), "ml", SKUS, [], [])
    assert h100 is not None and h100.per_hour == 16.0  # the disabled cheap SKU is skipped
    assert h100.for_timeout is None and len(h100.lines()) == 1


def test_estimate_without_a_price_and_for_cpu_jobs() -> None:
    none = estimate.estimate_cost(_job(4, "B200"), "ml", SKUS, [], [])
    # issue 38, failure 3: a type no SKU prices is unpriced, said and warned about
    assert none is not None
    assert none.lines() == ["  estimated cost: unpriced (no catalog price for GPU type B200)"]
    assert "add or enable a GryviaGpuSku for B200" in none.warnings[0]
    anytype = estimate.estimate_cost(_job(4, "any"), "ml", SKUS, [], [])
    assert anytype is not None and anytype.lines() == ["  cost: no catalog price for GPU type any"]
    assert estimate.estimate_cost(_job(0, "H100"), "ml", SKUS, [], []) is None


def test_estimate_uses_the_tenants_allowed_skus() -> None:
    tenants = [GryviaTenant.model_validate(tenant("vision", allowedSkus=["l40"]))]
    blocked = estimate.estimate_cost(_job(8, "A100-80G"), "tenant-vision", SKUS, tenants, [])
    assert blocked is not None and blocked.rate is None
    allowed = estimate.estimate_cost(_job(8, "L40"), "tenant-vision", SKUS, tenants, [])
    assert allowed is not None and allowed.per_hour == 20.0
    elsewhere = estimate.estimate_cost(_job(8, "A100-80G"), "tenant-other", SKUS, tenants, [])
    assert elsewhere is not None and elsewhere.per_hour == 32.0


def test_estimate_warns_when_it_would_cross_the_monthly_budget() -> None:
    spent = {"budgetStatus": {"spentThisMonth": 950.0}}
    quotas = [
        GryviaQuota.model_validate(
            quota("vq", "vision", ["ml"], budget={"monthlyBudget": 1000}, status=spent)
        ),
        GryviaQuota.model_validate(
            quota("other", "other", ["elsewhere"], budget={"monthlyBudget": 1})
        ),
    ]
    within = estimate.estimate_cost(_job(1, "A100-80G", "1h"), "ml", SKUS, [], quotas)
    assert within is not None and within.warnings == ()
    over = estimate.estimate_cost(_job(8, "A100-80G", "2h"), "ml", SKUS, [], quotas)
    assert over is not None
    assert over.warnings == (
        "the estimate (64.00 USD for its timeout 2h) would cross the monthly budget of team "
        "vision: 950.00 of 1000.00 USD spent",
    )
    hourly = estimate.estimate_cost(_job(16, "A100-80G"), "ml", SKUS, [], quotas)
    assert hourly is not None and "64.00 USD for one hour, no timeout set" in hourly.warnings[0]
