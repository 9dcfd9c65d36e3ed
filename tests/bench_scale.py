"""The operator at scale (issue 42, point 4): a 5,000-job burst, then restarts over a growing
history, on a fresh one-node sandbox.

- **Burst:** `BURST` suspended one-GPU jobs submitted by 16 threads; jobs per second from the
  first submit to the last child Job seen (target >= 100/s), submit-to-Job p50/p99 from a watch,
  and the operator's own reconcile duration p99 (`gryvia_operator_reconcile_duration_seconds`,
  controller `aijob`) over the burst.
- **Backlog:** as many jobs created while the operator is down, then the operator started: its
  own rate from ready to the last child Job, apart from what the submitters and the webhook cost.
- **Restart curve:** sealed usage records are added until the sandbox holds each size of
  `SIZES` in objects the operator lists at start (the burst's GryviaAIJobs and their batch
  Jobs, plus the records); at each size the operator is SIGKILLed and started again. Printed:
  the API server's own time to serve those lists (paged by 500, as an informer relists), the
  operator's start to `/readyz` (targets: <= 10 s at 20,000 objects, <= 30 s at 100,000), start
  to its backlog drained (every job reconciled again, the aijob queue empty), its peak RSS, and
  the growth from the previous size. The etcd data folder's size is printed with each row.

`python -m tests.bench_scale [SIZE ...]` (default 10000 20000; `make bench-large` adds
100000). Jobs are suspended, so no pod runs: this measures the control plane and the operator.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.bench_operator import NS as NAMESPACE
from tests.bench_operator import (
    Client,
    Watcher,
    _job,
    _wait_count,
    bench_burst,
    histogram,
    pct,
    peak_rss_mb,
    quantile,
    start_operator,
)
from tests.bench_restart import _record
from tests.support.benchbox import BenchBox, kubectl_run, operator_sandbox

BURST = 5000
SIZES = (10_000, 20_000)
LISTED = (
    "/apis/gryvia.io/v1alpha1/gryviaaijobs",
    "/apis/batch/v1/jobs",
    "/apis/gryvia.io/v1alpha1/gryviausagerecords",
)
"""The high-cardinality lists the operator reads at start (paths, all namespaces)."""
RECORD_BATCH = 500


def _metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return str(r.read().decode())


def _metric_value(text: str, name: str, match: str) -> float:
    """The sum of the samples of `name` whose labels contain `match` (0 when none)."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") and match in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def burst(box: BenchBox, client: Client, count: int) -> list[str]:
    """Run the burst and return the lines to print."""
    jobs = Watcher(client, "jobs", "/apis/batch/v1")
    jobs.begin()
    metric = "gryvia_operator_reconcile_duration_seconds"
    before = histogram(_metrics(box.metrics_port), metric, 'controller="aijob"')
    submitted: dict[str, float] = {}
    original = client.create_job

    def timed_create(obj: dict[str, Any], dry_run: bool = False) -> None:
        submitted[obj["metadata"]["name"]] = time.perf_counter()
        original(obj, dry_run)

    client.create_job = timed_create  # type: ignore[method-assign]
    submit_s, total_s = bench_burst(client, jobs, "burst", count, threads=16)
    client.create_job = original  # type: ignore[method-assign]
    jobs.stop = True
    after = histogram(_metrics(box.metrics_port), metric, 'controller="aijob"')
    latency = [jobs.seen[n] - t for n, t in submitted.items()]
    rate = count / total_s
    p50, p99 = (quantile(q, after, before) * 1000 for q in (0.5, 0.99))
    verdict = "met" if rate >= 100 else "MISSED"
    return [
        f"burst of {count} suspended jobs (16 submitting threads): submitted in {submit_s:.1f} s "
        f"({count / submit_s:.0f}/s), every Job after {total_s:.1f} s: "
        f"{rate:.0f} jobs/s (target >= 100/s): {verdict}",
        f"  submit-to-Job p50 {statistics.median(latency) * 1000:.0f} ms, "
        f"p99 {pct(latency, 99) * 1000:.0f} ms, max {max(latency) * 1000:.0f} ms",
        f"  reconcile duration (operator's histogram, aijob) p50 {p50:.1f} ms, p99 {p99:.1f} ms",
        f"  operator peak RSS after the burst {peak_rss_mb(box.operator.pid):.0f} MB",
    ]


