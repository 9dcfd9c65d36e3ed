"""Idle policies on the client: the body `gryvia idle-policy create` writes, its errors, and
the rows and details of `list` and `get`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gryvia_cli.core.idlepolicies import (
    IDLE_POLICY_COLUMNS,
    build_idle_policy,
    idle_policy_details,
    idle_policy_row,
    idle_policy_wide_row,
)
from gryvia_operator.api.idlepolicy import GryviaIdlePolicy

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
ARGS: dict[str, Any] = {
    "threshold_percent": 5.0,
    "window_seconds": 1800,
    "grace_seconds": 600,
    "action": "suspend",
    "job_types": ["training"],
    "scope": "Namespace",
}


def test_create_builds_a_valid_body_and_names_the_bad_field() -> None:
    body = build_idle_policy("idle", "ml", **ARGS)
    assert body["spec"]["jobTypes"] == ["training"] and body["metadata"]["namespace"] == "ml"
    with pytest.raises(ValueError, match=r"spec\.windowSeconds"):
        build_idle_policy("idle", "ml", **(ARGS | {"window_seconds": 30}))
    with pytest.raises(ValueError, match=r"spec\.action"):
        build_idle_policy("idle", "ml", **(ARGS | {"action": "kill"}))


def test_rows_before_and_after_the_operator_saw_it() -> None:
    body = build_idle_policy("idle", "ml", **ARGS)
    body["metadata"]["creationTimestamp"] = (NOW - timedelta(hours=2)).isoformat()
    fresh = GryviaIdlePolicy.model_validate(body)
    row = idle_policy_row(fresh, NOW)
    assert len(row) == len(IDLE_POLICY_COLUMNS)
    assert row[:5] == ["idle", "suspend", "5%", "30m", "10m"] and row[5:7] == ["-", "-"]
    body["status"] = {
        "phase": "Active",
        "message": "1 of 3 covered running jobs idle",
        "coveredJobs": 3,
        "jobs": [
            {
                "job": "j1",
                "namespace": "ml",
                "idleSince": (NOW - timedelta(minutes=40)).isoformat(),
                "activityPercent": 1.5,
                "warnedAt": (NOW - timedelta(minutes=10)).isoformat(),
                "action": "suspend",
                "actedAt": NOW.isoformat(),
                "message": "GPU activity at most 1.5%",
            }
        ],
    }
    seen = GryviaIdlePolicy.model_validate(body)
    assert idle_policy_row(seen, NOW)[5:7] == [3, 1]
    assert idle_policy_wide_row(seen, NOW)[-3:] == [
        "Namespace",
        "training",
        body["status"]["message"],
    ]
    lines = dict(idle_policy_details(seen, NOW))
    assert lines["Action"] == "warn, then suspend after 10m"
    assert lines["ml/j1"].startswith("GPU activity at most 1.5% (warned 10m ago, suspend")


def test_list_messages_spell_the_plural_of_policy_and_registry() -> None:
    from gryvia_cli.core.cells import plural, plural_of

    assert [plural_of(n) for n in ("idle policy", "model registry", "key", "GPU")] == [
        "idle policies",
        "model registries",
        "keys",
        "GPUs",
    ]
    assert (plural(1, "idle policy"), plural(0, "idle policy")) == (
        "1 idle policy",
        "0 idle policies",
    )
