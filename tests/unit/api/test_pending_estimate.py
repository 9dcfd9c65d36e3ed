"""Issue 20: the fail-fast rule, the start estimate replay and the waiting line (pure)."""

from __future__ import annotations

import datetime as dt

from gryvia_operator.api.pending import (
    EstimatedStart,
    JobsAhead,
    PendingHolder,
    PendingStatus,
    never_fits,
    start_cell,
    waiting_line,
)
from gryvia_operator.api.startestimate import (
    Running,
    Waiting,
    expected_end,
    fits,
    forecast,
    take,
    typical_duration,
)

T0 = dt.datetime(2026, 12, 1, 14, 0, tzinfo=dt.UTC)
FLEET = [("H100", 8), ("H100", 8), ("A100-80G", 4)]


def at(minutes: float) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


# -- fail fast ---------------------------------------------------------------------------


def test_a_type_no_node_and_no_sku_has_never_fits() -> None:
    found = never_fits("B200", 8, 1, FLEET, sku_types=["H100"])
    assert found is not None
    assert (found.kind, found.resource) == ("NoSuchGPUType", "B200")
    assert found.message == (
        'no node has GPU type "B200" (types here: A100-80G, H100) and no catalog SKU prices it'
    )


def test_a_type_only_the_catalog_prices_may_still_come() -> None:
    assert never_fits("B200", 8, 1, FLEET, sku_types=["b200"]) is None


def test_more_gpus_per_pod_than_the_largest_node_is_too_large() -> None:
    found = never_fits("H100", 16, 1, FLEET)
    assert found is not None
    assert found.kind == "TooLarge"
    assert found.message == "each pod needs 16 H100, the largest H100 node has 8"


def test_more_nodes_than_exist_is_too_large() -> None:
    found = never_fits("H100", 8, 3, FLEET)
    assert found is not None
    assert found.kind == "TooLarge"
    assert found.message == "needs 3 nodes with 8 H100 each, only 2 exist"
    assert never_fits("H100", 8, 2, FLEET) is None


def test_more_gpus_than_the_whole_quota_is_too_large() -> None:
    found = never_fits("H100", 8, 2, FLEET, quota_max=8)
    assert found is not None
    assert (found.kind, found.resource) == ("TooLarge", "quota")
    assert found.message == "needs 16 GPUs, more than its quota's whole 8"


def test_cpu_only_and_any_type_without_nodes_always_may_fit() -> None:
    assert never_fits("H100", 0, 5, []) is None
    assert never_fits(None, 8, 1, []) is None
    assert never_fits("any", 4, 1, FLEET) is None


# -- replay ------------------------------------------------------------------------------


def test_fits_needs_distinct_slots() -> None:
    assert fits({"a": 8, "b": 8}, 8, 2)
    assert not fits({"a": 16, "b": 4}, 8, 2)
    free = {"a": 3, "b": 8, "c": 8}
    assert take(free, 4, 1) == {"b": 4}
    assert free == {"a": 3, "b": 4, "c": 8}


def test_fits_now_starts_now() -> None:
    result = forecast({"n1": 8}, Waiting("me", 8), now=T0)
    assert (result.earliest, result.likely, result.unknown_reason) == (T0, T0, "")


def test_behind_two_timeouts_it_starts_when_enough_frees() -> None:
    running = [Running("c", {"n1": 4}, at(20), "timeout"), Running("d", {"n1": 4}, at(65))]
    result = forecast({"n1": 0}, Waiting("me", 8), running, now=T0)
    assert result.likely == at(65)
    assert result.earliest == at(65)
    assert [h.name for h in result.holders] == ["c", "d"]


def test_jobs_ahead_push_likely_past_earliest() -> None:
    running = [Running("c", {"n1": 8}, at(20)), Running("d", {"n2": 8}, at(65))]
    ahead = [Waiting("a", 8, 1, dt.timedelta(minutes=30))]
    result = forecast({"n1": 0, "n2": 0}, Waiting("me", 8), running, ahead, now=T0)
    assert result.earliest == at(20)  # alone, c's end would do
    assert result.likely == at(50)  # a takes n1 at 20 and runs 30 min; d ends at 65
    assert [h.name for h in result.holders] == ["c"]


