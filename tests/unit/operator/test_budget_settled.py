"""What a budget's pure reconcile asks to write: its recorded crossings, and the stored status
itself while only the clock moved (`reconcile.budget_status.settled`, `reconcile_budget`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from gryvia_operator.api import GryviaBudget
from gryvia_operator.api.budgetscope import resolve_scope
from gryvia_operator.reconcile.budget import UsageLine
from gryvia_operator.reconcile.budget_status import (
    FORECAST_REFRESH_SECONDS,
    reconcile_budget,
    settled,
)

NOW = datetime(2026, 12, 16, 12, tzinfo=UTC)


def _status(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "currentPeriod": {"startDate": "2026-12-01", "endDate": "2026-12-31", "daysRemaining": 15},
        "state": "active",
        "alerts": [],
        "forecast": {"budgetSufficient": True, "projectedCostUSD": 4.0},
        "message": "active: 1.0 % used",
        "conditions": [
            {
                "type": "Enforceable",
                "status": "True",
                "reason": "ReportOnly",
                "message": "m",
                "lastTransitionTime": "2026-12-01T00:00:00Z",
            }
        ],
    }
    return {**base, **changes}


def test_only_the_clock_moved_keeps_the_stored_status() -> None:
    stored = {**_status(), "lastUpdated": "2026-12-16T11:00:00Z"}
    later = _status()
    later["conditions"] = [{**later["conditions"][0], "lastTransitionTime": "2026-12-16T12:00:00Z"}]
    assert settled(stored, later, NOW) == stored


def test_a_forecast_alone_is_rewritten_at_most_every_refresh_interval() -> None:
    just = NOW - timedelta(seconds=FORECAST_REFRESH_SECONDS / 2)
    stored = {**_status(), "lastUpdated": just.strftime("%Y-%m-%dT%H:%M:%SZ")}
    moved = _status(forecast={"budgetSufficient": True, "projectedCostUSD": 5.0})
    assert settled(stored, moved, NOW) == stored
    long_ago = NOW - timedelta(seconds=FORECAST_REFRESH_SECONDS + 1)
    stale = {**stored, "lastUpdated": long_ago.strftime("%Y-%m-%dT%H:%M:%SZ")}
    assert settled(stale, moved, NOW) == {**moved, "lastUpdated": "2026-12-16T12:00:00Z"}


def test_a_real_change_is_written_at_once_with_the_time() -> None:
    stored = {**_status(), "lastUpdated": "2026-12-16T11:59:59Z"}
    assert settled(stored, _status(state="warning"), NOW)["state"] == "warning"
    assert settled({}, _status(), NOW)["lastUpdated"] == "2026-12-16T12:00:00Z"
    invalid = {**stored, "phase": "Invalid"}  # a spec fixed after the invalid status
    assert "phase" not in settled(invalid, _status(), NOW)


def _budget(status: dict[str, Any] | None = None) -> GryviaBudget:
    body: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaBudget",
        "metadata": {"name": "acme", "uid": "u1", "generation": 1},
        "spec": {
            "scope": {"type": "tenant", "name": "acme"},
            "period": {"type": "monthly"},
            "limits": {"costUSD": 10},
            "alerts": [{"threshold": 50}, {"threshold": 90}],
        },
    }
    if status is not None:
        body["status"] = status
    return GryviaBudget.model_validate(body)


def _line(cost: float) -> UsageLine:
    line = UsageLine.of_raw(
        {
            "metadata": {"name": "a", "namespace": "tenant-acme"},
            "spec": {
                "tenant": "acme",
                "job": "a",
                "jobUID": "a",
                "gpus": 1,
                "rate": 3600.0,
                "start": "2026-12-02T00:00:00Z",
                "end": "2026-12-02T00:00:10Z",
                "gpuHours": cost / 3600,
                "cost": cost,
                "final": True,
            },
        }
    )
    assert line is not None
    return line


def test_a_crossing_is_recorded_unsent_once_and_kept_while_nothing_moves() -> None:
    budget = _budget()
    scope = resolve_scope(budget, {}, ["acme"])
    status = reconcile_budget(budget, scope, [_line(6.0)], [], NOW)
    (record,) = status["alerts"]
    assert record["key"] == "u1/2026-12-01/50"
    assert (record["event"], record["delivered"], record["attempts"]) == (False, False, 0)
    again = reconcile_budget(_budget(status), scope, [_line(6.0)], [], NOW + timedelta(seconds=5))
    assert again == status  # recorded once: the stored status stands
