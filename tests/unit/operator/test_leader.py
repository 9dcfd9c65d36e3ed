"""The Lease rules of leader election (`gryvia_operator/controller/leader.py`), after client-go's
leaderelection: who holds a Lease, the body that claims, renews or takes it over, the body that
releases it, and when a standby may take it (its own clock, not the holder's)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any, cast

import pytest

from gryvia_operator.controller.kubeapi import KubeApi, NotFound
from gryvia_operator.controller.leader import (
    LeaderElector,
    LeaseTimings,
    claimed,
    holder_of,
    micro_time,
    record_of,
    released,
)
from gryvia_operator.settings import parse_settings

NOW = datetime(2026, 12, 5, 20, 30, 29, 123456, tzinfo=UTC)


def _lease(
    holder: str, renewed: str = "2026-12-05T20:30:00.000000Z", **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": "gryvia-operator",
            "namespace": "gryvia-system",
            "resourceVersion": "7",
        },
        "spec": {
            "holderIdentity": holder,
            "renewTime": renewed,
            "acquireTime": "2026-12-05T20:00:00.000000Z",
            "leaseDurationSeconds": 15,
            "leaseTransitions": 2,
            **spec,
        },
    }


def test_micro_time_is_utc_with_microseconds() -> None:
    assert micro_time(NOW) == "2026-12-05T20:30:29.123456Z"


def test_holder_and_record() -> None:
    assert holder_of(None) == "" and holder_of(_lease("")) == ""
    assert record_of(_lease("a")) == ("a", "2026-12-05T20:30:00.000000Z")


def test_a_new_lease_names_its_holder_with_no_transition() -> None:
    body = claimed(None, "gryvia-operator", "gryvia-system", "a", NOW, 15)
    assert body["metadata"] == {"name": "gryvia-operator", "namespace": "gryvia-system"}
    assert body["spec"] == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-12-05T20:30:29.123456Z",
        "renewTime": "2026-12-05T20:30:29.123456Z",
        "leaseTransitions": 0,
    }


def test_a_renewal_keeps_the_acquire_time_and_the_resource_version() -> None:
    body = claimed(_lease("a"), "gryvia-operator", "gryvia-system", "a", NOW, 15)
    assert body["metadata"]["resourceVersion"] == "7"
    assert body["spec"]["acquireTime"] == "2026-12-05T20:00:00.000000Z"
    assert body["spec"]["renewTime"] == micro_time(NOW)
    assert body["spec"]["leaseTransitions"] == 2


def test_a_take_over_counts_a_transition() -> None:
    body = claimed(_lease("a"), "gryvia-operator", "gryvia-system", "b", NOW, 15)
    assert body["spec"]["holderIdentity"] == "b"
    assert body["spec"]["acquireTime"] == micro_time(NOW)
    assert body["spec"]["leaseTransitions"] == 3


def test_a_release_empties_the_holder_and_shortens_the_lease() -> None:
    body = released(_lease("a"), NOW)
    assert body["spec"]["holderIdentity"] == ""
    assert body["spec"]["leaseDurationSeconds"] == 1
    assert body["metadata"]["resourceVersion"] == "7"


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_standby_takes_a_lease_only_after_it_stayed_unchanged_for_its_duration() -> None:
    clock = _Clock()
    elector = LeaderElector(
        cast(KubeApi, None), "gryvia-operator", "gryvia-system", "b", LeaseTimings(), clock
    )
    held = _lease("a", leaseDurationSeconds=15)
    # The renew time is long past by the holder's clock: it does not matter, only change does.
    assert not elector._expired(held)
    clock.now += 14.9
    assert not elector._expired(held)
    renewed = _lease("a", renewed="2026-12-05T20:30:02.000000Z")
    clock.now += 1
    assert not elector._expired(renewed)  # a renewal seen restarts the wait
    clock.now += 15
    assert elector._expired(renewed)
    assert elector._expired(_lease(""))  # released: take it at once


class _Api:
    """Answers the elector's Lease reads from a dict and records its writes."""

    def __init__(self, lease: dict[str, Any] | None) -> None:
        self.lease = lease
        self.writes: list[dict[str, Any]] = []

    async def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        if self.lease is None:
            raise NotFound(404, "NotFound", name)
        return self.lease

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        self.writes.append(body)
        return body

    replace = create


def test_the_elector_creates_a_missing_lease_and_renews_then_leaves_a_live_one_alone() -> None:
    api = _Api(None)
    mine = LeaderElector(cast(KubeApi, api), "l", "ns", "a", LeaseTimings())
    assert asyncio.run(mine.try_once())
    assert api.writes[-1]["spec"]["holderIdentity"] == "a"
    api.lease = {
        **api.writes[-1],
        "metadata": {**api.writes[-1]["metadata"], "resourceVersion": "1"},
    }
    assert asyncio.run(mine.try_once())  # a renewal
    assert len(api.writes) == 2
    other = LeaderElector(cast(KubeApi, api), "l", "ns", "b", LeaseTimings())
    assert not asyncio.run(other.try_once())
    assert other.leader_name == "a" and other.describe() == "standby (leader: a)"
    assert len(api.writes) == 2


@pytest.mark.parametrize(
    "flags",
    [
        ["--lease-duration=10", "--renew-deadline=10"],
        ["--retry-period=11"],
        ["--renew-deadline=20"],
    ],
)
def test_timings_where_a_leader_could_outlive_its_lease_are_refused(flags: list[str]) -> None:
    with pytest.raises(ValueError, match="retry-period < --renew-deadline < --lease-duration"):
        parse_settings(flags)


def test_a_standby_tries_again_when_the_lease_it_saw_expires_not_a_retry_period_later() -> None:
    clock = _Clock()
    elector = LeaderElector(
        cast(KubeApi, None), "gryvia-operator", "gryvia-system", "b", LeaseTimings(), clock
    )
    assert not elector._expired(_lease("a", leaseDurationSeconds=15))
    assert elector.next_try(0.1) == pytest.approx(0.55)  # a quarter retry period, jittered
    clock.now += 14.7
    assert elector.next_try(0.1) == pytest.approx(0.31)  # its expiry comes first
    clock.now += 0.31
    assert elector._expired(_lease("a", leaseDurationSeconds=15))
    assert elector.next_try(0.1) == pytest.approx(0.0, abs=1e-9)
