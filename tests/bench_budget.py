"""Budget benchmark on a fresh sandbox: how soon a GryviaBudget's status shows a usage change.

Run `python -m tests.bench_budget` (about a minute). A namespace budget over namespace
`budget`; 200 sealed GryviaUsageRecords of 1 USD each (one per job) are created one every
0.1 s while another thread polls the budget every 50 ms. Each record's latency is from its
create call returning until `status.usage.costUSD` first counts it. Target p99 <= 60 s (the
issue's "within a minute"); the operator recomputes budgets every 5 s.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from tests.bench_operator import pct
from tests.bench_tenancy import GROUP, VERSION, _api
from tests.support.benchbox import operator_sandbox

NODES = "1xL40:4"
NS = "budget"
RECORDS = 200
PACE_S = 0.1
POLL_S = 0.05
P99_TARGET_S = 60.0


def _record(i: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "GryviaUsageRecord",
        "metadata": {"name": f"usage-bench-{i:03d}", "namespace": NS},
        "spec": {
            "tenant": NS,
            "job": f"bench-{i:03d}",
            "jobUID": f"bench-{i:03d}",
            "gpus": 1,
            "rate": 3600.0,
            "start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 2)),
            "end": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1)),
            "gpuHours": 1 / 3600,
            "cost": 1.0,
            "final": True,
        },
    }


def _spent(api: Any) -> float | None:
    budget = api.get_cluster_custom_object(GROUP, VERSION, "gryviabudgets", NS)
    value = ((budget.get("status") or {}).get("usage") or {}).get("costUSD")
    return float(value) if isinstance(value, (int, float)) else None


def bench(api: Any) -> list[float]:
    """Seconds from each record's create until the budget's costUSD counts it."""
    api.create_cluster_custom_object(
        GROUP,
        VERSION,
        "gryviabudgets",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "GryviaBudget",
            "metadata": {"name": NS},
            "spec": {
                "scope": {"type": "namespace", "name": NS},
                "period": {"type": "monthly"},
                "limits": {"costUSD": 100000},
            },
        },
    )
    deadline = time.monotonic() + 60
    while _spent(api) != 0:
        if time.monotonic() > deadline:
            raise RuntimeError("the budget never got a status")
        time.sleep(0.2)
    created: list[float] = []
    seen: dict[int, float] = {}
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            spent = _spent(api) or 0.0
            now = time.perf_counter()
            for count in range(1, int(spent + 0.5) + 1):
                seen.setdefault(count, now)
            time.sleep(POLL_S)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    for i in range(1, RECORDS + 1):
        api.create_namespaced_custom_object(GROUP, VERSION, NS, "gryviausagerecords", _record(i))
        created.append(time.perf_counter())
        time.sleep(PACE_S)
    deadline = time.monotonic() + 2 * P99_TARGET_S
    while len(seen) < RECORDS and time.monotonic() < deadline:
        time.sleep(0.2)
    done.set()
    poller.join()
    if len(seen) < RECORDS:
        raise RuntimeError(f"the budget counted {len(seen)} of {RECORDS} records")
    return [seen[i] - created[i - 1] for i in range(1, RECORDS + 1)]


def main() -> int:
    """Run the benchmark on a fresh sandbox and print p50/p99."""
    with operator_sandbox("budget", NODES, [NS]) as box:
        print(f"budget status latency, {RECORDS} usage records ...", file=sys.stderr)
        latencies = bench(_api(box.kubeconfig))
        p50, p99 = pct(latencies, 50), pct(latencies, 99)
        verdict = "ok" if p99 <= P99_TARGET_S else "OVER TARGET"
        print(
            f"budget status after a usage change: p50 {p50:.2f} s, p99 {p99:.2f} s "
            f"over {RECORDS} records (target p99 <= {P99_TARGET_S:.0f} s: {verdict})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
