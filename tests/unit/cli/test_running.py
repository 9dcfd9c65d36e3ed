"""`gryvia queue --running`: running jobs idlest first with the operator's GPU samples."""

from __future__ import annotations

import json
from typing import Any

from gryvia_cli.core.cells import Marked
from gryvia_cli.core.jobs import summarize_job
from gryvia_cli.core.running import running_jobs, running_row
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import NOW, make_job, run, stamp


def _job(name: str, phase: str = "Running", last: float | None = None) -> dict[str, Any]:
    obj = stamp(make_job(name, "ml").gpus(2).gpu_type("H100").phase(phase).obj(), 3600)
    obj["status"]["startTime"] = "2025-06-01T11:30:00Z"
    if last is not None:
        metrics = {"lastActivityPercent": last, "meanActivityPercent": last + 1, "samples": 7}
        obj["status"]["metrics"] = metrics | {"field": "DCGM_FI_PROF_GR_ENGINE_ACTIVE"}
    return obj


def test_running_jobs_idlest_first_unsampled_last_others_left_out() -> None:
    jobs = [
        _job("busy", last=97.0),
        _job("new"),
        _job("idle", last=2.0),
        _job("done", phase="Succeeded", last=1.0),
        _job("waiting", phase="Queued"),
    ]
    found = running_jobs([summarize_job(j) for j in jobs], NOW)
    assert [r.job.name for r in found] == ["idle", "busy", "new"]
    idle, busy, new = found
    assert idle.idle and not busy.idle and not new.idle and new.samples == 0
    assert idle.running_seconds == 1800
    row = running_row(idle, all_namespaces=True, wide=True, now=NOW)
    assert row[:2] == ["idle", "ml"] and row[5] == Marked("2% idle", "warn")
    assert row[6:8] == ["3%", "7"] and row[9] == "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
    assert running_row(new, all_namespaces=False, wide=False, now=NOW)[4:] == ["-", "-", "-"]


def test_queue_running_table_and_json() -> None:
    fake = FakeAccess(_job("busy", last=97.0), _job("idle", last=2.0), _job("w", phase="Queued"))
    table = run(["queue", "--running", "-n", "ml"], fake, NO_COLOR="1")
    assert table.exit_code == 0, table.output
    lines = [line for line in table.output.splitlines() if line.strip()]
    assert lines[0].split()[:5] == ["NAME", "USER", "GPUS", "RUNNING", "GPU%"]
    assert lines[1].startswith("idle") and "2% idle" in lines[1] and lines[2].startswith("busy")
    data = json.loads(run(["queue", "--running", "-n", "ml", "-o", "json"], fake).output)
    assert data["kind"] == "RunningJobs"
    assert [(i["name"], i["gpuActivityPercent"], i["idle"]) for i in data["items"]] == [
        ("idle", 2.0, True),
        ("busy", 97.0, False),
    ]
