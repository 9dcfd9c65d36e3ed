"""Issue 20: `gryvia queue` REASON/START and `--start`, `gryvia status JOB` and `squeue --start`
from the operator's status.pending / status.estimatedStart."""

from __future__ import annotations

import json
from typing import Any

from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import h100, make_job, run, stamp

PENDING = {
    "kind": "Resources",
    "resource": "H100",
    "needed": 16,
    "freeNow": 8,
    "ahead": {"count": 2, "names": ["a", "b"]},
    "holders": [
        {"name": "c", "gpus": 8, "expectedEnd": "2026-12-01T14:20:00Z", "basis": "timeout"},
        {"name": "d", "gpus": 8, "expectedEnd": "2026-12-01T15:05:00Z", "basis": "timeout"},
    ],
    "message": "needs 16 H100 on 2 node(s), 8 free on nodes that could take its pods",
}
ESTIMATE = {"earliest": "2026-12-01T14:20:00Z", "likely": "2026-12-01T15:05:00Z"}


def waiting(name: str, pending: dict[str, Any], estimate: dict[str, Any], age: float) -> Any:
    job = make_job(name).gpus(8).gpu_type("H100").distributed(2)
    return stamp(job.status(phase="Pending", pending=pending, estimatedStart=estimate).obj(), age)


def fake() -> FakeAccess:
    unknown = {"unknownReason": "job c has no timeout and no finished job like it"}
    return FakeAccess(
        h100("h0"),
        waiting("big", PENDING, ESTIMATE, 300),
        waiting("later", {"kind": "Resources", "resource": "H100", "needed": 16}, unknown, 60),
    )


def test_queue_prints_the_blocker_and_the_start() -> None:
    out = run(["queue"], fake()).output.splitlines()
    assert out[0].split()[-2:] == ["START", "REASON"]
    assert "14:20-15:05" in out[1]
    assert "needs 16 H100, 8 free; 2 jobs ahead (a, b)" in out[1]
    assert "unknown" in out[2]
    data = json.loads(run(["queue", "-o", "json"], fake()).output)
    first = data["items"][0]
    assert first["blocker"] == PENDING
    assert first["estimatedStart"] == ESTIMATE
    assert first["start"] == "14:20-15:05"


def test_queue_start_lists_estimates_soonest_first() -> None:
    out = run(["queue", "--start"], fake()).output.splitlines()
    assert out[0].split() == [
        "#",
        "NAME",
        "GPU",
        "TYPE",
        "GPUS",
        "EARLIEST",
        "LIKELY",
        "WAITS",
        "FOR",
    ]
    assert "2026-12-01 14:20" in out[1] and "2026-12-01 15:05" in out[1]
    assert "c (ends 2026-12-01 14:20), d (ends 2026-12-01 15:05)" in out[1]
    assert "unknown" in out[2] and "job c has no timeout" in out[2]


def test_status_prints_the_waiting_line() -> None:
    out = run(["status", "big"], fake()).output
    assert (
        "needs 16 H100, 8 free; 2 jobs ahead (a, b); likely start 14:20-15:05 UTC, "
        "when job c (ends 14:20) and d (ends 15:05) finish"
    ) in " ".join(out.split())


def test_squeue_start_shows_the_likely_start() -> None:
    out = run(["squeue", "--start"], fake()).output.splitlines()
    big = next(line for line in out if "big" in line)
    assert "2026-12-01T15:05:00" in big and "(Resources)" in big
