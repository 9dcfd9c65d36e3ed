"""Tenancy benchmark on a fresh sandbox: quota status latency and usage metering at scale.

Run `python -m tests.bench_tenancy` (a few minutes). Two measurements, one operator:

- quota status latency: a GryviaQuota over namespace `bench`; 30 GPU jobs created one after
  the other, each timed from its create call returning until the quota's
  `status.currentUsage.allocatedGPUs` shows it (polled every 50 ms). Target p99 <= 2 s.
- metering: 2000 suspended GryviaAIJobs in namespace `meter` given a `status.startTime` (so
  metering treats them as running, without pods); the time until their 2000
  GryviaUsageRecords exist, the duration of a steady-state metering pass over them (from the
  operator's reconcile latency histogram, controller="metering"; target < 10 s) and the
  operator's peak RSS (target < 400 MB).
"""

from __future__ import annotations

import datetime as dt
import json
import statistics
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.bench_operator import pct, peak_rss_mb
from tests.support.benchbox import kubectl_run as _kubectl
from tests.support.benchbox import operator_sandbox

NODES = "10xL40:4"
GROUP, VERSION = "gryvia.io", "v1alpha1"
QUOTA_NS, METER_NS = "bench", "meter"
QUOTA_JOBS = 30
METER_JOBS, BATCH = 2000, 200
POLL_S = 0.05
QUOTA_P99_TARGET_S = 2.0
PASS_TARGET_S = 10.0
RSS_TARGET_MB = 400.0
PASS_METRIC = "gryvia_operator_reconcile_duration_seconds"
PASS_LABEL = 'controller="metering"'
WRITES_METRIC = "gryvia_operator_api_writes_total"


def _job(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "GryviaAIJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"type": "training", "image": "none", "gpus": 1, "gpuType": "L40", **spec},
    }


