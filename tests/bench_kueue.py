"""Kueue benchmark (issue 19) on a fresh sandbox with Kueue (`sandbox up --kueue`) and the
operator with `--enable-kueue`. Needs the Kueue build (`make kueue-bin`) and root (the sandbox
runs Kueue in its own mount namespace). Run `python -m tests.bench_kueue`.

1. Gang start: tenant `gang` may hold 32 GPUs (its ClusterQueue's nominal quota) and the
   cluster has 4 A100-80G nodes of 8. A 1-node holder runs on one of them; a 4-node x 8-GPU
   job waits (Kueue admits all 4 pods or none). The holder is deleted, and the time from its
   pod being gone (the last needed node free) to all 4 gang pods Running is measured; p50,
   min and max over RUNS runs (BENCH_KUEUE_RUNS, default 10). Issue 19's acceptance: all 4
   pods start within 10 s of each other.
2. Admission throughput: a burst of BURST one-GPU H100 jobs (BENCH_KUEUE_BURST, default 500)
   created as fast as one client can, once into tenant `burst`'s LocalQueue (Kueue admits;
   the tenant has no quota, so its ClusterQueue's nominal is unlimited) and once into a plain
   namespace (Gryvia's own quota gate and placement admit). A job counts as admitted when its
   phase leaves Pending/Queued (its batch Job exists and, for Kueue, is unsuspended): jobs/s
   from the first create to the last admission, and the time to the last admission. The
   cluster has 64 H100 nodes of 8 GPUs (512), so neither path waits for GPUs.

Jobs run `sleep 3600` on kwok's simulated nodes; polls go through the operator's own access
seam every POLL_S (the burst's every BURST_POLL_S). Prints one line per figure.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gryvia_operator.controller.kubeapi import KubeError
from tests.bench_operator import Client
from tests.support.benchbox import operator_sandbox

NODES = "64xH100:8,4xA100-80G:8"
GATE_NS = "bench-gate"
RUNS = int(os.environ.get("BENCH_KUEUE_RUNS", "10"))
BURST = int(os.environ.get("BENCH_KUEUE_BURST", "500"))
POLL_S = 0.1
BURST_POLL_S = 0.5
"""The burst's poll lists every job of the namespace: at 0.1 s, 500 jobs ten times a second took
a fair share of the two cores from the admissions being measured."""
ADMITTED_PHASES = frozenset({"Scheduling", "Running", "Succeeded"})
API = "/apis/gryvia.io/v1alpha1"


def _job(name: str, namespace: str, gpu_type: str, nodes: int = 1, gpus: int = 8) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "type": "training",
        "image": "none",
        "gpus": gpus,
        "gpuType": gpu_type,
        "workloadKind": "job",
        "command": ["sh", "-c", "sleep 3600"],
    }
    if nodes > 1:
        spec["distributed"] = {"enabled": True, "nodes": nodes, "backend": "nccl"}
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAIJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _tenant(name: str, gpus: int | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"deletionPolicy": "Delete"}
    if gpus is not None:
        spec["quotas"] = {"concurrentGPUs": gpus}
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaTenant",
        "metadata": {"name": name},
        "spec": spec,
    }


def _wait(check: Callable[[], Any], timeout: float, what: str, poll: float = POLL_S) -> Any:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        value = check()
        if value:
            return value
        time.sleep(poll)
    raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")


def _jobs(client: Client, namespace: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = client.call("GET", f"{API}/namespaces/{namespace}/gryviaaijobs")[
        "items"
    ]
    return items


def _phase(client: Client, namespace: str, name: str) -> str:
    job = client.call("GET", f"{API}/namespaces/{namespace}/gryviaaijobs/{name}")
    return str((job.get("status") or {}).get("phase") or "")


def _pods(client: Client, namespace: str, job: str) -> list[dict[str, Any]]:
    query = {"labelSelector": f"gryvia.io/job={job}"}
    items: list[dict[str, Any]] = client.call(
        "GET", f"/api/v1/namespaces/{namespace}/pods", query=query
    )["items"]
    return items


def _delete_all(client: Client, namespace: str) -> None:
    try:
        client.call("DELETE", f"{API}/namespaces/{namespace}/gryviaaijobs")
    except KubeError as exc:  # 500 jobs at once can outlast the client's 30 s read timeout
        if exc.status != 0:  # the deletion goes on in the API server; the wait below sees it
            raise
    start = time.perf_counter()
    _wait(
        lambda: (
            not _jobs(client, namespace)
            and not client.call("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]
        ),
        900,  # 500 running jobs: each pod's process stopped and its log saved
        f"the jobs and pods of {namespace} gone",
        BURST_POLL_S,
    )
    took = time.perf_counter() - start
    print(f"   {namespace}: jobs and pods deleted in {took:.0f} s", file=sys.stderr, flush=True)


def _setup_tenant(client: Client, name: str, gpus: int | None) -> None:
    """Create tenant `name` and wait for its LocalQueue. One at a time: every tenant's
    ClusterQueue is in cohort gryvia, so while `burst` (no quota: unlimited nominal) exists the
    gang tenant could borrow from it and Kueue would admit the gang before its nodes are free."""
    client.call("POST", f"{API}/gryviatenants", _tenant(name, gpus))
    for ns in (f"tenant-{name}",):
        _wait(
            lambda ns=ns: _exists(
                client, f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/localqueues/gryvia"
            ),
            120,
            f"the LocalQueue of {ns}",
        )


def _exists(client: Client, path: str) -> bool:
    try:
        client.call("GET", path)
    except Exception:
        return False
    return True


def gang_start(client: Client, runs: int) -> list[float]:
    """Seconds from the holder's pod gone to all 4 gang pods Running, per run."""
    ns = "tenant-gang"
    out = []
    for run in range(runs):
        holder, gang = f"holder-{run}", f"gang-{run}"
        client.call("POST", f"{API}/namespaces/{ns}/gryviaaijobs", _job(holder, ns, "A100-80G"))
        _wait(lambda h=holder: _phase(client, ns, h) == "Running", 120, f"{holder} Running")
        client.call("POST", f"{API}/namespaces/{ns}/gryviaaijobs", _job(gang, ns, "A100-80G", 4))
        _wait(lambda g=gang: _phase(client, ns, g) == "Queued", 60, f"{gang} Queued")
        if _pods(client, ns, gang):
            raise RuntimeError(f"{gang} has pods while Kueue holds it")
        client.call("DELETE", f"{API}/namespaces/{ns}/gryviaaijobs/{holder}")
        _wait(lambda h=holder: not _pods(client, ns, h), 120, f"{holder}'s pod gone")
        freed = time.perf_counter()

        def all_running(g: str = gang) -> bool:
            pods = _pods(client, ns, g)
            running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
            return len(running) == 4

        _wait(all_running, 120, f"4 pods of {gang} Running")
        out.append(time.perf_counter() - freed)
        print(f"   gang run {run + 1}/{runs}: {out[-1]:.2f} s", file=sys.stderr, flush=True)
        _delete_all(client, ns)
    return out


