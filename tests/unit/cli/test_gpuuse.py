"""A job's GPU use from exporter readings: only its pods' GPUs, in replica order, summed up."""

from __future__ import annotations

from gryvia_cli.core.gpuuse import gpu_faults, job_gpu_use, summary_text
from gryvia_operator.api.dcgm import (
    FIELD_ECC_DBE,
    FIELD_ENGINE_ACTIVE,
    FIELD_FB_USED,
    FIELD_GPU_UTIL,
    FIELD_POWER_USAGE,
    FIELD_XID_ERRORS,
    GpuReading,
)


def _gpu(pod: str, gpu: int, ratio: float, namespace: str = "team") -> GpuReading:
    values = {FIELD_ENGINE_ACTIVE: ratio, FIELD_FB_USED: 100.0 * gpu, FIELD_POWER_USAGE: 300.0}
    return GpuReading("node-1", gpu, f"GPU-{gpu}", namespace=namespace, pod=pod, values=values)


def test_the_jobs_gpus_in_replica_order_and_nobody_elses() -> None:
    readings = [
        _gpu("job-1-x", 1, 0.02),
        _gpu("job-0-y", 0, 0.99),
        _gpu("other", 2, 0.5),
        _gpu("job-0-y", 3, 0.97, namespace="elsewhere"),
        _gpu("", 4, 0.0),
    ]
    rows = job_gpu_use(readings, "team", {"job-0-y": 0, "job-1-x": 1})
    assert [(u.replica, u.pod, u.gpu, u.activity) for u in rows] == [
        (0, "job-0-y", 0, 99.0),
        (1, "job-1-x", 1, 2.0),
    ]
    assert rows[0].as_dict()["field"] == FIELD_ENGINE_ACTIVE
    text = summary_text(rows)
    assert text.startswith(f"mean 50.5 % over 2 GPU(s) ({FIELD_ENGINE_ACTIVE})")
    assert "lowest 2.0 % (replica 1, GPU 1)" in text
    assert "memory 100 MiB peak" in text and "600 W" in text


def test_no_activity_served_is_no_summary() -> None:
    reading = GpuReading("n", 0, "u", namespace="t", pod="p", values={FIELD_FB_USED: 5.0})
    rows = job_gpu_use([reading], "t", {"p": None})
    assert rows[0].activity is None and summary_text(rows) == ""
    util = GpuReading("n", 0, "u", namespace="t", pod="p", values={FIELD_GPU_UTIL: 40.0})
    assert summary_text(job_gpu_use([util], "t", {"p": None})).startswith("mean 40.0 % over 1")


def test_gpus_reporting_an_xid_or_double_bit_ecc_are_faults_with_their_holder() -> None:
    readings = [
        GpuReading("n2", 0, "u0", values={FIELD_XID_ERRORS: 0.0}),
        GpuReading("n1", 3, "u3", namespace="t", pod="p", values={FIELD_XID_ERRORS: 79.0}),
        GpuReading("n1", 1, "u1", values={FIELD_XID_ERRORS: 48.0, FIELD_ECC_DBE: 2.0}),
    ]
    faults = gpu_faults(readings)
    assert [(f.node, f.gpu, f.error, f.pod) for f in faults] == [
        ("n1", 1, "XID 48, 2 double-bit ECC", ""),
        ("n1", 3, "XID 79", "p"),
    ]
    assert faults[1].as_dict("train") == {
        "node": "n1",
        "gpu": 3,
        "uuid": "u3",
        "error": "XID 79",
        "namespace": "t",
        "pod": "p",
        "job": "train",
    }


def test_a_gpu_node_with_a_failed_gpu_is_unhealthy_and_says_which() -> None:
    from gryvia_cli.core.nodes import failed_gpus, gpu_nodes, phase_cell
    from tests.unit.cli.helpers import h100

    status = {
        "gpuStatus": [
            {"index": 0, "health": "Healthy"},
            {"index": 3, "health": "Failed", "xid": 79, "eccDoubleBit": 2},
        ]
    }
    assert failed_gpus(status) == ("GPU 3: XID 79, 2 double-bit ECC",)
    node = h100("gpu-h100-0")
    registration = {
        "metadata": {"name": "gpu-h100-0"},
        "spec": {"nodeName": "gpu-h100-0", "gpuType": "H100", "gpuCount": 8},
        "status": {"phase": "Ready"} | status,
    }
    (row,) = gpu_nodes([registration], [node])
    assert not row.healthy and row.gpu_faults == ("GPU 3: XID 79, 2 double-bit ECC",)
    assert phase_cell(row).text == "Ready (GPU 3: XID 79, 2 double-bit ECC)"


def test_a_sparkline_has_one_mark_per_sample_lowest_to_highest_right_aligned() -> None:
    from gryvia_cli.core.gpuuse import sparkline

    assert sparkline([0, 50, 100]) == "▁▅█"
    assert sparkline([-5, 140]) == "▁█"  # clamped
    assert sparkline([100], width=4) == "   █"


def test_replica_lines_read_the_operators_ring_and_skip_what_it_does_not_write() -> None:
    from gryvia_cli.core.gpuuse import replica_lines

    metrics = {
        "replicas": [
            {"replica": 1, "recentActivityPercent": [10, 30]},
            {"replica": 0, "recentActivityPercent": [90, 100, 95]},
            {"replica": "x", "recentActivityPercent": [1]},
            {"replica": 2, "recentActivityPercent": []},
            "junk",
        ]
    }
    lines = replica_lines(metrics)
    assert [(line.replica, line.values) for line in lines] == [(0, (90, 100, 95)), (1, (10, 30))]
    assert lines[1].last == 30 and lines[1].mean == 20.0
    assert replica_lines({}) == []
