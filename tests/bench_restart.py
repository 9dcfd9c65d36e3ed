"""Operator restart to ready against its history: a sandbox holding N sealed usage records (what
every metered run leaves), the operator started with kopf's own indexing barrier and with
Gryvia's linear one (`gryvia_operator.controller.indexbarrier`), time to `/readyz` at each N.

Prints one row per N with both times and the growth from the previous N; the target is linear
growth: the time at 4,000 records at most twice the time at 2,000 (issue 42, point 4). Usage
records are now read by the operator's informer, not kopf, so both columns stay flat: what this
shows now is that records no longer cost start-up time (`tests.bench_scale` has the curve of
jobs, children and records together).
`python -m tests.bench_restart [N ...]` (default 1000 2000 4000).
"""

from __future__ import annotations

import datetime as dt
import sys
import time
from typing import Any

from tests.bench_operator import start_operator
from tests.support.benchbox import BenchBox, kubectl_run, operator_sandbox

NAMESPACE = "history"
BATCH = 500
KOPF_BARRIER = (
    "import sys, runpy; from gryvia_operator.controller import indexbarrier; "
    "indexbarrier.install = lambda: False; sys.argv[0] = 'gryvia_operator'; "
    "runpy.run_module('gryvia_operator', run_name='__main__')"
)
"""The operator with kopf's own (quadratic) barrier, for the comparison: install() disabled."""


def _record(n: int) -> dict[str, Any]:
    end = dt.datetime(2026, 11, 1, tzinfo=dt.UTC) + dt.timedelta(minutes=n)
    stamp = end.isoformat().replace("+00:00", "Z")
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaUsageRecord",
        "metadata": {"name": f"usage-h{n:06d}", "namespace": NAMESPACE},
        "spec": {
            "tenant": NAMESPACE,
            "job": f"h{n:06d}",
            "jobUID": f"uid-h{n:06d}",
            "sku": "l40",
            "gpuType": "L40",
            "gpus": 1,
            "rate": 2.5,
            "start": stamp,
            "end": stamp,
            "gpuHours": 0.0,
            "cost": 0.0,
            "final": True,
        },
    }


def _fill(box: BenchBox, have: int, want: int) -> None:
    for first in range(have, want, BATCH):
        items = [_record(n) for n in range(first, min(want, first + BATCH))]
        body = {"apiVersion": "v1", "kind": "List", "items": items}
        kubectl_run(box.kubectl, "create", "-f", "-", body=body)


def _time_to_ready(box: BenchBox, kopf_barrier: bool) -> float:
    """Seconds from the operator's start to /readyz 200."""
    workdir = box.workdir / ("kopf" if kopf_barrier else "linear")
    workdir.mkdir(exist_ok=True)
    started = time.monotonic()
    if kopf_barrier:
        launcher = ("-c", KOPF_BARRIER)
        proc, _, _ = start_operator(box.kubeconfig, workdir, launcher=launcher, ready_within=900)
    else:
        proc, _, _ = start_operator(box.kubeconfig, workdir, ready_within=900)
    took = time.monotonic() - started
    proc.kill()
    proc.wait()
    return took


def main(argv: list[str] | None = None) -> int:
    """Run the curve and print it."""
    sizes = [int(a) for a in (argv if argv is not None else sys.argv[1:])] or [1000, 2000, 4000]
    rows: list[tuple[int, float, float]] = []
    with operator_sandbox("rst", "1xcpu", [NAMESPACE]) as box:
        box.operator.kill()
        box.operator.wait()
        have = 0
        for n in sizes:
            _fill(box, have, n)
            have = n
            rows.append((n, _time_to_ready(box, False), _time_to_ready(box, True)))
    print("operator restart to ready, by sealed usage records (seconds)")
    print(f"{'records':>8} {'linear':>8} {'growth':>7} {'kopf':>8} {'growth':>7}")
    for i, (n, linear, kopf) in enumerate(rows):
        g1 = f"{linear / rows[i - 1][1]:.2f}x" if i else ""
        g2 = f"{kopf / rows[i - 1][2]:.2f}x" if i else ""
        print(f"{n:8d} {linear:8.1f} {g1:>7} {kopf:8.1f} {g2:>7}")
    by_size = {n: linear for n, linear, _ in rows}
    if 2000 in by_size and 4000 in by_size:
        ratio = by_size[4000] / by_size[2000]
        verdict = "met" if ratio <= 2.0 else "MISSED"
        print(f"linear barrier: 4000 / 2000 records = {ratio:.2f}x (target <= 2.0x): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
