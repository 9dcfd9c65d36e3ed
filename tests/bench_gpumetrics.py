"""GPU metrics benchmark (issue 36).

1. The operator's sampling pass at 500 GPU nodes x 8 GPUs and 10,000 jobs (4,000 of them
   running on one GPU each, the rest waiting or ended in the index): the CPU of one pass's own
   work (parsing 500 exporters' text, mapping GPUs to jobs, folding 4,000 summaries and
   encoding their status patches; the API calls themselves are not in it), and its share of
   one core at the default 30 s interval.
2. `gryvia status JOB` with the GPU read (the dcgm-exporter pods through the pod proxy)
   against the same read without it, on a sandbox with a two-replica job running: medians of
   20 runs each, in process; target: within 1.5x.

`python -m tests.bench_gpumetrics` (about a minute).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from datetime import UTC, datetime

from gryvia_operator.api.dcgm import (
    FIELD_ENGINE_ACTIVE,
    FIELD_FB_FREE,
    FIELD_FB_USED,
    FIELD_GPU_UTIL,
    FIELD_POWER_USAGE,
    FIELD_XID_ERRORS,
    GpuReading,
    parse,
    render,
)
from gryvia_operator.api.jobmetrics import JobGpuMetrics
from gryvia_operator.reconcile.gpumetrics import fold, job_samples

NODES, GPUS, JOBS, RUNNING = 500, 8, 10_000, 4_000
INTERVAL_S = 30.0
RATIO_TARGET = 1.5


def exporter_texts() -> list[str]:
    """What 500 exporters serve: every GPU held by a running single-GPU job's pod."""
    texts = []
    for node in range(NODES):
        readings = []
        for gpu in range(GPUS):
            job = node * GPUS + gpu
            values = {
                FIELD_ENGINE_ACTIVE: (job % 100) / 100,
                FIELD_GPU_UTIL: float(job % 100),
                FIELD_FB_USED: 40000.0,
                FIELD_FB_FREE: 41559.0,
                FIELD_POWER_USAGE: 400.0,
                FIELD_XID_ERRORS: 0.0,
            }
            readings.append(
                GpuReading(
                    f"gpu-h100-{node}",
                    gpu,
                    f"GPU-{job}",
                    "NVIDIA-H100-80GB-HBM3",
                    namespace=f"team-{job % 50}",
                    pod=f"job-{job}-0-abcde",
                    container="main",
                    values=values,
                )
            )
        texts.append(render(readings))
    return texts


def sampling_pass(
    texts: list[str],
    pod_jobs: dict[tuple[str, str], str],
    previous: dict[tuple[str, str], JobGpuMetrics],
) -> int:
    """One pass's own work; returns the number of job summaries written."""
    readings = [r for text in texts for r in parse(text)]
    now = datetime.now(UTC)
    written = 0
    for key, sample in job_samples(readings, pod_jobs).items():
        summary = fold(previous.get(key), sample, now)
        previous[key] = summary
        body = {
            "status": {"metrics": summary.model_dump(by_alias=True, mode="json", exclude_none=True)}
        }
        json.dumps(body)
        written += 1
    return written


def bench_pass() -> None:
    """Print the CPU of one sampling pass and its share of a core at 30 s."""
    texts = exporter_texts()
    pod_jobs = {(f"team-{j % 50}", f"job-{j}-0-abcde"): f"job-{j}" for j in range(JOBS)}
    previous: dict[tuple[str, str], JobGpuMetrics] = {}
    sampling_pass(texts, pod_jobs, previous)  # warm: every job has a summary to fold onto
    cpu = []
    for _ in range(5):
        start = time.process_time()
        written = sampling_pass(texts, pod_jobs, previous)
        cpu.append(time.process_time() - start)
    median = statistics.median(cpu)
    print(
        f"sampling pass at {NODES} nodes x {GPUS} GPUs, {JOBS} jobs ({written} sampled): "
        f"{median:.2f} s CPU (median of 5; min {min(cpu):.2f}, max {max(cpu):.2f}), "
        f"{100 * median / INTERVAL_S:.1f} % of one core at a {INTERVAL_S:.0f} s interval"
    )


def bench_status() -> None:
    """Print `status JOB` with and without the GPU read, and their ratio."""
    from gryvia_cli.cli.session import Session
    from gryvia_cli.views.job import job_snapshot
    from tests.support.benchbox import kubectl_run, operator_sandbox
    from tests.support.wait import wait_for

    job = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAIJob",
        "metadata": {"name": "train", "namespace": "bench"},
        "spec": {
            "type": "training",
            "gpus": 1,
            "gpuType": "H100",
            "image": "none",
            "command": ["sleep", "3600"],
            "distributed": {"enabled": True, "nodes": 2},
        },
    }
    with operator_sandbox("gpum", "2xH100:8", ["bench"]) as box:
        kubectl_run(box.kubectl, "apply", "-f", "-", body=job)
        state = Session(kubeconfig=box.kubeconfig)
        wait_for(
            lambda: bool(job_snapshot(state, "train", "bench").gpus),
            timeout=120,
            what="the job's GPUs reported",
        )
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(20):
            for gpus in (True, False):
                start = time.perf_counter()
                job_snapshot(state, "train", "bench", gpus=gpus)
                times[gpus].append(time.perf_counter() - start)
        with_gpus, without = statistics.median(times[True]), statistics.median(times[False])
        ratio = with_gpus / without
        verdict = "ok" if ratio <= RATIO_TARGET else "OVER TARGET"
        print(
            f"status JOB: {1000 * with_gpus:.0f} ms with GPU use, {1000 * without:.0f} ms "
            f"without (medians of 20): {ratio:.2f}x (target <= {RATIO_TARGET}x: {verdict})"
        )


def main() -> int:
    """Run both benchmarks."""
    bench_pass()
    bench_status()
    return 0


if __name__ == "__main__":
    sys.exit(main())
