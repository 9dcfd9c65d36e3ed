"""Chargeback: cost centers, shared costs split to the cent, and the closed months."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from gryvia_operator.api.chargeback import GryviaChargebackSpec
from gryvia_operator.api.chargebacks import (
    allocate,
    closed_months,
    cost_center,
    distribute,
    next_close,
    record_parts,
)
from gryvia_operator.api.gpusku import GryviaGpuSku
from gryvia_operator.api.reservation import GryviaReservation

NOW = dt.datetime(2026, 12, 3, 12, tzinfo=dt.UTC)


def record(name: str, tenant: str, start: str, end: str, gpus: int, rate: float, **spec: Any):
    t0 = dt.datetime.fromisoformat(start)
    t1 = dt.datetime.fromisoformat(end)
    hours = (t1 - t0).total_seconds() / 3600 * gpus
    return {
        "metadata": {"name": name},
        "spec": {
            "tenant": tenant,
            "job": name.removeprefix("usage-"),
            "jobUID": name,
            "gpus": gpus,
            "rate": rate,
            "currency": "USD",
            "start": start,
            "end": end,
            "gpuHours": round(hours, 6),
            "cost": round(hours * rate, 6),
            "final": True,
            **spec,
        },
    }


def sku(gpu_type: str, rate: float) -> GryviaGpuSku:
    return GryviaGpuSku.model_validate(
        {"metadata": {"name": gpu_type.lower()}, "spec": {"gpuType": gpu_type, "hourlyRate": rate}}
    )


def reservation(name: str, gpus: int, start: str, end: str) -> GryviaReservation:
    return GryviaReservation.model_validate(
        {
            "metadata": {"name": name},
            "spec": {
                "owner": {"type": "tenant", "name": "nlp"},
                "resources": {"gpuType": "H100", "gpuCount": gpus},
                "schedule": {"type": "scheduled", "startTime": start, "endTime": end},
            },
            "status": {
                "state": "expired",
                "allocatedGPUs": gpus,
                "actualStartTime": start,
                "actualEndTime": end,
            },
        }
    )


RECORDS = [
    record("usage-a", "vision", "2026-11-02T00:00:00+00:00", "2026-11-02T03:00:00+00:00", 8, 2.5),
    record(
        "usage-b",
        "vision",
        "2026-11-05T00:00:00+00:00",
        "2026-11-05T01:07:00+00:00",
        1,
        3.1,
        project="detector",
    ),
    record(
        "usage-c",
        "nlp",
        "2026-11-10T00:00:00+00:00",
        "2026-11-10T05:00:00+00:00",
        4,
        2.5,
        reservation="nov-window",
        project="llm",
    ),
    # crosses the month's end: only the part in November counts
    record("usage-d", "nlp", "2026-11-30T23:00:00+00:00", "2026-12-01T01:00:00+00:00", 2, 3.3333),
    record("usage-e", "nlp", "2026-10-01T00:00:00+00:00", "2026-10-01T01:00:00+00:00", 2, 2.5),
]


def test_a_closed_month_charges_each_tenant_its_metered_cost_plus_its_share() -> None:
    spec = GryviaChargebackSpec(platform_share_percent="10")
    res = reservation("nov-window", 8, "2026-11-10T00:00:00Z", "2026-11-10T10:00:00Z")
    report = allocate(spec, "2026-11", RECORDS, [res], [sku("H100", 2.5)], now=NOW)

    # metered: 60.00 + 3.4617 (1.1167 h x 3.1) + 50.00 + 6.6666 (1 h of 2 x 3.3333)
    assert report.metered == "120.13"
    # the reservation held 8 GPUs for 10 h = 80 GPU-h; usage-c used 20 of them
    assert report.reservation_idle_gpu_hours == "60.000000"
    assert report.reservation_idle == "150.00"
    assert report.platform == "12.01"  # 10 % of 120.128333
    assert report.shared == "162.01"
    lines = {line.tenant: line for line in report.lines}
    assert set(lines) == {"vision", "nlp"} and report.usage_records == 4
    cents = Decimal("0.01")
    for line in report.lines:
        parts = Decimal(line.metered) + Decimal(line.reservation_idle) + Decimal(line.platform)
        assert Decimal(line.total) == parts
    assert sum(Decimal(x.reservation_idle) for x in report.lines) == Decimal("150.00")
    assert sum(Decimal(x.platform) for x in report.lines) == Decimal("12.01")
    assert sum(Decimal(x.metered) for x in report.lines) == Decimal(report.metered)
    assert sum(Decimal(x.total) for x in report.lines) == Decimal(report.total)
    assert Decimal(report.total) == Decimal("282.14")
    # in proportion to metered cost: vision 63.4617 of 120.128333
    assert abs(Decimal(lines["vision"].platform) - Decimal("6.34")) <= cents
    assert lines["vision"].metered == "63.46" and lines["nlp"].metered == "56.67"


def test_cost_centers_by_tenant_project_and_mapping() -> None:
    by_project = GryviaChargebackSpec(allocate_by="project", default_cost_center="shared-ml")
    assert cost_center(by_project, "vision", "detector") == "detector"
    assert cost_center(by_project, "vision", "") == "shared-ml"
    mapping = GryviaChargebackSpec.model_validate(
        {
            "allocateBy": "mapping",
            "defaultCostCenter": "cc-000",
            "mapping": [
                {"costCenter": "cc-100", "tenants": ["vision"], "projects": ["detector"]},
                {"costCenter": "cc-200", "tenants": ["vision"]},
                {"costCenter": "cc-300", "projects": ["llm"]},
            ],
        }
    )
    assert cost_center(mapping, "vision", "detector") == "cc-100"
    assert cost_center(mapping, "vision", "other") == "cc-200"
    assert cost_center(mapping, "nlp", "llm") == "cc-300"
    assert cost_center(mapping, "nlp", "") == "cc-000"
    parts = record_parts(mapping, "2026-11", RECORDS)
    assert [(p.record, p.cost_center) for p in parts] == [
        ("usage-a", "cc-200"),
        ("usage-b", "cc-100"),
        ("usage-c", "cc-300"),
        ("usage-d", "cc-000"),
    ]
    assert str(parts[3].cost) == "6.666600"  # the November hour of the two


def test_distribute_sums_to_the_total_to_the_cent() -> None:
    assert distribute(Decimal("10.00"), [Decimal(1)] * 3) == [
        Decimal("3.34"),
        Decimal("3.33"),
        Decimal("3.33"),
    ]
    shares = distribute(Decimal("162.01"), [Decimal("63.4617"), Decimal("56.6666")])
    assert sum(shares) == Decimal("162.01")
    assert distribute(Decimal("0.00"), []) == []
    with pytest.raises(ValueError):
        distribute(Decimal("1.00"), [])


def test_months_close_an_hour_after_they_end_and_are_reported_from_the_start() -> None:
    spec = GryviaChargebackSpec(start_month="2026-09")
    created = dt.datetime(2026, 10, 15, tzinfo=dt.UTC)
    assert closed_months(spec, created, NOW) == ["2026-09", "2026-10", "2026-11"]
    just_after = dt.datetime(2026, 12, 1, 0, 30, tzinfo=dt.UTC)
    assert closed_months(spec, created, just_after) == ["2026-09", "2026-10"]
    assert next_close(spec, just_after) == dt.datetime(2026, 12, 1, 1, tzinfo=dt.UTC)
    assert closed_months(GryviaChargebackSpec(), created, NOW) == ["2026-10", "2026-11"]


def test_a_reported_month_is_never_computed_again() -> None:
    from gryvia_operator.api.chargeback import GryviaChargeback
    from gryvia_operator.reconcile.chargeback import Observed, reconcile_chargeback

    policy = GryviaChargeback.model_validate(
        {
            "metadata": {"name": "cb", "creationTimestamp": "2026-10-20T00:00:00Z"},
            "spec": {"platformSharePercent": "10"},
        }
    )
    seen = Observed(tuple(RECORDS), (), (sku("H100", 2.5),))
    status, later = reconcile_chargeback(policy, seen, NOW)
    assert [m["month"] for m in status["months"]] == ["2026-10", "2026-11"]
    assert status["months"][1]["metered"] == "120.13" and 0 < later <= 300
    written = GryviaChargeback.model_validate(
        {**policy.model_dump(by_alias=True), "status": status}
    )
    more = Observed((*RECORDS, record("usage-z", "x", "2026-11-03T00:00:00+00:00",
                                      "2026-11-03T01:00:00+00:00", 1, 100.0)), (), ())  # fmt: skip
    again, _ = reconcile_chargeback(written, more, NOW + dt.timedelta(days=1))
    assert again == status  # the November report stays as it was written


def test_show_previews_an_unreported_month_and_export_lists_its_records() -> None:
    from tests.unit.cli.fakes import FakeAccess
    from tests.unit.cli.helpers import run

    policy = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaChargeback",
        "metadata": {"name": "finance"},
        "spec": {"platformSharePercent": "10"},
    }
    records = [
        {**r, "apiVersion": "gryvia.io/v1alpha1", "kind": "GryviaUsageRecord"} for r in RECORDS
    ]
    fake = FakeAccess(policy, *records)
    shown = run(["chargeback", "show", "2026-11"], fake)
    assert shown.exit_code == 0, shown.output
    assert "preview: finance has not written 2026-11" in shown.output
    assert "vision" in shown.output and "63.46" in shown.output
    assert "total 132.14 USD" in shown.output  # 120.13 metered + 12.01 platform, no reservation
    exported = run(["chargeback", "export", "2026-11"], fake)
    assert exported.exit_code == 0, exported.output
    lines = exported.output.strip().splitlines()
    assert lines[0].startswith("month,costCenter,tenant,project,usageRecord,job,gpuHours,cost")
    assert [line.split(",")[4] for line in lines[1:]] == [
        "usage-c",
        "usage-d",
        "usage-a",
        "usage-b",
    ]
    bad = run(["chargeback", "show", "2026-13"], fake)
    assert bad.exit_code == 2 and "MONTH: expected YYYY-MM" in bad.output
