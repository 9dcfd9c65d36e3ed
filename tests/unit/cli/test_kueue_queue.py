"""`gryvia queue` and the console's Queue view for jobs Kueue admits (issue 19): the position
in the job's LocalQueue (higher priority first), the flavor and the borrowed GPUs from
`status.kueue`."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gryvia_cli.core.jobs import summarize_job
from gryvia_cli.core.queue import QUEUE_WIDE_COLUMNS, build_queue, queue_row
from gryvia_cli.tui.rows import QUEUE_COLUMNS, queue_cells
from tests.builders import make_job

NOW = dt.datetime(2026, 12, 2, 8, 0, tzinfo=dt.UTC)


def _job(name: str, minute: int, priority: int, **kueue: Any) -> dict[str, Any]:
    return (
        make_job(name, "tenant-vision")
        .gpus(8)
        .gpu_type("H100")
        .set(priority=priority)
        .phase("Queued")
        .status(kueue={"queueName": "gryvia", **kueue})
        .meta(creationTimestamp=f"2026-12-02T07:{minute:02d}:00Z")
        .obj()
    )


def test_kueue_jobs_are_numbered_per_local_queue_by_priority_then_age() -> None:
    plain = make_job("plain", "tenant-vision").gpus(8).gpu_type("H100").phase("Queued").obj()
    plain["metadata"]["creationTimestamp"] = "2026-12-02T07:00:00Z"
    jobs = [
        summarize_job(o)
        for o in (plain, _job("low", 1, 20), _job("high", 2, 60), _job("low2", 3, 20))
    ]
    entries = {e.job.name: e for e in build_queue(jobs, [], {}, {}, NOW)}
    assert [entries[n].position for n in ("high", "low", "low2")] == [1, 2, 3]
    assert entries["plain"].position == 1  # Gryvia's own queue: per GPU type, oldest first
    assert entries["high"].as_dict()["kueueQueue"] == "gryvia"


def test_wide_row_and_console_show_flavor_and_borrowed_gpus() -> None:
    admitted = _job("borrower", 1, 50, clusterQueue="gryvia-vision", flavor="gryvia-h100")
    admitted["status"]["kueue"]["borrowedGPUs"] = 8
    admitted["status"]["phase"] = "Scheduling"
    (entry,) = build_queue([summarize_job(admitted)], [], {}, {}, NOW)
    row = queue_row(entry, all_namespaces=False, wide=True)
    assert len(row) == len(QUEUE_WIDE_COLUMNS)
    cells = dict(zip(QUEUE_WIDE_COLUMNS, row, strict=True))
    assert (cells["flavor"], cells["borrowed"]) == ("gryvia-h100", "8")
    assert entry.as_dict()["flavor"] == "gryvia-h100"
    assert entry.as_dict()["borrowedGPUs"] == 8
    console = dict(zip([c.key for c in QUEUE_COLUMNS], queue_cells(entry), strict=True))
    assert console["flavor"][0] == "gryvia-h100"
    assert console["borrowed"] == ("8", "warn")


def test_jobs_outside_kueue_show_dashes() -> None:
    plain = make_job("plain", "ml").gpus(8).gpu_type("H100").phase("Queued").obj()
    (entry,) = build_queue([summarize_job(plain)], [], {}, {}, NOW)
    row = queue_row(entry, all_namespaces=False, wide=True)
    cells = dict(zip(QUEUE_WIDE_COLUMNS, row, strict=True))
    assert (cells["flavor"], cells["borrowed"]) == ("-", "-")
    assert entry.as_dict()["borrowedGPUs"] is None
