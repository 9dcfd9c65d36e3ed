"""`gryvia checkpoint` rows, details and the guard body (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gryvia_cli.core.checkpointguards import (
    build_guard,
    checkpoints_text,
    guard_details,
    guard_row,
    guard_wide_row,
    parse_selector,
)
from gryvia_operator.api.checkpointguard import GryviaCheckpointGuard


def test_selector_items_parse_and_bad_ones_name_the_fix() -> None:
    assert parse_selector(["a=1", " b = x "]) == {"a": "1", "b": "x"}
    with pytest.raises(ValueError, match="expected KEY=VALUE"):
        parse_selector(["nope"])


def test_build_guard_validates_with_the_model() -> None:
    body = build_guard("g", "ml", {"checkpoint": "on"}, 300, "ck", whole_job=False)
    guard = GryviaCheckpointGuard.model_validate(body)
    assert guard.spec.restore is not None and not guard.spec.restore.whole_job
    with pytest.raises(ValueError, match=r"spec\.checkpointPolicy\.intervalSeconds|interval"):
        build_guard("g", "ml", {}, 5, "ck")


def test_rows_and_details_show_steps_and_the_last_restore() -> None:
    body = build_guard("g", "ml", {"checkpoint": "on"}, 300, "ck")
    fresh = GryviaCheckpointGuard.model_validate(body)
    assert guard_row(fresh) == ["g", "checkpoint=on", "300s", 0, "-"]
    assert guard_wide_row(fresh)[-2:] == ["/data/ck", "yes"]
    assert ("Jobs", "none guarded yet (or the operator runs without checkpoint guards)") in (
        guard_details(fresh)
    )
    body["status"] = {
        "jobs": [{"job": "train", "steps": [4, 8], "restores": 2}],
        "lastRestore": {
            "job": "train",
            "pod": "train-0-x",
            "step": 8,
            "reason": "PodDeleted",
            "time": "2026-12-01T12:00:00Z",
        },
    }
    seen = GryviaCheckpointGuard.model_validate(body)
    assert guard_row(seen)[3:] == [1, "train @ step 8"]
    details = dict(guard_details(seen))
    assert details["Last restore"] == "train-0-x from step 8 (PodDeleted, 2026-12-01T12:00:00Z)"
    assert details["Job train"] == "committed 4, 8; 2 restore(s)"
    assert details["Restore"] == "whole job"


def test_the_status_line_says_the_last_step_and_where_the_checkpoints_are() -> None:
    now = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
    data = {
        "resumeStep": "1200",
        "committedSteps": "400,800,1200",
        "lastCommitTime": "2026-12-06T11:58:00Z",
        "restores": "1",
        "directory": "/data/checkpoints/train",
        "claim": "gryvia-data-fast-nfs",
        "storage": "fast-nfs",
    }
    assert checkpoints_text(data, now) == (
        "step 1200 (3 committed, 2m ago), 1 pod(s) resumed, in /data/checkpoints/train on "
        "claim gryvia-data-fast-nfs (GryviaStorage fast-nfs)"
    )
    plain = {"committedSteps": "", "restores": "0", "directory": "/data/ck", "claim": "t-data"}
    assert checkpoints_text(plain, now) == "no step committed yet, in /data/ck on claim t-data"