def backlog(box: BenchBox, client: Client, count: int) -> list[str]:
    """The operator's own rate, apart from the submitters': `count` suspended jobs created
    while it is down (kubectl, 500 a request; the webhook fails open meanwhile), then the
    operator started; seconds from its start to ready and to the last child Job."""
    box.operator.kill()
    box.operator.wait()
    for first in range(0, count, RECORD_BATCH):
        names = range(first, min(count, first + RECORD_BATCH))
        items = [_job(f"queued-{i:05d}") for i in names]
        body = {"apiVersion": "v1", "kind": "List", "items": items}
        kubectl_run(box.kubectl, "create", "-f", "-", body=body)
    jobs = Watcher(client, "jobs", "/apis/batch/v1")
    jobs.begin()
    workdir = box.workdir / "backlog"
    workdir.mkdir()
    started = time.perf_counter()
    box.operator, box.metrics_port, _ = start_operator(box.kubeconfig, workdir, ready_within=900)
    ready = time.perf_counter() - started
    parts = {"operator": [box.operator.pid], **_control_plane(box)}
    before = {name: _cpu_seconds(pids) for name, pids in parts.items()}
    last = _wait_count(jobs, [f"queued-{i:05d}" for i in range(count)], 900) - started
    used = {name: _cpu_seconds(pids) - before[name] for name, pids in parts.items()}
    writes: dict[str, float] = {}
    for line in _metrics(box.metrics_port).splitlines():
        if line.startswith("gryvia_operator_api_writes_total{"):
            labels, value = line.rsplit(" ", 1)
            writes[labels.split("{", 1)[1].rstrip("}")] = float(value)
    jobs.stop = True
    rate = count / (last - ready)
    verdict = "met" if rate >= 100 else "MISSED"
    drain = last - ready
    shares = ", ".join(f"{n} {c:.0f} s ({c / drain:.2f} cores)" for n, c in used.items())
    return [
        f"backlog of {count} jobs created while the operator was down: ready after "
        f"{ready:.1f} s, every Job after {last:.1f} s: {rate:.0f} jobs/s from ready "
        f"(target >= 100/s): {verdict}",
        f"  CPU while draining ({drain:.0f} s): {shares}",
        "  API writes a job: "
        + ", ".join(f"{k} {v / count:.2f}" for k, v in sorted(writes.items()) if v),
    ]


