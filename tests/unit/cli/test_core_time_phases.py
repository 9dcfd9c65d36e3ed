"""Ages, durations and phase buckets (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gryvia_cli.core import timefmt
from gryvia_cli.core.phases import (
    Bucket,
    bucket,
    count_phases,
    is_terminal,
    normalize_phase,
    phase_marker,
)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-0.5, "0s"),
        (-5, "clock skew"),
        (0, "0s"),
        (45, "45s"),
        (119, "119s"),
        (120, "2m"),
        (330, "5m30s"),
        (600, "10m"),
        (42 * 60, "42m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 15 * 60, "3h15m"),
        (20 * 3600, "20h"),
        (2 * 86400, "2d"),
        (2 * 86400 + 4 * 3600, "2d4h"),
        (90 * 86400, "90d"),
        (3 * 365 * 86400 + 30 * 86400, "3y30d"),
        (10 * 365 * 86400, "10y"),
    ],
)
def test_human_duration_matches_kubectl(seconds: float, text: str) -> None:
    assert timefmt.human_duration(seconds) == text


def test_age_handles_missing_and_bad_timestamps() -> None:
    now = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
    assert timefmt.age("2025-06-01T11:55:00Z", now) == "5m"
    assert timefmt.age("2025-06-01T11:59:59.123456Z", now) == "0s"
    assert timefmt.age(None, now) == "-"
    assert timefmt.age("yesterday", now) == "-"
    assert timefmt.age("2025-06-01T12:10:00Z", now) == "clock skew"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "-"),
        (0, "0s"),
        (45, "45s"),
        (125, "2m5s"),
        (3600, "1h"),
        (3661, "1h1m1s"),
        (93600, "1d2h"),
    ],
)
def test_format_seconds(seconds: float | None, text: str) -> None:
    assert timefmt.format_seconds(seconds) == text


def test_seconds_between() -> None:
    assert timefmt.seconds_between("2025-01-01T00:00:00Z", "2025-01-01T00:01:30Z") == 90
    assert timefmt.seconds_between(None, "2025-01-01T00:01:30Z") is None


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        (None, Bucket.WAITING),
        ("", Bucket.WAITING),
        (" queued ", Bucket.WAITING),
        ("Scheduling", Bucket.ACTIVE),
        ("running", Bucket.ACTIVE),
        ("Completed", Bucket.SUCCEEDED),
        ("Succeeded", Bucket.SUCCEEDED),
        ("FAILED", Bucket.FAILED),
        ("Cancelled", Bucket.STOPPED),
        ("Rejected", Bucket.STOPPED),
        ("Preempted", Bucket.STOPPED),
        ("Exploded", Bucket.OTHER),
    ],
)
def test_bucket(phase: str | None, expected: Bucket) -> None:
    assert bucket(phase) is expected


def test_normalize_terminal_marker_and_counts() -> None:
    assert normalize_phase("completed") == "Succeeded"
    assert normalize_phase("weird") == "weird"
    assert is_terminal("Cancelled") and not is_terminal("Running") and not is_terminal(None)
    assert phase_marker("Running") == "ok"
    assert phase_marker("Failed") == "error"
    assert phase_marker("Pending") == "warn"
    assert phase_marker("Cancelled") == "disabled"
    counts = count_phases(["Running", "", "Pending", "Odd"])
    assert counts["Pending"] == 2 and counts["Running"] == 1 and counts["Odd"] == 1
    assert list(counts)[:3] == ["Pending", "Queued", "Scheduling"]
