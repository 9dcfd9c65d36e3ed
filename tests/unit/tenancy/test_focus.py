"""`gryvia usage --format focus` (issue 44, point 3): the rows carry every column FOCUS 1.2
makes mandatory, each of the type and value set the specification gives, and a tenant's
BilledCost over a month sums to that month's invoice subtotal."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from decimal import Decimal
from typing import Any

import pytest

from gryvia_cli.core.billing import invoices
from gryvia_cli.core.focus import MANDATORY, focus_csv, focus_rows
from gryvia_operator.api import GryviaUsageRecord
from gryvia_operator.api.periods import month_bounds

DECIMAL, STRING, DATETIME = "Decimal", "String", "DateTime"
SPEC_1_2: dict[str, tuple[str, bool, frozenset[str] | None]] = {
    "BilledCost": (DECIMAL, False, None),
    "BillingAccountId": (STRING, False, None),
    "BillingAccountName": (STRING, True, None),
    "BillingCurrency": (STRING, False, None),
    "BillingPeriodEnd": (DATETIME, False, None),
    "BillingPeriodStart": (DATETIME, False, None),
    "ChargeCategory": (
        STRING,
        False,
        frozenset({"Usage", "Purchase", "Tax", "Credit", "Adjustment"}),
    ),
    "ChargeClass": (STRING, True, frozenset({"Correction"})),
    "ChargeDescription": (STRING, True, None),
    "ChargePeriodEnd": (DATETIME, False, None),
    "ChargePeriodStart": (DATETIME, False, None),
    "ContractedCost": (DECIMAL, False, None),
    "EffectiveCost": (DECIMAL, False, None),
    "InvoiceIssuerName": (STRING, False, None),
    "ListCost": (DECIMAL, False, None),
    "PricingQuantity": (DECIMAL, True, None),
    "PricingUnit": (STRING, True, None),
    "ProviderName": (STRING, False, None),
    "PublisherName": (STRING, False, None),
    "ServiceCategory": (
        STRING,
        False,
        frozenset(
            {
                "AI and Machine Learning",
                "Analytics",
                "Business Applications",
                "Compute",
                "Databases",
                "Developer Tools",
                "Multicloud",
                "Identity",
                "Integration",
                "Internet of Things",
                "Management and Governance",
                "Media",
                "Migration",
                "Mobile",
                "Networking",
                "Security",
                "Storage",
                "Web",
                "Other",
            }
        ),
    ),
    "ServiceName": (STRING, False, None),
}
"""FOCUS 1.2's mandatory columns: (data type, allows nulls, allowed values or None), from
each column's "Content constraints" in the specification (focus.finops.org, v1.2)."""


def _rec(tenant: str, job: str, start: str, end: str, rate: float, **extra: Any) -> Any:
    begin = dt.datetime.fromisoformat(start.replace("Z", "+00:00"))
    finish = dt.datetime.fromisoformat(end.replace("Z", "+00:00"))
    hours = round((finish - begin).total_seconds() / 3600, 6)
    return GryviaUsageRecord.model_validate(
        {
            "metadata": {"name": f"usage-{job}", "namespace": f"tenant-{tenant}"},
            "spec": {
                "tenant": tenant,
                "job": job,
                "jobUID": f"uid-{job}",
                "sku": "h100",
                "gpuType": "H100",
                "gpus": 1,
                "rate": rate,
                "start": start,
                "end": end,
                "gpuHours": hours,
                "cost": round(hours * rate, 6),
                "final": True,
                **extra,
            },
        }
    )


RECORDS = [
    *(
        _rec("a", f"j{i}", f"2026-11-0{i}T10:00:00Z", f"2026-11-0{i}T10:29:37Z", 0.987)
        for i in range(1, 8)
    ),
    _rec("a", "cross", "2026-11-30T23:00:00Z", "2026-12-01T01:00:00Z", 3.5, user="ada"),
    _rec("b", "b1", "2026-11-12T00:00:00Z", "2026-11-12T03:17:00Z", 2.21, project="llm"),
    _rec("b", "free", "2026-11-13T00:00:00Z", "2026-11-13T01:00:00Z", 0.0, sku=None, unpriced=True),
    _rec("gone", "g1", "2026-11-14T00:00:00Z", "2026-11-14T01:00:00Z", 4.0),  # no such tenant
]
TENANTS = ["a", "b"]
NOV = month_bounds("2026-11")


