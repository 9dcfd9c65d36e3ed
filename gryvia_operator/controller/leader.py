"""Leader election through a `coordination.k8s.io/v1` Lease, as client-go's leaderelection
package does it (the election controller-runtime operators get by default).

One replica holds the Lease and renews it every `retry_period`; the others read it four times
as often and take it only when the record they see (holder and renew time) has not changed
for the Lease's `leaseDurationSeconds` by their own clock, so clocks that disagree do not
matter. A
leader that has not renewed for `renew_deadline` (shorter than the lease duration) has lost:
the process stops before any standby may take the Lease. A leader that stops gracefully
releases it (empty holder, duration 1 s), so a standby takes over at its next try.

The body rules are pure (`holder_of`, `claimed`, `released`); `LeaderElector` does the reads,
writes and timing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import socket
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gryvia_operator.controller.kubeapi import AlreadyExists, Conflict, KubeApi, KubeError, NotFound

log = logging.getLogger("gryvia.leader")
STANDBY_READS = 4
"""How many times a standby reads the Lease per retry period (`LeaderElector.next_try`)."""


@dataclass(frozen=True)
class LeaseTimings:
    """Seconds of the election (controller-runtime's defaults): a standby takes a Lease
    unchanged for `lease_duration`; a leader stops when it could not renew for
    `renew_deadline`; both try every `retry_period`. Needs retry < renew < lease."""

    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


def micro_time(now: datetime) -> str:
    """A Kubernetes MicroTime (RFC 3339 with microseconds, UTC): `2026-12-05T20:30:29.123456Z`."""
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def holder_of(lease: Mapping[str, Any] | None) -> str:
    """The Lease's `spec.holderIdentity`; "" when there is no Lease or nobody holds it."""
    return str(((lease or {}).get("spec") or {}).get("holderIdentity") or "")


def record_of(lease: Mapping[str, Any] | None) -> tuple[str, str]:
    """What a standby watches for change: (holder, renewTime)."""
    spec = (lease or {}).get("spec") or {}
    return holder_of(lease), str(spec.get("renewTime") or "")


def claimed(
    lease: Mapping[str, Any] | None,
    name: str,
    namespace: str,
    identity: str,
    now: datetime,
    duration: float,
) -> dict[str, Any]:
    """The Lease body that makes `identity` its holder at `now`: a new Lease, a renewal (the
    acquire time kept) or a take-over (acquire time now, `leaseTransitions` + 1). The
    existing `metadata.resourceVersion` is kept, so a write that raced another fails."""
    spec = dict((lease or {}).get("spec") or {})
    stamp = micro_time(now)
    if holder_of(lease) != identity:
        spec["acquireTime"] = stamp
        if lease is not None:
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
    spec.update(
        holderIdentity=identity,
        leaseDurationSeconds=max(1, round(duration)),
        renewTime=stamp,
    )
    spec.setdefault("leaseTransitions", 0)
    spec.setdefault("acquireTime", stamp)
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if lease is not None:
        meta["resourceVersion"] = lease["metadata"]["resourceVersion"]
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": spec}


def released(lease: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The Lease body that gives it up (client-go's ReleaseOnCancel): no holder, a duration
    of 1 s, renew time now; the resourceVersion kept."""
    spec = {**(lease.get("spec") or {})}
    stamp = micro_time(now)
    spec.update(holderIdentity="", leaseDurationSeconds=1, renewTime=stamp, acquireTime=stamp)
    meta = {k: lease["metadata"][k] for k in ("name", "namespace", "resourceVersion")}
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": spec}


def default_identity() -> str:
    """This replica's name in the Lease: the pod's (`POD_NAME`), else host, pid and a random
    suffix (two processes on one host never share it)."""
    pod = os.environ.get("POD_NAME")
    return pod or f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:6]}"


class LeaderElector:
    """Acquire, keep and release one Lease for this process.

    `role` is `standby` until `acquire` returns, then `leader`; `lost` once `keep` has
    returned (renewal failed for `renew_deadline`, or another replica holds the Lease);
    `leader_name` is the holder last seen."""

    def __init__(
        self,
        api: KubeApi,
        name: str,
        namespace: str,
        identity: str,
        timings: LeaseTimings,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.api, self.name, self.namespace = api, name, namespace
        self.identity, self.timings, self._clock = identity, timings, clock
        self.role = "standby"
        self.leader_name = ""
        self._record: tuple[str, str] | None = None
        self._seen_at = 0.0
        self._duration = timings.lease_duration
        self._renewed_at = 0.0

    def _expired(self, lease: Mapping[str, Any] | None) -> bool:
        """True when nobody holds `lease` or its record has not changed for its duration."""
        record = record_of(lease)
        now = self._clock()
        if record != self._record:
            self._record, self._seen_at = record, now
        spec = (lease or {}).get("spec") or {}
        self._duration = float(spec.get("leaseDurationSeconds") or self.timings.lease_duration)
        return not record[0] or now - self._seen_at >= self._duration

    def next_try(self, jitter: float) -> float:
        """Seconds a standby waits before its next try: a quarter of `retry_period` times
        (1 + `jitter`) (0 to 0.2), but no longer than until the record it saw expires (its own
        clock), so a crashed leader's Lease is taken when it expires, not up to a retry period
        later. A quarter: the record's age counts from when this replica saw it change, so a
        standby that read the Lease once a retry period saw each renewal up to 2.4 s late and
        took a crashed leader's Lease that much after it expired (hand-overs of 15-17 s at a
        15 s lease, issue 40); reading it four times as often (one GET a half second) bounds
        that to 0.6 s. Still by its own clock only, so clocks that disagree do not matter."""
        retry = self.timings.retry_period / STANDBY_READS * (1 + jitter)
        expires_in = self._seen_at + self._duration - self._clock()
        return max(0.0, min(retry, expires_in + 0.01))

    async def try_once(self) -> bool:
        """One try to create, renew or take the Lease; True when this process holds it.
        API errors and a lost race count as False (logged at debug)."""
        try:
            try:
                lease: dict[str, Any] | None = await asyncio.wait_for(
                    self.api.get("Lease", self.name, self.namespace), self.timings.retry_period
                )
            except NotFound:
                lease = None
            holder = holder_of(lease)
            if holder != self.identity and not self._expired(lease):
                self.leader_name = holder
                return False
            body = claimed(
                lease,
                self.name,
                self.namespace,
                self.identity,
                datetime.now(UTC),
                self.timings.lease_duration,
            )
            write = self.api.create(body) if lease is None else self.api.replace(body)
            await asyncio.wait_for(write, self.timings.retry_period)
        except (KubeError, TimeoutError) as exc:
            if isinstance(exc, Conflict | AlreadyExists):
                log.debug("lost the race for lease %s/%s", self.namespace, self.name)
            else:
                log.debug("lease %s/%s: %s", self.namespace, self.name, exc)
            return False
        if holder != self.identity:
            log.info("acquired lease %s/%s as %s", self.namespace, self.name, self.identity)
        self.leader_name = self.identity
        self._renewed_at = self._clock()
        return True

    async def acquire(self) -> None:
        """Try four times a `retry_period` (with up to 20 % jitter), and when the Lease seen
        expires, until this process leads."""
        while not await self.try_once():
            await asyncio.sleep(self.next_try(0.2 * random.random()))
        self.role = "leader"

    async def keep(self) -> None:
        """Renew every `retry_period`; return (role `lost`) when another replica holds the
        Lease or `renew_deadline` has passed since the last renewal."""
        while True:
            await asyncio.sleep(self.timings.retry_period)
            if await self.try_once():
                continue
            gone = self.leader_name not in ("", self.identity)
            if gone or self._clock() - self._renewed_at >= self.timings.renew_deadline:
                self.role = "lost"
                log.error(
                    "lost lease %s/%s (holder now %r): stopping",
                    self.namespace,
                    self.name,
                    self.leader_name,
                )
                return

    async def release(self) -> None:
        """Give the Lease up if this process still holds it (best effort, one try)."""
        if self.role != "leader":
            return
        try:
            lease = await asyncio.wait_for(
                self.api.get("Lease", self.name, self.namespace), self.timings.retry_period
            )
            if holder_of(lease) == self.identity:
                body = released(lease, datetime.now(UTC))
                await asyncio.wait_for(self.api.replace(body), self.timings.retry_period)
                log.info("released lease %s/%s", self.namespace, self.name)
        except (KubeError, TimeoutError) as exc:
            log.warning("could not release lease %s/%s: %s", self.namespace, self.name, exc)
        self.role = "released"

    def describe(self) -> str:
        """`leader`, or `standby (leader: NAME)` for /readyz and /healthz."""
        if self.role == "standby":
            return f"standby (leader: {self.leader_name or 'none yet'})"
        return self.role