def _control_plane(box: BenchBox) -> dict[str, list[int]]:
    """The pids of the sandbox's kube-apiserver, etcd and kube-controller-manager."""
    found: dict[str, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        program = Path(argv[0].decode(errors="replace")).name
        if program in ("kube-apiserver", "etcd", "kube-controller-manager") and any(
            box.name.encode() in a for a in argv
        ):
            found.setdefault(program, []).append(int(proc.name))
    return found


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of `pids` so far (0 for one gone)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _count(client: Client, path: str) -> int:
    reply = client.call("GET", path, query={"limit": "1"})
    return int(reply["metadata"].get("remainingItemCount", 0)) + len(reply["items"])


def _serve_seconds(client: Client) -> float:
    """Wall seconds for the API server to serve every list of `LISTED`, 500 a page."""
    started = time.perf_counter()
    for path in LISTED:
        token = ""
        while True:
            query = {"limit": "500", **({"continue": token} if token else {})}
            reply = client.call("GET", path, query=query)
            token = reply["metadata"].get("continue") or ""
            if not token:
                break
    return time.perf_counter() - started


def _fill_records(box: BenchBox, have: int, want: int) -> None:
    for first in range(have, want, RECORD_BATCH):
        items = [_record(n) for n in range(first, min(want, first + RECORD_BATCH))]
        for item in items:
            item["metadata"]["namespace"] = NAMESPACE
        body = {"apiVersion": "v1", "kind": "List", "items": items}
        kubectl_run(box.kubectl, "create", "-f", "-", body=body)


def _restart(box: BenchBox, jobs: int) -> tuple[float, float, float]:
    """Kill the operator, start it again: (s to /readyz, s to backlog drained, peak RSS MB)."""
    box.operator.kill()
    box.operator.wait()
    workdir = box.workdir / f"restart-{time.monotonic_ns()}"
    workdir.mkdir()
    started = time.monotonic()
    proc, metrics_port, _ = start_operator(box.kubeconfig, workdir, ready_within=900)
    ready = time.monotonic() - started
    box.operator, box.metrics_port = proc, metrics_port
    drained = float("nan")
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        text = _metrics(metrics_port)
        done = _metric_value(text, "gryvia_operator_reconcile_total", 'controller="aijob"')
        depth = _metric_value(text, "gryvia_operator_workqueue_depth", 'queue="aijob"')
        if done >= jobs and depth == 0:
            drained = time.monotonic() - started
            break
        time.sleep(0.2)
    return ready, drained, peak_rss_mb(proc.pid)


def _etcd_mb(box: BenchBox) -> float:
    """MB on disk of the sandbox's etcd data (its `member` folder)."""
    from gryvia_cli.sandbox.sandboxes import Sandbox

    members = list(Sandbox(box.name).workdir.rglob("member"))
    files = [p for m in members for p in m.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 2**20


def main(argv: list[str] | None = None) -> int:
    """Run the burst and the restart curve; print them."""
    sizes = [int(a) for a in (argv if argv is not None else sys.argv[1:])] or list(SIZES)
    lines: list[str] = []
    rows: list[tuple[int, float, float, float, float, float]] = []
    with operator_sandbox("scale", "1xH100:8", [NAMESPACE]) as box:
        client = Client(box.kubeconfig)
        lines += burst(box, client, BURST)
        aijobs = _count(client, LISTED[0])
        base = aijobs + _count(client, LISTED[1])
        records = 0
        for size in sizes:
            want = max(0, size - base)
            _fill_records(box, records, want)
            records = max(records, want)
            serve = _serve_seconds(client)
            ready, drained, rss = _restart(box, aijobs)
            rows.append((base + records, serve, ready, drained, rss, _etcd_mb(box)))
        lines += backlog(box, client, BURST)
    print("\n== the operator at scale ==")
    print(*lines, sep="\n")
    print(
        f"restart over a history of objects ({aijobs} GryviaAIJobs and their Jobs, the rest "
        "sealed usage records)"
    )
    head = ("objects", "lists s", "ready s", "growth", "drained s", "peak MB", "etcd MB")
    print("".join(f"{h:>11}" for h in head))
    for i, (n, serve, ready, drained, rss, etcd) in enumerate(rows):
        growth = f"{ready / rows[i - 1][2]:.2f}x" if i else ""
        cells = (f"{n}", f"{serve:.2f}", f"{ready:.1f}", growth, f"{drained:.1f}",
                 f"{rss:.0f}", f"{etcd:.0f}")  # fmt: skip
        print("".join(f"{c:>11}" for c in cells))
    for n, _, ready, *_ in rows:
        target = 10.0 if n <= 20_000 else 30.0 if n <= 100_000 else None
        if target is not None:
            verdict = "met" if ready <= target else "MISSED"
            print(f"ready at {n} objects: {ready:.1f} s (target <= {target:.0f} s): {verdict}")
    print(json.dumps({"rows": rows}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