def _parsed() -> list[dict[str, str]]:
    text = focus_csv(focus_rows(RECORDS, *NOV, TENANTS))
    return list(csv.DictReader(io.StringIO(text)))


def test_every_mandatory_column_is_there_with_its_type_and_values() -> None:
    rows = _parsed()
    assert set(SPEC_1_2) == set(MANDATORY)
    assert set(MANDATORY) <= set(rows[0])
    for row in rows:
        for column, (kind, nullable, allowed) in SPEC_1_2.items():
            value = row[column]
            if value == "":
                assert nullable, f"{column} is null"
                continue
            if kind == DECIMAL:
                Decimal(value)
            elif kind == DATETIME:
                assert value.endswith("Z") and len(value) == 20, value
                dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
            if allowed is not None:
                assert value in allowed, (column, value)
        assert row["BillingPeriodStart"] <= row["ChargePeriodStart"] <= row["ChargePeriodEnd"]
        assert row["ChargePeriodEnd"] <= row["BillingPeriodEnd"]
        json.loads(row["Tags"])


def test_billed_cost_of_a_month_sums_to_each_invoice_subtotal() -> None:
    rows = _parsed()
    billed: dict[str, Decimal] = {}
    for row in rows:
        billed[row["BillingAccountId"]] = billed.get(row["BillingAccountId"], Decimal(0)) + (
            Decimal(row["BilledCost"])
        )
    now = dt.datetime(2026, 12, 2, tzinfo=dt.UTC)
    bills = invoices(RECORDS, "2026-11", now=now, tenants=TENANTS)
    assert billed == {inv["tenant"]: Decimal(str(inv["subtotal"])) for inv in bills}
    rounded_each = sum(
        round(Decimal(r["ListCost"]), 2) for r in rows if r["BillingAccountId"] == "a"
    )
    assert rounded_each != billed["a"]  # rows rounded one by one would not add up to the bill


def test_a_run_across_months_is_one_row_per_billing_period() -> None:
    rows = focus_rows(RECORDS, None, None, TENANTS)
    cross = [r for r in rows if r["ResourceName"] == "tenant-a/cross"]
    assert [
        (r["BillingPeriodStart"], r["ChargePeriodStart"], r["ChargePeriodEnd"]) for r in cross
    ] == [
        ("2026-11-01T00:00:00Z", "2026-11-30T23:00:00Z", "2026-12-01T00:00:00Z"),
        ("2026-12-01T00:00:00Z", "2026-12-01T00:00:00Z", "2026-12-01T01:00:00Z"),
    ]
    assert [r["ConsumedQuantity"] for r in cross] == [Decimal(1), Decimal(1)]
    assert cross[0]["x_User"] == "ada" and cross[0]["ListUnitPrice"] == Decimal("3.5")


def test_unpriced_usage_has_no_price_and_no_sku_and_stray_tenants_are_left_out() -> None:
    rows = focus_rows(RECORDS, *NOV, TENANTS)
    (free,) = [r for r in rows if r["ResourceName"] == "tenant-b/free"]
    assert free["ListUnitPrice"] is None and free["SkuId"] is None and free["x_Unpriced"] is True
    assert free["BilledCost"] == 0 and free["ConsumedQuantity"] == Decimal(1)
    assert not [r for r in rows if r["BillingAccountId"] == "gone"]
    (b1,) = [r for r in rows if r["ResourceName"] == "tenant-b/b1"]
    assert b1["x_Project"] == "llm" and b1["SkuId"] == "h100"


@pytest.mark.parametrize("formula", ["=cmd()", "+1", "@x"])
def test_a_label_cannot_become_a_spreadsheet_formula(formula: str) -> None:
    rec = _rec("a", "f", "2026-11-02T00:00:00Z", "2026-11-02T01:00:00Z", 1.0)
    rec.spec.job_labels = {"note": formula}
    rec.spec.job = formula
    text = focus_csv(focus_rows([rec], *NOV, TENANTS))
    for cell in next(csv.DictReader(io.StringIO(text))).values():
        assert not cell.startswith(("=", "+", "@")), cell
