"""Operator benchmark on a fresh sandbox: submit-to-Job latency, burst throughput, peak RSS and
the webhook's added admission latency. Run `python -m tests.bench_operator` (several minutes).

Jobs are suspended (pods never run), so the numbers measure the control plane and the operator,
not the simulated kubelet. Targets: latency p50 <= 100 ms and p99 <= 500 ms at 10 jobs/s;
1000-job burst <= 60 s; peak RSS <= 300 MB with 5000 jobs; webhook p99 <= 20 ms added.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gryvia_operator.api.crd import generate as crdgen
from gryvia_operator.controller.kubeapi import KubeApi, load_configuration
from tests.support.ports import free_port

NODES = "2xH100:8,2xA100-80G:8,2xL40:4,1xcpu"
NS = "bench"
WEBHOOK_CONFIG = "gryvia-validating-bench"


def _job(name: str, *, gpus: int = 0, gpu_type: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "type": "training",
        "gpus": gpus,
        "image": "none",
        "command": ["true"],
        "suspend": True,
    }
    if gpu_type:
        spec["gpuType"] = gpu_type
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAIJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


class Client:
    """Blocking raw calls through the operator's own access seam (one event loop per thread)."""

    def __init__(self, kubeconfig: Path) -> None:
        self.configuration = load_configuration(kubeconfig)
        self.api = KubeApi(self.configuration, workers=16)

    def call(
        self, method: str, path: str, body: Any = None, query: dict[str, str] | None = None
    ) -> Any:
        return self.api._call(method, path, body, query)

    def create_job(self, obj: dict[str, Any], dry_run: bool = False) -> None:
        query = {"dryRun": "All"} if dry_run else None
        self.call("POST", f"/apis/gryvia.io/v1alpha1/namespaces/{NS}/gryviaaijobs", obj, query)


class Watcher(threading.Thread):
    """Records the first time each Job / Service name is seen in the namespace."""

    def __init__(self, client: Client, plural: str, api_prefix: str) -> None:
        super().__init__(daemon=True)
        self.client, self.plural, self.prefix = client, plural, api_prefix
        self.seen: dict[str, float] = {}
        self.stop = False
        self.listed = threading.Event()
        """Set once the watch's starting resourceVersion is read: every object created after
        that is seen."""

    def begin(self) -> None:
        """Start the thread and return once its starting point is read."""
        self.start()
        if not self.listed.wait(30):
            raise RuntimeError(f"no list of {self.plural} within 30 s")

    def run(self) -> None:
        path = f"{self.prefix}/namespaces/{NS}/{self.plural}"
        rv = self.client.call("GET", path)["metadata"]["resourceVersion"]
        self.listed.set()
        api = self.client.api._client
        while not self.stop:
            _, url, headers, _, _ = api.param_serialize(
                "GET",
                path,
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
            )
            url += f"?watch=1&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=60"
            resp = api.rest_client.pool_manager.request(
                "GET", url, headers=headers, preload_content=False, timeout=None
            )
            buffer = b""
            for chunk in resp.stream(4096):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    event = json.loads(line)
                    obj = event["object"]
                    rv = obj["metadata"].get("resourceVersion", rv)
                    if event["type"] == "ADDED":
                        self.seen.setdefault(obj["metadata"]["name"], time.perf_counter())
                if self.stop:
                    break


def start_operator(
    kubeconfig: Path,
    workdir: Path,
    extra: tuple[str, ...] = (),
    launcher: tuple[str, ...] = ("-m", "gryvia_operator"),
    ready_within: float = 60,
) -> tuple[subprocess.Popen[bytes], int, int]:
    """Start the operator (more flags in `extra`; `launcher`: the interpreter's arguments that
    run it) and wait for /readyz; (process, metrics port, webhook port)."""
    health, metrics, webhook = free_port(), free_port(), free_port()
    log = (workdir / "operator.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            *launcher,
            "--kubeconfig",
            str(kubeconfig),
            "--webhook-self-register",
            "--webhook-config-name",
            WEBHOOK_CONFIG,
            "--webhook-port",
            str(webhook),
            "--health-port",
            str(health),
            "--metrics-port",
            str(metrics),
            "--probe-host",
            "127.0.0.1",
            "--log-level",
            "warning",
            *extra,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + ready_within
    while time.monotonic() < deadline:
        url = f"http://127.0.0.1:{health}/readyz"
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as r:
            if r.status == 200:
                return proc, metrics, webhook
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"operator not ready; see {workdir / 'operator.log'}")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _wait_count(watcher: Watcher, names: list[str], timeout: float) -> float:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if all(n in watcher.seen for n in names):
            return max(watcher.seen[n] for n in names)
        time.sleep(0.05)
    missing = sum(1 for n in names if n not in watcher.seen)
    raise RuntimeError(f"{missing} of {len(names)} never appeared within {timeout:.0f}s")


