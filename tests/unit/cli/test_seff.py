"""`gryvia seff JOB`: seff's lines for a sampled job (efficiency, memory, GPU-hours and the idle
part's cost), and a plain statement for a job the operator never sampled."""

from __future__ import annotations

import json

from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import ago, h100, make_job, make_pod, run, stamp

SKU = {
    "kind": "GryviaGpuSku",
    "apiVersion": "gryvia.io/v1alpha1",
    "metadata": {"name": "h100"},
    "spec": {"gpuType": "H100", "hourlyRate": 8},
}


def _cluster(metrics: dict[str, object] | None) -> FakeAccess:
    """A job of 8 H100 GPUs that has run for 30 minutes on h0, sampled as `metrics` says."""
    job = stamp(make_job("run").gpus(8).gpu_type("H100").phase("Running").obj(), 3600)
    job["status"]["startTime"] = ago(1800)
    if metrics is not None:
        job["status"]["metrics"] = metrics
    return FakeAccess(h100("h0"), job, make_pod("run-0-abc").gpus(8).on("h0").job("run").obj(), SKU)


SAMPLED = {
    "field": "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "samples": 60,
    "lastSampleTime": ago(10),
    "lastActivityPercent": 30.0,
    "meanActivityPercent": 25.0,
    "p95ActivityPercent": 40.0,
    "peakMemoryUsedBytes": 40 * 1024**3,
}


def test_seff_of_a_sampled_job_prints_gpu_and_memory_efficiency_and_the_idle_cost() -> None:
    out = run(["seff", "run"], _cluster(SAMPLED)).output
    assert "State: RUNNING" in out and "GPUs: 8 x H100" in out
    assert "Job Wall-clock time: 00:30:00" in out
    assert (
        "GPU Efficiency: 25.00% (mean of 60 samples, p95 40.00%, DCGM_FI_PROF_GR_ENGINE_ACTIVE)"
        in out
    )
    assert "GPU Memory Efficiency: 50." in out and "(peak 40960 MiB)" in out
    # 8 GPUs x 0.5 h = 4 GPU-hours, a quarter active; 3 idle GPU-hours x 8 USD
    assert "GPU-hours: 4.0000 allocated, 1.0000 active; idle 3.0000 (24.00 USD)" in out
    data = json.loads(run(["seff", "run", "-o", "json"], _cluster(SAMPLED)).output)
    assert data["gpuEfficiencyPercent"] == 25.0 and data["idleCost"] == 24.0
    assert data["samples"] == 60 and data["nodes"] == ["h0"]


def test_seff_of_a_job_never_sampled_says_so() -> None:
    out = run(["seff", "run"], _cluster(None)).output
    assert "GPU Efficiency: not sampled" in out and "GPU-hours" not in out
    data = json.loads(run(["seff", "run", "-o", "json"], _cluster(None)).output)
    assert data["gpuEfficiencyPercent"] is None and data["idleCost"] is None
