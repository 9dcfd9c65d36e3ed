"""`gryvia sacct`'s history (`gryvia_cli.core.acct`): records of deleted jobs as sacct rows,
Slurm's -S/-E/-s window rules, -u/-A, live-wins merging, roll-up notes and -P output."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from gryvia_cli.core import acct
from gryvia_cli.core.jobs import summarize_job
from gryvia_cli.core.slurmfmt import parse_sacct_format
from gryvia_cli.core.slurmviews import SACCT_WIDTHS, slurm_job
from tests.builders import make_job

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _raw(uid: str = "u-1", **spec: Any) -> dict[str, Any]:
    base = {"tenant": "nlp", "job": "train", "jobUID": uid, "user": "alice", "phase": "Failed",
            "exitCode": 137, "submitted": "2026-11-20T09:00:00Z",
            "started": "2026-11-20T10:00:00Z", "ended": "2026-11-20T11:30:00Z", "gpus": 8,
            "gpuType": "H100", "pods": 2, "nodes": ["n1", "n2"], "gpuHours": 12.0,
            "gpuEff": 50.0}  # fmt: skip
    return {"metadata": {"name": f"job-{uid}"}, "spec": {**base, **spec}}


def test_a_record_is_a_sacct_row_with_state_and_exit_code() -> None:
    job = acct.record_job(_raw(), log=False)
    assert job is not None
    assert {k: job.row[k] for k in ("JobID", "State", "ExitCode", "Elapsed", "GPUHours")} == {
        "JobID": "train", "State": "FAILED", "ExitCode": "0:9", "Elapsed": "01:30:00",
        "GPUHours": "12.00",
    }  # fmt: skip
    assert job.row["NodeList"] == "n[1-2]" and job.row["Log"] == "no"
    assert job.row["User"] == "alice" and job.row["Account"] == "nlp"
    assert job.row["GPUEff"] == "50.0%" and job.row["GPUActHrs"] == "6.00"
    assert acct.record_job(_raw(timedOut=True), log=True).row["State"] == "TIMEOUT"  # type: ignore[union-attr]
    assert (
        acct.record_job({"spec": {"tenant": "nlp", "rollup": {"month": "2026-08"}}}, False) is None
    )


@pytest.mark.parametrize(
    ("start", "end", "states", "shown"),
    [
        ("2026-11-20T11:00", "2026-11-20T12:00", "", True),  # running in the window
        ("2026-11-20T11:31", "2026-11-21T00:00", "", False),  # ended before -S
        ("2026-11-19T00:00", "2026-11-20T08:59", "", False),  # eligible after -E
        ("2026-11-20T00:00", "2026-11-21T00:00", "F", True),  # ended FAILED in it
        ("2026-11-20T00:00", "2026-11-20T11:00", "F", False),  # ended after -E
        ("2026-11-20T00:00", "2026-11-21T00:00", "CD", False),  # not that state
        ("2026-11-20T00:00", "2026-11-21T00:00", "FAILED,CD", True),  # long names too
    ],
)
def test_the_window_follows_slurms_rules(start: str, end: str, states: str, shown: bool) -> None:
    job = acct.record_job(_raw(), log=False)
    assert job is not None
    wanted = acct.parse_states([states] if states else None)
    assert acct.in_window(job, t(start), t(end), wanted) is shown


def test_default_windows_are_sacct_s() -> None:
    assert acct.window(None, None, set(), NOW) == (t("2026-12-01T00:00"), NOW)
    assert acct.window(None, None, {"F"}, NOW) == (NOW, NOW)
    assert acct.window(t("2026-11-01T00:00"), None, {"F"}, NOW) == (t("2026-11-01"),) * 2


def test_a_live_job_wins_over_its_record_and_filters_pick_user_and_account() -> None:
    obj = (
        make_job("train", "tenant-nlp").uid("u-1").gpus(1)
        .annotate("gryvia.io/submitted-by", "bob")
        .meta(creationTimestamp="2026-11-20T09:00:00Z")
        .status(phase="Succeeded", startTime="2026-11-20T10:00:00Z",
                completionTime="2026-11-20T10:10:00Z")
    ).obj()  # fmt: skip
    live = acct.live_job(slurm_job(obj, summarize_job(obj), "nlp"), NOW, log=True)
    old = acct.record_job(_raw("u-1"), log=False)
    other = acct.record_job(_raw("u-2", tenant="vision", user="carol"), log=False)
    merged = acct.merge([live], [j for j in (old, other) if j])
    assert [(j.uid, j.row["State"]) for j in merged] == [("u-1", "COMPLETED"), ("u-2", "FAILED")]
    assert live.row["Log"] == "yes" and live.row["User"] == "bob"
    assert [j.uid for j in merged if acct.picked(j, {"carol"}, set())] == ["u-2"]
    assert [j.uid for j in merged if acct.picked(j, set(), {"nlp"})] == ["u-1"]
    assert [j.uid for j in merged if acct.picked(j, {"vision"}, set())] == ["u-2"]  # tenant


def test_roll_up_notes_name_the_months_of_the_window_only_in_roll_ups() -> None:
    roll = {"spec": {"tenant": "nlp", "gpuHours": 10.5, "cost": "42.5",
                     "rollup": {"month": "2026-08", "jobs": 3,
                                "states": {"Succeeded": 2, "Failed": 1},
                                "through": "2026-08-30T10:00:00Z"}}}  # fmt: skip
    notes = acct.rollup_notes([roll], t("2026-08-15T00:00"), NOW, None)
    assert notes == [
        "note: jobs of account nlp that ended in 2026-08 (through 2026-08-30T10:00:00) are only "
        "in a roll-up: 3 jobs (1 FAILED, 2 COMPLETED); 10.50 GPU-hours; cost 42.50 USD"
    ]
    assert acct.rollup_notes([roll], t("2026-09-01T00:00"), NOW, None) == []
    assert acct.rollup_notes([roll], t("2026-08-01T00:00"), NOW, {"vision"}) == []


def test_parsable2_joins_with_bars_and_no_trailing_bar() -> None:
    fields, _ = parse_sacct_format("JobID,State,ExitCode%3,Log", SACCT_WIDTHS)
    rows = [{"JobID": "a-very-long-job-name", "State": "FAILED", "ExitCode": "0:9", "Log": "no"}]
    assert acct.render_parsable(fields, rows) == [
        "JobID|State|ExitCode|Log", "a-very-long-job-name|FAILED|0:9|no"
    ]  # fmt: skip
    assert acct.render_parsable(fields, rows, header=False) == [
        "a-very-long-job-name|FAILED|0:9|no"
    ]


def test_starttime_and_endtime_take_sacct_relative_forms() -> None:
    from gryvia_cli.errors import UsageError
    from gryvia_cli.views.slurm import _when

    now = datetime(2026, 12, 6, 5, 30, tzinfo=UTC)
    assert _when("now", "-S", now) == now
    assert _when("now-3days", "-S", now) == datetime(2026, 12, 3, 5, 30, tzinfo=UTC)
    assert _when("NOW+2hours", "-E", now) == datetime(2026, 12, 6, 7, 30, tzinfo=UTC)
    assert _when("now-90", "-S", now) == datetime(2026, 12, 6, 5, 28, 30, tzinfo=UTC)
    assert _when("today", "-S", now) == datetime(2026, 12, 6, tzinfo=UTC)
    assert _when("2026-12-01T08:00", "-S", now) == datetime(2026, 12, 1, 8, tzinfo=UTC)
    for bad in ("now-3fortnights", "yesterdayish"):
        with pytest.raises(UsageError, match="is not a date"):
            _when(bad, "-S", now)
