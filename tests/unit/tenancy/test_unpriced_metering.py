"""Issue 38, failure 3 (operator side): a run no GryviaGpuSku prices is metered as
`unpriced`, a state, not a cost of 0.00.

New names are imported inside the tests so that each fails on its own before the fix."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gryvia_operator.api import GryviaAIJob, GryviaUsageRecord
from gryvia_operator.api.pricing import Rate
from gryvia_operator.reconcile.metering import build_usage_record, needs_update, spec_patch

T0 = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)


def _job(gpus: int = 8) -> GryviaAIJob:
    spec: dict[str, Any] = {"type": "training", "gpus": gpus, "image": "img"}
    if gpus:
        spec["gpuType"] = "B200"
    return GryviaAIJob.model_validate(
        {
            "metadata": {"name": "train", "namespace": "tenant-a", "uid": "u-1"},
            "spec": spec,
            "status": {"phase": "Running", "startTime": T0.isoformat()},
        }
    )


def _record(rate: Rate | None, gpus: int = 8) -> dict[str, Any]:
    rec = build_usage_record(
        _job(gpus),
        tenant="a",
        rate=rate,
        gpu_type="B200" if gpus else None,
        now=T0 + dt.timedelta(hours=2),
    )
    assert rec is not None
    return rec


def test_a_run_without_a_price_is_recorded_unpriced() -> None:
    spec = _record(None)["spec"]
    assert spec["unpriced"] is True
    assert spec["gpuHours"] == 16.0 and spec["gpuType"] == "B200" and "sku" not in spec
    model = GryviaUsageRecord.model_validate(_record(None))
    assert model.spec.unpriced is True
    priced = _record(Rate("b200", "B200", 6.0))["spec"]
    assert "unpriced" not in priced and priced["cost"] == 96.0


def test_is_unpriced_reads_new_records_and_those_written_before_the_field() -> None:
    from gryvia_operator.api.usagerecord import is_unpriced

    unpriced, priced = _record(None), _record(Rate("b200", "B200", 6.0))
    assert is_unpriced(unpriced["spec"])
    assert is_unpriced(GryviaUsageRecord.model_validate(unpriced).spec)
    assert not is_unpriced(priced["spec"])
    assert not is_unpriced(GryviaUsageRecord.model_validate(priced).spec)
    legacy = {k: v for k, v in unpriced["spec"].items() if k != "unpriced"}
    assert is_unpriced(legacy)  # no SKU and rate 0: what the operator wrote before
    assert not is_unpriced({**legacy, "sku": "free-tier"})  # a SKU at 0.00 is priced: free


def test_a_cpu_only_run_is_not_unpriced() -> None:
    from gryvia_operator.api.usagerecord import is_unpriced

    cpu = _record(None, gpus=0)
    assert "unpriced" not in cpu["spec"] and cpu["spec"]["gpuHours"] == 0.0
    assert not is_unpriced(cpu["spec"])  # nothing to price, before the field or after
    assert not is_unpriced(GryviaUsageRecord.model_validate(cpu).spec)
    from gryvia_operator.api.invoicing import unpriced_types

    assert unpriced_types("a", "2026-11", [cpu]) == []  # never holds up finalize
    assert unpriced_types("a", "2026-11", [cpu, _record(None)]) == ["B200"]


def test_a_record_that_gets_a_price_drops_the_unpriced_mark() -> None:
    stored, repriced = _record(None), _record(Rate("b200", "B200", 6.0))
    assert needs_update(stored, repriced, age_seconds=1, refresh_seconds=40)
    patch = spec_patch(stored, repriced)
    assert patch["unpriced"] is None and patch["sku"] == "b200"