def test_backfill_lets_a_smaller_job_ahead_go_first_but_strict_does_not() -> None:
    running = [Running("c", {"q": 8}, at(10))]
    ahead = [Waiting("big", 16, 1, dt.timedelta(minutes=5)), Waiting("small", 4, 1, None)]
    loose = forecast({"q": 4}, Waiting("me", 4), running, ahead, now=T0)
    assert loose.likely == at(10)  # small takes the 4 free now; me gets 4 at 10 (big waits)
    strict = forecast({"q": 4}, Waiting("me", 4), running, ahead, now=T0, strict=True)
    assert strict.likely is None  # big needs 16 > 12 ever: nobody behind it moves
    assert strict.unknown_reason


def test_a_holder_without_end_makes_it_unknown_with_the_reason() -> None:
    running = [Running("c", {"n1": 8}, None, "unknown", "job c has no timeout")]
    result = forecast({"n1": 0}, Waiting("me", 8), running, now=T0)
    assert (result.earliest, result.likely) == (None, None)
    assert result.unknown_reason == "job c has no timeout"
    assert [h.name for h in result.holders] == ["c"]


def test_known_ends_come_before_unknown_ones() -> None:
    running = [
        Running("x", {"n1": 4}, None, "unknown", "job x has no timeout"),
        Running("y", {"n2": 8}, at(30), "timeout"),
    ]
    result = forecast({"n1": 4, "n2": 0}, Waiting("me", 8), running, now=T0)
    assert result.likely == at(30)
    assert [h.name for h in result.holders] == ["y"]


def test_never_when_it_does_not_fit_an_empty_pool() -> None:
    result = forecast({"n1": 2}, Waiting("me", 8), [Running("c", {"n1": 4}, at(5))], now=T0)
    assert result.never and result.likely is None
    assert result.unknown_reason == "does not fit even when every running job ends"


def test_expected_end_from_timeout_history_or_unknown() -> None:
    assert expected_end("c", T0, 3600, None, T0) == (at(60), "timeout", "")
    assert expected_end("c", T0, None, dt.timedelta(minutes=10), T0) == (at(10), "history", "")
    end, basis, why = expected_end("c", T0, None, dt.timedelta(minutes=10), at(30))
    assert (end, basis) == (None, "unknown")
    assert why == "job c has no timeout and has run longer than similar jobs (typically 10m)"
    end, basis, why = expected_end("c", T0, None, None, T0)
    assert end is None
    assert why == ("job c has no timeout and no finished job like it (same tenant and GPU type)")


def test_typical_duration_is_the_median_in_whole_seconds() -> None:
    assert typical_duration([10.4, 20.0, 300.0]) == dt.timedelta(seconds=20)
    assert typical_duration([]) is None


# -- the line people read ----------------------------------------------------------------


def test_waiting_line_matches_the_issue() -> None:
    pending = PendingStatus(
        kind="Resources",
        resource="H100",
        needed=16,
        free_now=8,
        ahead=JobsAhead(count=2, names=["a", "b"]),
        holders=[
            PendingHolder(name="c", expected_end=at(20)),
            PendingHolder(name="d", expected_end=at(65)),
        ],
    )
    estimate = EstimatedStart(earliest=at(20), likely=at(65))
    assert waiting_line(pending, estimate) == (
        "waiting: needs 16 H100, 8 free; 2 jobs ahead (a, b); likely start 14:20-15:05 UTC, "
        "when job c (ends 14:20) and d (ends 15:05) finish"
    )
    assert start_cell(estimate, pending) == "14:20-15:05"


def test_waiting_line_unknown_and_never() -> None:
    pending = PendingStatus(kind="Resources", resource="H100", needed=8, free_now=0)
    unknown = EstimatedStart(unknown_reason="job c has no timeout")
    assert waiting_line(pending, unknown) == (
        "waiting: needs 8 H100, 0 free; start unknown: job c has no timeout"
    )
    assert start_cell(unknown, pending) == "unknown"
    never = PendingStatus(kind="TooLarge", message="each pod needs 16 H100, the largest H100 …")
    assert waiting_line(never, unknown).startswith("waiting: never starts: each pod needs 16")
    assert start_cell(None, never) == "never"
    assert waiting_line(None, None) == ""
