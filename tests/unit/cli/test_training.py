"""`gpu training`'s pure half: torchrun's rank numbers, step rates from timestamped lines, and
the straggler by step rate, else by GPU activity."""

from __future__ import annotations

from gryvia_cli.core.gpuuse import GpuUse
from gryvia_cli.core.training import advice, ranks, step_rate, straggler


def _use(replica: int, gpu: int, activity: float | None) -> GpuUse:
    return GpuUse(
        f"job-{replica}", replica, f"node-{replica}", gpu, activity, "F", None, None, None
    )


def test_ranks_are_replica_times_gpus_per_pod_plus_the_local_rank() -> None:
    rows = [_use(1, 5, 90.0), _use(0, 3, 95.0), _use(1, 2, 10.0), _use(0, 1, 97.0)]
    numbered = [(r.rank, r.use.replica, r.use.gpu) for r in ranks(rows, 2)]
    assert numbered == [(0, 0, 1), (1, 0, 3), (2, 1, 2), (3, 1, 5)]


def test_step_rate_from_the_first_and_last_step_lines() -> None:
    lines = [
        "2026-12-04T10:00:00.000000000Z loading data",
        "2026-12-04T10:00:01Z step 100 loss 2.1",
        "2026-12-04T10:00:03Z Iteration: 140 | lr 3e-4",
        "2026-12-04T10:00:11Z step=300 loss 1.9",
        "not a timestamp step 999",
    ]
    assert step_rate(lines) == 20.0
    assert step_rate(lines[:2]) is None


def test_the_straggler_by_step_rate_else_by_activity_and_what_to_look_at() -> None:
    by_rank = ranks([_use(0, 0, 99.0), _use(1, 0, 98.0), _use(2, 0, 97.0)], 1)
    slow = straggler(by_rank, {0: 2.0, 1: 2.1, 2: 1.0})
    assert slow is not None and slow.replica == 2 and slow.rank is None
    assert "1.00 steps/s against a median of 2.00" in slow.reason
    assert straggler(by_rank, {0: 2.0, 1: 2.1, 2: 1.9}) is None
    idle = ranks([_use(0, 0, 99.0), _use(1, 0, 3.0), _use(2, 0, 97.0)], 1)
    found = straggler(idle, {})
    assert found is not None and (found.replica, found.rank) == (1, 1)
    assert "node-1" in advice(found, idle, "lag")[0]
    assert advice(None, ranks([_use(0, 0, 20.0), _use(1, 0, 22.0)], 1), "x")[0].startswith(
        "Every rank is under-used alike"
    )