def burst(client: Client, namespace: str, count: int) -> tuple[float, float]:
    """(jobs/s from the first create to the last admission, seconds to the last admission)."""
    names = [f"b-{i:04d}" for i in range(count)]
    start = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        list(
            pool.map(
                lambda n: client.call(
                    "POST",
                    f"{API}/namespaces/{namespace}/gryviaaijobs",
                    _job(n, namespace, "H100", gpus=1),
                ),
                names,
            )
        )

    def admitted() -> bool:
        jobs = _jobs(client, namespace)
        done = [j for j in jobs if (j.get("status") or {}).get("phase") in ADMITTED_PHASES]
        return len(done) >= count

    # with blockAdmission (--kueue-block-admission) Kueue admits one workload at a time, about
    # 2 s each here: allow 5 s a job
    _wait(admitted, 120 + 5 * count, f"{count} jobs admitted in {namespace}", BURST_POLL_S)
    elapsed = time.perf_counter() - start
    return count / elapsed, elapsed


def main() -> None:
    """Run both measurements on one sandbox and print the figures."""
    with operator_sandbox("kq", NODES, [GATE_NS], with_kueue=True) as box:
        client = Client(box.kubeconfig)
        _setup_tenant(client, "gang", 32)
        times = gang_start(client, RUNS)
        print(
            f"gang start (last node free -> 4/4 pods Running), {RUNS} runs: "
            f"p50 {statistics.median(times):.2f} s, min {min(times):.2f} s, "
            f"max {max(times):.2f} s",
            flush=True,
        )
        client.call("DELETE", f"{API}/gryviatenants/gang")
        _setup_tenant(client, "burst", None)
        rate, took = burst(client, "tenant-burst", BURST)
        print(
            f"admission, {BURST} one-GPU jobs through Kueue: {rate:.1f} jobs/s ({took:.1f} s)",
            flush=True,
        )
        _delete_all(client, "tenant-burst")
        rate, took = burst(client, GATE_NS, BURST)
        print(
            f"admission, {BURST} one-GPU jobs through Gryvia's gate: {rate:.1f} jobs/s "
            f"({took:.1f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
