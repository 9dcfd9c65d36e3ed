"""Job summaries, GPU text, rows and pod helpers (pure)."""

from __future__ import annotations

from gryvia_cli.core.cells import Marked
from gryvia_cli.core.jobs import (
    durations,
    gpu_text,
    job_of_pod,
    job_row,
    replica_of_pod,
    sort_pods,
    summarize_job,
)
from tests.unit.cli.helpers import NOW, ago, make_job, make_pod, stamp


def test_summary_of_a_distributed_job() -> None:
    obj = stamp(
        make_job("ddp")
        .gpus(8)
        .gpu_type("H100")
        .distributed(4, gpus_per_node=4)
        .phase("Running")
        .obj(),
        600,
    )
    job = summarize_job(obj)
    assert (job.pods, job.gpus_per_pod, job.total_gpus) == (4, 4, 16)
    assert job.gpu_type == "H100" and job.type_key == "H100"
    assert gpu_text(job) == "4 x 4 H100 (16 GPUs)"


def test_summary_tolerates_garbage() -> None:
    job = summarize_job({"metadata": None, "spec": {"gpus": "x", "gpuType": 7}, "status": []})
    assert job.name == "" and job.gpus_per_pod == 0 and job.cpu_only and job.phase == "Pending"
    assert gpu_text(job) == "CPU only"


def test_any_type_is_unconstrained_and_cancel_annotation_is_seen() -> None:
    obj = make_job("a").gpus(2).gpu_type("any").annotate("gryvia.io/cancel", "true").obj()
    job = summarize_job(obj)
    assert job.gpu_type == "" and job.type_key == "any" and job.cancel_requested
    assert gpu_text(job) == "2 x any"


def test_durations_waiting_and_running() -> None:
    obj = stamp(make_job("a").phase("Running").status(startTime=ago(60)).obj(), 300)
    times = durations(summarize_job(obj), NOW)
    assert times == {"waiting": 240.0, "running": 60.0}
    done = stamp(
        make_job("b").phase("Failed").status(startTime=ago(60), completionTime=ago(30)).obj(), 300
    )
    assert durations(summarize_job(done), NOW) == {"waiting": 240.0, "running": 30.0}


def test_job_row_plain_and_wide() -> None:
    obj = stamp(make_job("a").gpus(8).gpu_type("H100").phase("Running").obj(), 4 * 3600)
    row = job_row(summarize_job(obj), NOW)
    assert row[:5] == ["a", "-", "training", 8, "H100"]
    assert row[5] == Marked("Running", "ok") and row[6] == "4h"
    wide = job_row(summarize_job(obj), NOW, wide=True)
    # 14 columns: issue 13 added COST after NODES, issue 16 USER after NAME, issue 36 GPU%
    assert len(wide) == 14 and wide[7:9] == [1, "0/1"] and wide[11] == "-"  # never sampled
    metrics = {"lastActivityPercent": 96.4, "meanActivityPercent": 41.0}
    sampled = obj | {"status": obj["status"] | {"metrics": metrics}}
    assert job_row(summarize_job(sampled), NOW, wide=True)[11] == "96%"  # running: last sample
    ended = sampled | {"status": sampled["status"] | {"phase": "Succeeded"}}
    assert job_row(summarize_job(ended), NOW, wide=True)[11] == "41%"  # ended: the run's mean
    alice = obj | {"metadata": obj["metadata"] | {"annotations": {"gryvia.io/submitted-by": "al"}}}
    assert job_row(summarize_job(alice), NOW)[1] == "al"


def test_pod_job_labels_and_replicas() -> None:
    pod = make_pod("x-1-abcde").obj()
    pod["metadata"]["labels"]["batch.kubernetes.io/job-name"] = "x"
    pod["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": "1"}
    assert job_of_pod(pod) == "x" and replica_of_pod(pod) == 1
    sts = make_pod("srv-training-2").job("srv").obj()
    assert job_of_pod(sts) == "srv" and replica_of_pod(sts) == 2
    first = make_pod("srv-training-0").job("srv").obj()
    assert [p["metadata"]["name"] for p in sort_pods([sts, first])] == [
        "srv-training-0",
        "srv-training-2",
    ]