def histogram(text: str, name: str, match: str) -> dict[float, float]:
    """Cumulative bucket counts (le -> count) of metric `name`, summed over the series whose
    labels contain `match`."""
    buckets: dict[float, float] = {}
    for line in text.splitlines():
        if not line.startswith(name + "_bucket{") or match not in line:
            continue
        labels, value = line.rsplit(" ", 1)
        le = labels.split('le="', 1)[1].split('"', 1)[0]
        bound = float("inf") if le == "+Inf" else float(le)
        buckets[bound] = buckets.get(bound, 0.0) + float(value)
    return buckets


def quantile(q: float, after: dict[float, float], before: dict[float, float]) -> float:
    """Prometheus-style histogram_quantile over the difference of two snapshots."""
    bounds = sorted(after)
    counts = [after[b] - before.get(b, 0.0) for b in bounds]
    total = counts[-1] if counts else 0.0
    if total <= 0:
        return float("nan")
    rank, low, prev = q * total, 0.0, 0.0
    for bound, count in zip(bounds, counts, strict=True):
        if count >= rank:
            if bound == float("inf"):
                return low
            return low + (bound - low) * (rank - prev) / max(count - prev, 1e-9)
        low, prev = bound, count
    return low


def _metrics_text(client: Client, url: str | None = None) -> str:
    if url is None:
        response = client.api._client.rest_client.request(
            "GET",
            client.configuration.host + "/metrics",
            headers=client.api._client.param_serialize(
                "GET", "/metrics", auth_settings=["BearerToken"]
            )[2],
        )
        return str(response.read().decode())
    with urllib.request.urlopen(url) as r:
        return str(r.read().decode())


def bench_webhook(client: Client, metrics_url: str, samples: int = 300) -> dict[str, float]:
    """Dry-run creates with and without the webhook registered (client-side p50/p99 each),
    and the p99 of the webhook call as the API server times it (and as the operator does)."""
    path = f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{WEBHOOK_CONFIG}"
    config = client.call("GET", path)
    server_metric = "apiserver_admission_webhook_admission_duration_seconds"
    ours = "gryvia_operator_webhook_duration_seconds"

    def timed(prefix: str) -> list[float]:
        out = []
        for i in range(samples):
            start = time.perf_counter()
            client.create_job(_job(f"{prefix}-{i}", gpus=1, gpu_type="H100"), dry_run=True)
            out.append(time.perf_counter() - start)
        return out

    timed("warm")
    api_before = histogram(_metrics_text(client), server_metric, 'name="vgryviaaijob.gryvia.io"')
    our_before = histogram(_metrics_text(client, metrics_url), ours, 'webhook="gryviaaijob"')
    with_hook = timed("with")
    api_after = histogram(_metrics_text(client), server_metric, 'name="vgryviaaijob.gryvia.io"')
    our_after = histogram(_metrics_text(client, metrics_url), ours, 'webhook="gryviaaijob"')
    client.call("DELETE", path)
    time.sleep(2)  # the API server's webhook config informer catches up
    without = timed("without")
    for key in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
        config["metadata"].pop(key, None)
    client.call(
        "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", config
    )
    time.sleep(2)
    return {
        "with_p50": pct(with_hook, 50) * 1000,
        "with_p99": pct(with_hook, 99) * 1000,
        "without_p50": pct(without, 50) * 1000,
        "without_p99": pct(without, 99) * 1000,
        "added_p50": (pct(with_hook, 50) - pct(without, 50)) * 1000,
        "added_p99": (pct(with_hook, 99) - pct(without, 99)) * 1000,
        "apiserver_p99": quantile(0.99, api_after, api_before) * 1000,
        "operator_p99": quantile(0.99, our_after, our_before) * 1000,
    }


