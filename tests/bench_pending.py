"""Start-estimate benchmark (issue 20) on a fresh sandbox: how far `status.estimatedStart`
is from the real start, and how many status writes the operator makes per job.

Run `python -m tests.bench_pending` (about 4 minutes; not in `make bench`'s list, which keeps
suites under 2 minutes). 200 one-GPU jobs in 4 waves of 50 onto 10 L40 nodes of 4 GPUs (40
GPUs): each runs `sleep 900` and is ended by its timeout (10 to 20 s, seeded), so jobs wait
behind each other. A poller (every 0.5 s) records each job's first and last
`estimatedStart.likely` while it waits and its real `status.startTime`. Reported: median and
p90 absolute error of the first and of the last estimate, jobs whose start stayed unknown, and
the operator's GryviaAIJob status writes (from its /metrics) per job and per status change (a
watch counts every event whose `status` differs from the job's previous one; target <= 1 write
per change, issue 20).
"""

from __future__ import annotations

import datetime as dt
import random
import statistics
import sys
import threading
import time
import urllib.request
from typing import Any

from tests.bench_operator import pct
from tests.builders import make_job
from tests.support.benchbox import kubectl_run as _kubectl
from tests.support.benchbox import operator_sandbox

NODES = "10xL40:4"
NS = "bench"
JOBS, WAVES = 200, 4
WAVE_GAP_S = 20.0
POLL_S = 0.5


def _time(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


class Poller(threading.Thread):
    """Lists the jobs every POLL_S: first/last likely start while waiting, the real start."""

    def __init__(self, api: Any) -> None:
        super().__init__(daemon=True)
        self.api = api
        self.first: dict[str, str] = {}
        self.last: dict[str, str] = {}
        self.unknown: set[str] = set()
        self.started: dict[str, str] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            items = self.api.list_namespaced_custom_object(
                "gryvia.io", "v1alpha1", NS, "gryviaaijobs"
            )["items"]
            for job in items:
                name, status = job["metadata"]["name"], job.get("status") or {}
                if status.get("startTime"):
                    self.started.setdefault(name, status["startTime"])
                    continue
                estimate = status.get("estimatedStart") or {}
                if estimate.get("likely"):
                    self.first.setdefault(name, estimate["likely"])
                    self.last[name] = estimate["likely"]
                elif estimate.get("unknownReason"):
                    self.unknown.add(name)
            time.sleep(POLL_S)


class StatusChanges(threading.Thread):
    """Watches the jobs and counts status changes: events whose `status` differs from the
    job's last seen one (a write that changes nothing makes no event)."""

    def __init__(self, api: Any) -> None:
        super().__init__(daemon=True)
        self.api = api
        self.last: dict[str, Any] = {}
        self.changes = 0
        self.version = ""
        self.stop = threading.Event()
        self.ready = threading.Event()
        """Set once the watch starts from a listed resourceVersion: submit after it, so no
        write happens before the count begins."""

    def run(self) -> None:
        from kubernetes import watch

        listed = self.api.list_namespaced_custom_object("gryvia.io", "v1alpha1", NS, "gryviaaijobs")
        self.version = listed["metadata"]["resourceVersion"]
        self.ready.set()
        while not self.stop.is_set():
            stream = watch.Watch().stream(
                self.api.list_namespaced_custom_object,
                "gryvia.io",
                "v1alpha1",
                NS,
                "gryviaaijobs",
                resource_version=self.version or None,
                timeout_seconds=5,
            )
            try:
                self._count(stream)
            except Exception:  # 410 Gone or a cut stream: watch again from a fresh list
                self.version = ""

    def _count(self, stream: Any) -> None:
        for event in stream:
            obj = event["object"]
            self.version = obj["metadata"].get("resourceVersion", self.version)
            name, status = obj["metadata"]["name"], obj.get("status") or {}
            if event["type"] in ("ADDED", "MODIFIED") and status != self.last.get(name, {}):
                self.changes += 1
            self.last[name] = status


def _metric(port: int, name: str, *labels: str) -> float:
    """The sum of the operator's `name` samples carrying every one of `labels`."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(name + "{") and all(label in line for label in labels)
    )


def _status_writes(port: int) -> tuple[float, float]:
    """(accepted GryviaAIJob status writes, job reconciles refused with 409 Conflict)."""
    writes = _metric(
        port, "gryvia_operator_api_writes_total", 'kind="GryviaAIJob"', 'verb="status"'
    )
    conflicts = _metric(
        port, "gryvia_operator_reconciles_total", 'controller="aijob"', 'result="conflict"'
    )
    return writes, conflicts


def _errors(estimates: dict[str, str], started: dict[str, str]) -> list[float]:
    return [
        abs((_time(started[n]) - _time(e)).total_seconds())
        for n, e in estimates.items()
        if n in started
    ]


def bench(api: Any, kubectl: list[str], metrics_port: int) -> None:
    """Submit the waves, wait for every start, print the numbers."""
    rng = random.Random(20)
    poller, changes = Poller(api), StatusChanges(api)
    poller.start()
    changes.start()
    changes.ready.wait(timeout=60)
    per_wave = JOBS // WAVES
    for wave in range(WAVES):
        items = [
            make_job(f"w{wave}-{i:03d}", NS)
            .gpu_type("L40")
            .image("none")
            .script("sleep 900")
            .timeout(f"{rng.randint(10, 20)}s")
            .manifest()
            for i in range(per_wave)
        ]
        _kubectl(
            kubectl, "create", "-f", "-", body={"apiVersion": "v1", "kind": "List", "items": items}
        )
        time.sleep(WAVE_GAP_S)
    deadline = time.monotonic() + 600
    while len(poller.started) < JOBS and time.monotonic() < deadline:
        time.sleep(1)
    poller.stop.set()
    writes, conflicts = _status_writes(metrics_port)
    changed = changes.changes
    changes.stop.set()
    first, last = _errors(poller.first, poller.started), _errors(poller.last, poller.started)
    waited = len(poller.first)
    print(f"  jobs started: {len(poller.started)}/{JOBS}; waited with an estimate: {waited}")
    for label, values in (("first estimate", first), ("last estimate", last)):
        if values:
            print(
                f"  {label}: median {statistics.median(values):.1f} s, "
                f"p90 {pct(values, 90):.1f} s absolute error ({len(values)} jobs)"
            )
    print(f"  start unknown at some point: {len(poller.unknown)} jobs")
    print(
        f"  operator status writes: {writes:.0f} ({writes / JOBS:.1f} per job); status changes "
        f"seen: {changed} ({writes / max(changed, 1):.2f} writes per change, target <= 1); "
        f"writes refused with 409 Conflict (job changed since read): {conflicts:.0f}"
    )


def main() -> int:
    """Run the benchmark on a fresh sandbox."""
    from kubernetes import client, config

    with operator_sandbox("pending", NODES, [NS]) as box:
        configuration = client.Configuration()
        config.load_kube_config(config_file=str(box.kubeconfig), client_configuration=configuration)
        api = client.CustomObjectsApi(client.ApiClient(configuration))
        print(f"{JOBS} jobs in {WAVES} waves ...", file=sys.stderr)
        bench(api, box.kubectl, box.metrics_port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
