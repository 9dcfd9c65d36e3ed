"""GPU sampling's pure half: a job's sample from the readings of its pods' GPUs, and the
summary in `status.metrics` folded sample by sample."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gryvia_operator.api.dcgm import (
    FIELD_ENGINE_ACTIVE,
    FIELD_FB_USED,
    FIELD_GPU_UTIL,
    FIELD_TENSOR_ACTIVE,
    GpuReading,
)
from gryvia_operator.reconcile.gpumetrics import (
    BINS,
    JobSample,
    fold,
    job_samples,
    node_gpu_status,
    p95,
    stall_message,
)

T0 = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def _gpu(pod: str, gpu: int, **values: float) -> GpuReading:
    return GpuReading("node", gpu, f"GPU-{gpu}", namespace="team", pod=pod, values=values)


def test_a_jobs_sample_is_the_mean_over_its_pods_gpus_and_the_most_memory_of_one() -> None:
    readings = [
        _gpu("train-0-a", 0, **{FIELD_ENGINE_ACTIVE: 1.0, FIELD_FB_USED: 100.0}),
        _gpu("train-1-b", 1, **{FIELD_ENGINE_ACTIVE: 0.5, FIELD_TENSOR_ACTIVE: 0.2}),
        _gpu("train-1-b", 2, **{FIELD_FB_USED: 300.0}),  # no activity yet: left out
        _gpu("other-0", 3, **{FIELD_ENGINE_ACTIVE: 0.0}),  # not a job's pod
    ]
    pod_jobs = {("team", "train-0-a"): "train", ("team", "train-1-b"): "train"}
    (key, sample), *rest = job_samples(readings, pod_jobs).items()
    assert not rest and key == ("team", "train")
    assert sample == JobSample(75.0, FIELD_ENGINE_ACTIVE, 20.0, 100 * 1024 * 1024, 2)


def test_the_summary_keeps_a_running_mean_max_and_a_p95_from_its_histogram() -> None:
    summary = None
    for minute, activity in enumerate([0.0] * 19 + [100.0]):
        summary = fold(summary, JobSample(activity, FIELD_GPU_UTIL, None, None, 1), T0)
        summary = summary.model_copy(update={"last_sample_time": T0 + timedelta(minutes=minute)})
    assert summary is not None
    assert summary.samples == 20 and summary.mean_activity_percent == 5.0
    assert summary.max_activity_percent == 100.0
    assert summary.p95_activity_percent == 5.0  # 19 of 20 samples are in the lowest bin
    assert summary.activity_histogram is not None and len(summary.activity_histogram) == BINS
    busy = fold(None, JobSample(99.5, FIELD_GPU_UTIL, 40.0, 10, 2), T0)
    assert busy.p95_activity_percent == 99.5  # the bin's edge (100) capped by the max
    assert p95([0] * BINS) is None


def test_tensor_mean_and_peak_memory_carry_over_and_a_new_field_starts_afresh() -> None:
    first = fold(None, JobSample(50.0, FIELD_ENGINE_ACTIVE, 40.0, 500, 1), T0)
    second = fold(first, JobSample(70.0, FIELD_ENGINE_ACTIVE, None, 200, 1), T0)
    assert (second.mean_activity_percent, second.tensor_activity_percent) == (60.0, 40.0)
    assert second.peak_memory_used_bytes == 500 and second.last_activity_percent == 70.0
    moved = fold(second, JobSample(10.0, FIELD_GPU_UTIL, None, None, 1), T0)
    assert moved.samples == 1 and moved.field == FIELD_GPU_UTIL
    assert moved.mean_activity_percent == 10.0


def test_idle_since_starts_at_the_first_idle_sample_and_ends_at_an_active_one() -> None:
    first = fold(None, JobSample(1.0, FIELD_GPU_UTIL, None, None, 1), T0)
    later = fold(first, JobSample(0.0, FIELD_GPU_UTIL, None, None, 1), T0 + timedelta(minutes=5))
    assert first.idle_since == T0 and later.idle_since == T0
    active = fold(later, JobSample(60.0, FIELD_GPU_UTIL, None, None, 1), T0 + timedelta(hours=1))
    assert active.idle_since is None


def test_a_job_is_stalled_only_when_idle_and_silent_for_the_window() -> None:
    idle = fold(None, JobSample(0.5, FIELD_GPU_UTIL, None, None, 1), T0)
    later = T0 + timedelta(minutes=31)
    message = stall_message(idle, T0 - timedelta(minutes=2), None, later, 1800)
    assert message is not None
    assert "GPU activity 0.5 % (DCGM_FI_DEV_GPU_UTIL) since 2026-12-04T12:00:00Z" in message
    assert "no log line since 2026-12-04T11:58:00Z" in message
    assert stall_message(idle, T0 + timedelta(minutes=10), None, later, 1800) is None  # logs
    assert stall_message(idle, None, T0, later, 1800) is not None  # silent since its start
    assert stall_message(idle, None, None, later, 1800) is None
    assert stall_message(idle, None, T0, T0 + timedelta(minutes=20), 1800) is None


def test_a_nodes_gpu_status_marks_the_gpu_with_an_xid_or_ecc_errors_failed() -> None:
    readings = [
        GpuReading(
            "n1",
            1,
            "u1",
            values={
                "DCGM_FI_DEV_XID_ERRORS": 79.0,
                FIELD_FB_USED: 10.0,
                "DCGM_FI_DEV_FB_FREE": 90.0,
            },
        ),
        GpuReading("n1", 0, "u0", values={"DCGM_FI_DEV_XID_ERRORS": 0.0}),
        GpuReading("n2", 0, "v0", values={"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": 3.0}),
    ]
    assert node_gpu_status(readings) == {
        "n1": [
            {"index": 0, "uuid": "u0", "health": "Healthy"},
            {"index": 1, "uuid": "u1", "health": "Failed", "memoryTotal": 100.0, "xid": 79},
        ],
        "n2": [{"index": 0, "uuid": "v0", "health": "Failed", "eccDoubleBit": 3}],
    }


def test_each_replicas_sample_is_the_mean_over_its_own_gpus() -> None:
    readings = [
        _gpu("train-0-a", 0, **{FIELD_ENGINE_ACTIVE: 1.0}),
        _gpu("train-0-a", 1, **{FIELD_ENGINE_ACTIVE: 0.5}),
        _gpu("train-1-b", 2, **{FIELD_ENGINE_ACTIVE: 0.1}),
        _gpu("train-x", 3, **{FIELD_ENGINE_ACTIVE: 0.9}),  # no replica number: job mean only
    ]
    pods = {("team", p): "train" for p in ("train-0-a", "train-1-b", "train-x")}
    replicas = {("team", "train-0-a"): 0, ("team", "train-1-b"): 1}
    sample = job_samples(readings, pods, replicas)[("team", "train")]
    assert sample.replicas == {0: 75.0, 1: 10.0} and sample.activity_percent == 62.5


def test_each_replica_keeps_a_ring_of_its_last_twenty_activities_oldest_first() -> None:
    summary = None
    for step in range(25):
        replicas = {0: float(step), 1: 100.0} if step % 2 == 0 else {0: float(step)}
        summary = fold(summary, JobSample(step, FIELD_GPU_UTIL, None, None, 2, replicas), T0)
    assert summary is not None and summary.replicas is not None
    zero, one = summary.replicas
    assert zero.replica == 0 and zero.recent_activity_percent == list(range(5, 25))
    assert one.replica == 1 and one.recent_activity_percent == [100] * 13  # read 13 times
    dumped = summary.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert dumped["replicas"][0] == {"replica": 0, "recentActivityPercent": list(range(5, 25))}
    plain = fold(None, JobSample(50.0, FIELD_GPU_UTIL, None, None, 1), T0)
    assert plain.replicas is None  # pods without replica numbers: no rings
