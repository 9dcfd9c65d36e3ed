"""Cost per workspace (metered: usage records) and per inference service (estimated from the
running replicas' time x GPUs x the catalog rate of their node's GPU type)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from gryvia_cli.core.workloadcost import (
    basis_text,
    service_costs,
    workload_costs,
    workspace_costs,
)
from gryvia_operator.api import GryviaGpuSku, GryviaUsageRecord
from gryvia_operator.api.inference import GryviaInferenceService
from gryvia_operator.api.pricing import default_catalog

NOW = dt.datetime(2026, 12, 11, 12, 0, tzinfo=dt.UTC)
SKUS: list[GryviaGpuSku] = default_catalog()  # H100 8.00, L40 2.50 per GPU-hour


def _ts(value: dt.datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def record(
    name: str, start: dt.datetime, hours: float, gpus: int = 2, rate: float = 8.0, **kw: Any
) -> GryviaUsageRecord:
    labels = {"gryvia.io/workspace": kw["workspace"]} if "workspace" in kw else {}
    return GryviaUsageRecord.model_validate(
        {
            "metadata": {"name": name, "namespace": kw.get("ns", "ml"), "labels": labels},
            "spec": {
                "tenant": "acme", "job": kw.get("workspace", name), "jobUID": f"u-{name}",
                "sku": "h100-80g", "gpuType": "H100", "gpus": gpus, "rate": rate,
                "currency": "USD", "start": _ts(start),
                "end": _ts(start + dt.timedelta(hours=hours)),
                "gpuHours": gpus * hours, "cost": gpus * hours * rate,
                "final": kw.get("final", True),
            },
        }
    )  # fmt: skip


def service(name: str, gpus: int, ns: str = "ml") -> GryviaInferenceService:
    return GryviaInferenceService.model_validate(
        {"metadata": {"name": name, "namespace": ns}, "spec": {"image": "srv:1", "gpus": gpus}}
    )


def pod(service: str, node: str, started: dt.datetime | None, phase: str = "Running") -> Any:
    status: dict[str, Any] = {"phase": phase}
    if started is not None:
        status["startTime"] = _ts(started)
    return {
        "metadata": {
            "name": f"{service}-{node}",
            "namespace": "ml",
            "labels": {"gryvia.io/inference-service": service},
        },
        "spec": {"nodeName": node},
        "status": status,
    }


def test_workspaces_cost_what_their_records_metered_in_the_month() -> None:
    records = [
        record("usage-a", NOW - dt.timedelta(hours=10), 2, workspace="dev"),
        record("usage-a-1", NOW - dt.timedelta(hours=3), 3, workspace="dev", final=False),
        # a run from Nov 30 22:00 to Dec 1 02:00: half of it in December
        record("usage-b", dt.datetime(2026, 11, 30, 22, tzinfo=dt.UTC), 4, gpus=1, workspace="nb"),
        record("usage-job", NOW - dt.timedelta(hours=5), 1),  # a job's record: not a workspace
    ]
    found = {w.name: w for w in workspace_costs(records, NOW)}
    assert set(found) == {"dev", "nb"}
    dev = found["dev"]
    assert (dev.gpu_hours, dev.cost) == (10.0, 80.0)
    assert dev.metered and dev.running and dev.kind == "workspace" and dev.gpu_type == "H100"
    nb = found["nb"]
    assert nb.gpu_hours == pytest.approx(2.0) and nb.cost == pytest.approx(16.0)
    assert not nb.running
    assert basis_text(dev) == "metered, running" and basis_text(nb) == "metered"


def test_a_service_costs_its_running_replicas_hours_times_gpus_times_the_node_rate() -> None:
    pods = [
        pod("llm", "h100-0", NOW - dt.timedelta(hours=3)),
        pod("llm", "l40-0", NOW - dt.timedelta(hours=2)),
        pod("llm", "h100-1", None, phase="Pending"),  # not running: not counted
        pod("other", "h100-0", NOW - dt.timedelta(hours=9)),
    ]
    types = {"h100-0": "H100", "h100-1": "H100", "l40-0": "L40"}
    (llm,) = service_costs([service("llm", 2)], pods, types, SKUS, NOW)
    assert llm.gpu_hours == pytest.approx(2 * 3 + 2 * 2)
    assert llm.cost == pytest.approx(2 * 3 * 8.0 + 2 * 2 * 2.5)
    assert (llm.replicas, llm.running, llm.metered, llm.priced) == (2, True, False, True)
    assert llm.gpu_type == "H100,L40" and llm.currency == "USD"
    assert basis_text(llm) == "estimate: 2 replicas running"


def test_a_replica_started_last_month_counts_from_the_1st() -> None:
    pods = [pod("llm", "h100-0", dt.datetime(2026, 11, 20, tzinfo=dt.UTC))]
    (llm,) = service_costs([service("llm", 1)], pods, {"h100-0": "H100"}, SKUS, NOW)
    assert llm.gpu_hours == pytest.approx((10 * 24) + 12)


def test_unpriced_and_idle_services() -> None:
    pods = [pod("llm", "cpu-0", NOW - dt.timedelta(hours=1))]
    svcs = [service("llm", 1), service("idle", 4), service("cpu", 0)]
    found = {
        s.name: s
        for s in service_costs(
            svcs, [*pods, pod("cpu", "cpu-0", NOW - dt.timedelta(hours=1))], {}, SKUS, NOW
        )
    }
    assert found["llm"].cost == 0 and found["llm"].gpu_hours == 1 and not found["llm"].priced
    assert basis_text(found["llm"]).endswith("no rate for some")
    assert found["idle"].replicas == 0 and not found["idle"].running and found["idle"].cost == 0
    assert found["cpu"].priced and found["cpu"].gpu_hours == 0


def test_both_lists_are_ordered_by_cost() -> None:
    ws = workspace_costs([record("u", NOW - dt.timedelta(hours=2), 1, workspace="dev")], NOW)
    svc = service_costs(
        [service("llm", 8)], [pod("llm", "n", NOW - dt.timedelta(hours=1))], {"n": "H100"},
        SKUS, NOW,
    )  # fmt: skip
    assert [w.key for w in workload_costs(ws, svc)] == ["service:ml/llm", "workspace:ml/dev"]
