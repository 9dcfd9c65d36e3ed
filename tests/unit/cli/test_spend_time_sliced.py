"""A job on time-sliced GPUs: its hourly burn is what metering bills (physical GPUs), the same
rate its cost so far accrues at (docs/gpu-sharing.md "Billing counts physical GPUs")."""

from __future__ import annotations

import json

from tests.unit.cli.helpers import ago, run
from tests.unit.cli.test_newcomer_fixes import _placed_elsewhere
from tests.unit.cli.test_tenancy_core import record


def test_status_per_hour_of_a_time_sliced_job_counts_physical_gpus() -> None:
    # 8 units on nodes with nvidia.com/gpu.replicas=4: billed as 2 GPUs at 8.00 USD.
    sliced = record("ml", "run", ago(1800), 1.0, rate=8.0, sku_name="h100", namespace="ml")
    sliced["spec"]["physicalGPUs"] = 2.0
    fake = _placed_elsewhere().add(sliced)
    fake.objects[2]["metadata"]["uid"] = "uid-run"
    data = json.loads(run(["status", "run", "-o", "json"], fake).output)
    assert data["cost"] == {"soFar": 8.0, "perHour": 16.0, "currency": "USD", "metered": True}
    assert "8.00 USD so far (metered, 16.00 USD/hour)" in run(["status", "run"], fake).output


def test_status_per_hour_of_a_whole_gpu_job_is_unchanged() -> None:
    whole = record("ml", "run", ago(1800), 4.0, rate=8.0, sku_name="h100", namespace="ml")
    fake = _placed_elsewhere().add(whole)
    fake.objects[2]["metadata"]["uid"] = "uid-run"
    data = json.loads(run(["status", "run", "-o", "json"], fake).output)
    assert data["cost"]["perHour"] == 64.0