def bench_latency(
    client: Client, jobs: Watcher, count: int = 300, rate: float = 10.0
) -> list[float]:
    """Submit `count` GPU jobs at `rate`/s; seconds from submit to the Job's ADDED event."""
    submitted: dict[str, float] = {}
    start = time.perf_counter()
    for i in range(count):
        name = f"lat-{i:04d}"
        time.sleep(max(0.0, start + i / rate - time.perf_counter()))
        submitted[name] = time.perf_counter()
        client.create_job(_job(name, gpus=1, gpu_type="H100"))
    _wait_count(jobs, list(submitted), 120)
    return [jobs.seen[n] - t for n, t in submitted.items()]


def bench_burst(
    client: Client, jobs: Watcher, prefix: str, count: int, threads: int = 8
) -> tuple[float, float]:
    """Submit `count` jobs as fast as `threads` can; (submit seconds, seconds until all Jobs)."""
    names = [f"{prefix}-{i:05d}" for i in range(count)]
    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda n: client.create_job(_job(n)), names))
    submitted = time.perf_counter() - start
    last = _wait_count(jobs, names, 600)
    return submitted, last - start


def report(
    latency: list[float],
    burst: tuple[float, float],
    fill: tuple[float, float],
    rss: float,
    hook: dict[str, float],
) -> None:
    """Print the numbers."""
    p50, p99 = statistics.median(latency) * 1000, pct(latency, 99) * 1000
    print("\n== gryvia operator benchmark ==")
    print(
        f"submit-to-Job latency (300 jobs @ 10/s): p50 {p50:.0f} ms, p99 {p99:.0f} ms, "
        f"max {max(latency) * 1000:.0f} ms (targets 100 / 500 ms)"
    )
    print(
        f"burst of 1000 jobs: all Jobs created after {burst[1]:.1f} s "
        f"(submitting took {burst[0]:.1f} s; target 60 s)"
    )
    print(
        f"5000 jobs: last 3700 submitted in {fill[0]:.1f} s, all Jobs after {fill[1]:.1f} s; "
        f"operator peak RSS {rss:.0f} MB (target 300 MB)"
    )
    print(
        f"webhook added admission latency p99: {hook['apiserver_p99']:.1f} ms as the API "
        f"server times the webhook call (operator-side handling p99 "
        f"{hook['operator_p99']:.2f} ms; target 20 ms)"
    )
    print(
        f"  client-side dry-run create p50/p99: {hook['with_p50']:.1f}/{hook['with_p99']:.1f} ms "
        f"with the webhook, {hook['without_p50']:.1f}/{hook['without_p99']:.1f} ms without"
    )


def main() -> int:
    """Run every benchmark on a fresh sandbox and print the numbers."""
    from gryvia_cli.sandbox import cluster

    with tempfile.TemporaryDirectory(prefix="gryvia-bench-") as tmp:
        workdir = Path(tmp)
        os.environ["GRYVIA_SANDBOX_HOME"] = str(workdir / "home")
        name = f"bench{os.getpid() % 10000}"
        proc: subprocess.Popen[bytes] | None = None
        try:
            print(f"starting sandbox {name} ({NODES}) ...", file=sys.stderr)
            box = cluster.up(name, NODES)
            client = Client(box.kubeconfig)
            for crd in crdgen.build_crds():
                client.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
            time.sleep(3)
            client.call("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
            proc, metrics_port, _ = start_operator(box.kubeconfig, workdir)
            jobs = Watcher(client, "jobs", "/apis/batch/v1")
            jobs.begin()

            print("webhook admission latency ...", file=sys.stderr)
            hook = bench_webhook(client, f"http://127.0.0.1:{metrics_port}/metrics")
            print("submit-to-Job latency, 300 jobs at 10/s ...", file=sys.stderr)
            latency = bench_latency(client, jobs)
            print("burst of 1000 ...", file=sys.stderr)
            burst_submit, burst_total = bench_burst(client, jobs, "burst", 1000)
            print("filling up to 5000 jobs ...", file=sys.stderr)
            fill_submit, fill_total = bench_burst(client, jobs, "fill", 3700)
            time.sleep(5)
            rss = peak_rss_mb(proc.pid)
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics") as r:
                metrics = r.read().decode()
            jobs.stop = True

            report(latency, (burst_submit, burst_total), (fill_submit, fill_total), rss, hook)
            for line in metrics.splitlines():
                if line.startswith(
                    ("gryvia_operator_reconcile_total", "gryvia_operator_api_writes")
                ):
                    print("  " + line)
        finally:
            if proc is not None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
            cluster.down(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
