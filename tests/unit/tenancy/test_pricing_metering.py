"""Prices from the catalog, and usage records: GPU-hours, cost, sealing."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from gryvia_operator.api import GryviaAIJob, GryviaGpuSku
from gryvia_operator.api.attribution import tenant_of
from gryvia_operator.api.names import usage_record_name
from gryvia_operator.api.pricing import Rate, default_catalog, gpu_types_with_sku, select_rate
from gryvia_operator.reconcile.metering import (
    build_usage_record,
    gpu_hours,
    needs_update,
)

T0 = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)


def _sku(name: str, gpu_type: str, rate: float, enabled: bool = True) -> GryviaGpuSku:
    return GryviaGpuSku.model_validate(
        {
            "metadata": {"name": name},
            "spec": {"gpuType": gpu_type, "hourlyRate": rate, "enabled": enabled},
        }
    )


def _job(
    phase: str | None = "Running",
    start: dt.datetime | None = T0,
    end: dt.datetime | None = None,
    gpus: int = 8,
) -> GryviaAIJob:
    status: dict[str, Any] = {}
    if phase:
        status["phase"] = phase
    if start:
        status["startTime"] = start.isoformat()
    if end:
        status["completionTime"] = end.isoformat()
    return GryviaAIJob.model_validate(
        {
            "metadata": {"name": "train", "namespace": "tenant-a", "uid": "u-123"},
            "spec": {"type": "training", "gpus": gpus, "gpuType": "H100", "image": "img"},
            "status": status,
        }
    )


def test_first_enabled_sku_by_name_matching_type_case_insensitively() -> None:
    skus = [
        _sku("z-h100", "H100", 9.0),
        _sku("b-h100", "h100", 7.0, enabled=False),
        _sku("c-h100", "H100", 6.0),
    ]
    assert select_rate("h100", skus) == Rate("c-h100", "H100", 6.0, "USD")
    assert select_rate("H100", skus, allowed_skus=["z-h100"]) == Rate("z-h100", "H100", 9.0)
    assert select_rate("H100", skus, allowed_skus=["l40"]) is None
    assert select_rate("any", skus) is None
    assert select_rate(None, skus) is None


def test_default_catalog_is_valid_and_priced() -> None:
    catalog = default_catalog()
    assert select_rate("A100-80G", catalog) == Rate("a100-80g", "A100-80G", 4.0)
    assert gpu_types_with_sku(catalog, ["h100-80g", "L40"]) == ["H100", "L40"]


def test_gpu_hours() -> None:
    assert gpu_hours(8, T0, T0 + dt.timedelta(minutes=3)) == pytest.approx(0.4)
    assert gpu_hours(8, T0, T0 - dt.timedelta(minutes=3)) == 0.0


def test_running_job_gets_open_record_priced_per_gpu_hour() -> None:
    now = T0 + dt.timedelta(minutes=30)
    rec = build_usage_record(
        _job(), tenant="a", rate=Rate("h100", "H100", 4.0), gpu_type="H100", now=now
    )
    assert rec is not None
    assert rec["metadata"]["name"] == usage_record_name("u-123") == "usage-u-123"
    assert rec["metadata"]["labels"] == {"gryvia.io/tenant": "a", "gryvia.io/job": "train"}
    spec = rec["spec"]
    assert spec["gpuHours"] == pytest.approx(4.0)
    assert spec["cost"] == pytest.approx(16.0)
    assert spec["final"] is False and "end" not in spec
    assert spec["start"] == "2026-11-29T12:00:00Z"


def test_finished_job_is_sealed_at_completion_time() -> None:
    end = T0 + dt.timedelta(minutes=3)
    rec = build_usage_record(
        _job("Succeeded", end=end),
        tenant="a",
        rate=Rate("h100", "H100", 4.0),
        gpu_type="H100",
        now=end + dt.timedelta(hours=5),
    )
    assert rec is not None
    assert rec["spec"]["final"] is True
    assert rec["spec"]["end"] == "2026-11-29T12:03:00Z"
    assert rec["spec"]["cost"] == pytest.approx(8 * 0.05 * 4.0)


def test_deleted_while_running_closes_at_deletion_and_unpriced_bills_zero() -> None:
    deleted = T0 + dt.timedelta(hours=1)
    rec = build_usage_record(
        _job(),
        tenant="a",
        rate=None,
        gpu_type=None,
        now=deleted + dt.timedelta(minutes=1),
        deleted_at=deleted,
    )
    assert rec is not None
    assert rec["spec"]["final"] is True and rec["spec"]["gpuHours"] == pytest.approx(8.0)
    assert rec["spec"]["cost"] == 0.0 and "sku" not in rec["spec"]


def test_never_started_job_has_no_record() -> None:
    assert (
        build_usage_record(
            _job("Queued", start=None), tenant="a", rate=None, gpu_type="H100", now=T0
        )
        is None
    )


def test_sealed_records_never_change() -> None:
    desired = {"spec": {"final": True, "cost": 2.0}}
    assert needs_update(None, desired)
    assert not needs_update({"spec": {"final": True, "cost": 1.0}}, desired)
    assert needs_update({"spec": {"final": False, "cost": 1.0}}, desired)
    assert not needs_update(
        {"spec": {"final": False, "cost": 2.0}}, {"spec": {"final": False, "cost": 2.0}}
    )


def test_tenant_attribution_order() -> None:
    assert tenant_of("tenant-a", {}, {}, {"a"}) == "a"
    assert tenant_of("tenant-b", {}, {}, {"a"}) == "tenant-b"
    assert tenant_of("ml", {"gryvia.io/team": "vision"}, {"gryvia.io/team": "x"}, set()) == "vision"
    assert tenant_of("ml", {}, {"gryvia.io/team": "x"}, set()) == "x"
    assert tenant_of("ml", {}, {}, set()) == "ml"


def test_running_hours_are_refreshed_at_most_every_refresh_period() -> None:
    stored = {"spec": {"final": False, "tenant": "a", "rate": 4.0, "gpuHours": 1.0, "cost": 4.0}}
    progressed = {
        "spec": {"final": False, "tenant": "a", "rate": 4.0, "gpuHours": 1.1, "cost": 4.4}
    }
    assert not needs_update(stored, progressed, age_seconds=10, refresh_seconds=40)
    assert needs_update(stored, progressed, age_seconds=41, refresh_seconds=40)
    assert needs_update(stored, progressed, age_seconds=None, refresh_seconds=40)
    sealed = {"spec": {**progressed["spec"], "final": True}}
    assert needs_update(stored, sealed, age_seconds=1, refresh_seconds=40)
    repriced = {"spec": {**progressed["spec"], "rate": 8.0}}
    assert needs_update(stored, repriced, age_seconds=1, refresh_seconds=40)


def test_a_sealed_record_of_a_sampled_job_carries_its_active_gpu_hours() -> None:
    end = T0 + dt.timedelta(minutes=30)
    job = _job("Succeeded", end=end)
    args = {"tenant": "a", "rate": Rate("h100", "H100", 4.0), "gpu_type": "H100"}
    assert "activeGPUHours" not in (build_usage_record(job, now=end, **args) or {})["spec"]
    metrics = {
        "field": "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        "samples": 60,
        "lastSampleTime": end.isoformat(),
        "lastActivityPercent": 20.0,
        "meanActivityPercent": 25.0,
    }
    body = job.model_dump(by_alias=True, mode="json", exclude_none=True)
    body["status"]["metrics"] = metrics
    sampled = GryviaAIJob.model_validate(body)
    rec = build_usage_record(sampled, now=end, **args)
    assert rec is not None and rec["spec"]["gpuHours"] == 4.0  # 8 GPUs x 0.5 h
    assert rec["spec"]["activeGPUHours"] == 1.0  # a quarter of them busy
    body = _job("Running").model_dump(by_alias=True, mode="json", exclude_none=True)
    body["status"]["metrics"] = metrics
    running = GryviaAIJob.model_validate(body)
    assert "activeGPUHours" not in (build_usage_record(running, now=end, **args) or {})["spec"]


def test_a_record_carries_the_submitter_the_project_and_the_jobs_labels() -> None:
    job = _job()
    job.metadata.labels = {"gryvia.io/project": "llm", "env": "prod"}
    job.metadata.annotations = {"gryvia.io/submitted-by": "ada"}
    now = T0 + dt.timedelta(minutes=30)
    spec = build_usage_record(
        job, tenant="a", rate=Rate("h100", "H100", 4.0), gpu_type="H100", now=now
    )["spec"]  # type: ignore[index]
    assert (spec["user"], spec["project"]) == ("ada", "llm")
    assert spec["jobLabels"] == {"gryvia.io/project": "llm", "env": "prod"}
    plain = build_usage_record(
        _job(), tenant="a", rate=Rate("h100", "H100", 4.0), gpu_type="H100", now=now
    )["spec"]  # type: ignore[index]
    assert not {"user", "project", "jobLabels"} & set(plain)