class Metrics:
    """Reads the operator's /metrics."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/metrics"

    def text(self) -> str:
        with urllib.request.urlopen(self.url, timeout=10) as r:
            return str(r.read().decode())

    def passes(self) -> tuple[float, int, float]:
        """(sum of metering pass seconds, number of passes, usage-record writes so far)."""
        total, count, writes = 0.0, 0, 0.0
        for line in self.text().splitlines():
            if line.startswith(f"{PASS_METRIC}_sum{{") and PASS_LABEL in line:
                total = float(line.rsplit(" ", 1)[1])
            elif line.startswith(f"{PASS_METRIC}_count{{") and PASS_LABEL in line:
                count = int(float(line.rsplit(" ", 1)[1]))
            elif line.startswith(WRITES_METRIC) and 'kind="GryviaUsageRecord"' in line:
                writes += float(line.rsplit(" ", 1)[1])
        return total, count, writes


def _api(kubeconfig: Path) -> Any:
    from kubernetes import client, config

    configuration = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    configuration.connection_pool_maxsize = 8
    return client.CustomObjectsApi(client.ApiClient(configuration))


def _allocated(api: Any) -> int | None:
    quota = api.get_cluster_custom_object(GROUP, VERSION, "gryviaquotas", QUOTA_NS)
    usage = (quota.get("status") or {}).get("currentUsage") or {}
    value = usage.get("allocatedGPUs")
    return value if isinstance(value, int) else None


def bench_quota(api: Any) -> list[float]:
    """Seconds from each job's create call returning until the quota's allocatedGPUs shows it."""
    api.create_cluster_custom_object(
        GROUP,
        VERSION,
        "gryviaquotas",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "GryviaQuota",
            "metadata": {"name": QUOTA_NS},
            "spec": {"team": QUOTA_NS, "namespaces": [QUOTA_NS], "gpuQuota": {"maxGPUs": 1000}},
        },
    )
    deadline = time.monotonic() + 30
    while _allocated(api) != 0:
        if time.monotonic() > deadline:
            raise RuntimeError("the quota never got a status")
        time.sleep(0.2)
    latencies = []
    for i in range(1, QUOTA_JOBS + 1):
        body = _job(f"q-{i:02d}", QUOTA_NS, command=["sleep", "600"])
        api.create_namespaced_custom_object(GROUP, VERSION, QUOTA_NS, "gryviaaijobs", body)
        start = time.perf_counter()
        deadline = start + 30
        while (_allocated(api) or 0) < i:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"allocatedGPUs never reached {i} within 30 s")
            time.sleep(POLL_S)
        latencies.append(time.perf_counter() - start)
    api.delete_collection_namespaced_custom_object(GROUP, VERSION, QUOTA_NS, "gryviaaijobs")
    return latencies


def _record_hours(api: Any) -> dict[str, float]:
    """Usage record name -> spec.gpuHours in the metering namespace."""
    resp = api.list_namespaced_custom_object(
        GROUP, VERSION, METER_NS, "gryviausagerecords", _preload_content=False
    )
    items = json.loads(resp.data)["items"]
    return {i["metadata"]["name"]: float(i["spec"].get("gpuHours", 0.0)) for i in items}


def _record_count(api: Any) -> int:
    resp = api.list_namespaced_custom_object(
        GROUP, VERSION, METER_NS, "gryviausagerecords", _preload_content=False
    )
    return len(json.loads(resp.data)["items"])


def _quiet(metrics: Metrics, seconds: float = 3.0, timeout: float = 300) -> tuple[float, int]:
    """Wait until no metering pass ran and no record was written for `seconds`; (sum, count)."""
    deadline = time.monotonic() + timeout
    last = metrics.passes()
    since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = metrics.passes()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return last[0], last[1]
    raise RuntimeError("metering never went quiet")


def bench_metering(api: Any, kubectl: list[str], metrics: Metrics) -> dict[str, float]:
    """2000 'running' suspended jobs: time to all records, steady-state pass seconds."""
    names = [f"m-{i:04d}" for i in range(METER_JOBS)]
    t0 = time.perf_counter()
    for chunk in range(0, METER_JOBS, BATCH):
        items = [_job(n, METER_NS, suspend=True) for n in names[chunk : chunk + BATCH]]
        _kubectl(
            kubectl, "create", "-f", "-", body={"apiVersion": "v1", "kind": "List", "items": items}
        )
    created = time.perf_counter() - t0

    started = (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def patch(name: str) -> None:
        api.patch_namespaced_custom_object_status(
            GROUP, VERSION, METER_NS, "gryviaaijobs", name, {"status": {"startTime": started}}
        )

    t1 = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(patch, names))
    patched_at = time.perf_counter()
    patched = patched_at - t1
    before_sum, before_count, _ = metrics.passes()

    first_seen = None
    deadline = patched_at + 600
    while True:
        count = _record_count(api)
        if count and first_seen is None:
            first_seen = time.perf_counter()
        if count >= METER_JOBS:
            all_at = time.perf_counter()
            break
        if time.perf_counter() > deadline:
            raise RuntimeError(f"only {count} of {METER_JOBS} usage records after 600 s")
        time.sleep(1.0)

    # Steady state: every open record's running GPU-hours are rewritten within a minute, the
    # writes spread over the passes of that minute. Watch 70 s of passes and check that every
    # record was refreshed in that window.
    create_sum, create_count = _quiet(metrics)
    hours_before = _record_hours(api)
    window_start = time.perf_counter()
    durations: list[float] = []
    last_sum, last_count = create_sum, create_count
    while time.perf_counter() - window_start < 70:
        time.sleep(1.0)
        total, count, _ = metrics.passes()
        if count > last_count:
            durations.append((total - last_sum) / (count - last_count))
            last_sum, last_count = total, count
    hours_after = _record_hours(api)
    refreshed = sum(1 for k, v in hours_after.items() if hours_before.get(k) != v)
    return {
        "create_s": created,
        "patch_s": patched,
        "all_records_s": all_at - patched_at,
        "first_to_last_s": all_at - (first_seen or all_at),
        "creating_pass_s": (create_sum - before_sum) / max(1, create_count - before_count),
        "creating_passes": create_count - before_count,
        "steady_pass_max_s": max(durations, default=0.0),
        "steady_pass_mean_s": statistics.mean(durations) if durations else 0.0,
        "steady_passes": len(durations),
        "refreshed": refreshed,
    }


def report(latencies: list[float], meter: dict[str, float], rss: float) -> None:
    """Print the numbers."""

    def verdict(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    p50, p99 = statistics.median(latencies), pct(latencies, 99)
    print(
        f"quota status after a job change ({len(latencies)} jobs): p50 {p50 * 1000:.0f} ms, "
        f"p99 {p99 * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms "
        f"(target p99 <= {QUOTA_P99_TARGET_S:.0f} s: {verdict(p99 <= QUOTA_P99_TARGET_S)})"
    )
    print(
        f"metering {METER_JOBS} running jobs: created in {meter['create_s']:.1f} s, startTime "
        f"patched in {meter['patch_s']:.1f} s; all {METER_JOBS} usage records "
        f"{meter['all_records_s']:.1f} s after the patches (first to last record "
        f"{meter['first_to_last_s']:.1f} s; creating pass {meter['creating_pass_s']:.1f} s "
        f"avg over {meter['creating_passes']:.0f})"
    )
    steady = meter["steady_pass_max_s"]
    print(
        f"  steady state over 70 s: {meter['steady_passes']:.0f} metering passes, longest "
        f"{steady:.1f} s, mean {meter['steady_pass_mean_s']:.1f} s (target < {PASS_TARGET_S:.0f} s:"
        f" {verdict(steady < PASS_TARGET_S)}); {meter['refreshed']:.0f} of {METER_JOBS} open "
        "records refreshed in the window (each within a minute)"
    )
    print(
        f"  operator peak RSS: {rss:.0f} MB (target < {RSS_TARGET_MB:.0f} MB: "
        f"{verdict(rss < RSS_TARGET_MB)})"
    )


def main() -> int:
    """Run both benchmarks on a fresh sandbox and print the numbers."""
    with operator_sandbox("tenancy", NODES, (QUOTA_NS, METER_NS)) as box:
        metrics = Metrics(box.metrics_port)
        api = _api(box.kubeconfig)
        print(f"quota status latency, {QUOTA_JOBS} jobs ...", file=sys.stderr)
        latencies = bench_quota(api)
        print(f"metering {METER_JOBS} running jobs ...", file=sys.stderr)
        meter = bench_metering(api, box.kubectl, metrics)
        rss = peak_rss_mb(box.operator.pid)
        report(latencies, meter, rss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
