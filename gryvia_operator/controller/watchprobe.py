"""Does this replica still get answers from the API server's watches? A probe for /readyz.

kopf reconnects a silent watch stream by itself (`settings.watching.inactivity_timeout`), but
while the way to the API server is broken (a blackholed connection, a server that stopped
answering) it retries without end and nothing outside saw it: /readyz kept saying "ready",
so a Service sent admission reviews to a replica that judged them on frozen caches and a
Deployment's rollout counted it as available (issue 40 point 5).

The probe opens one short watch of GryviaTenants (a kind every replica, leader or standby,
already lists and watches) every `period` seconds, with `timeoutSeconds=period`, so a healthy
API server ends each on time. When nothing has answered for `2 * period + grace` seconds the
replica reports "not ready: watches lost for N s"; the first answer after that makes it ready
again. `WatchHealth` is the pure rule; `probe_watches` does the requests.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gryvia_operator.api.resources import by_kind
from gryvia_operator.controller.kubeapi import KubeApi, KubeError

log = logging.getLogger("gryvia.watchprobe")

PROBED_KIND = "GryviaTenant"
"""The kind the probe watches: cluster-scoped, few objects, watched by every replica."""


@dataclass
class WatchHealth:
    """When the API server last answered a probe, and whether that is too long ago.

    `period`: seconds of one probe watch (its `timeoutSeconds`); `grace`: seconds of slack
    for a slow answer on a loaded machine. Times come from `clock` (monotonic seconds)."""

    period: float
    grace: float = 5.0
    clock: Callable[[], float] = time.monotonic
    answered_at: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.answered_at = self.clock()  # the start counts as an answer: caches gate readiness

    @property
    def limit(self) -> float:
        """Seconds of silence after which the watches count as lost: two probes and `grace`."""
        return 2 * self.period + self.grace

    def answered(self) -> None:
        """Record an answer from the API server (a listing, or a probe watch that ended)."""
        self.answered_at = self.clock()

    def silent_for(self) -> float:
        """Seconds since the last answer."""
        return max(0.0, self.clock() - self.answered_at)

    def lost(self) -> bool:
        """True when no probe was answered for longer than `limit`."""
        return self.silent_for() > self.limit

    def describe(self) -> str:
        """`watches lost for 31 s (no answer from the API server)`, for /readyz."""
        return f"watches lost for {self.silent_for():.0f} s (no answer from the API server)"


async def probe_watches(api: KubeApi, health: WatchHealth) -> None:
    """Probe for ever: list GryviaTenants (one item) for a resourceVersion, then watch from it
    for `health.period` seconds; each answer is recorded in `health`. Errors (refused,
    timed out, cut) are logged at debug, anything else with its traceback, and retried after
    a second; the loop ends only when cancelled."""
    path = by_kind(PROBED_KIND).path(None)
    seconds = max(1, round(health.period))
    while True:
        try:
            listing = await api.get_path(path, {"limit": "1"})
            health.answered()
            query = {
                "watch": "1",
                "timeoutSeconds": str(seconds),
                "allowWatchBookmarks": "true",
                "resourceVersion": str(listing.get("metadata", {}).get("resourceVersion", "")),
            }
            await api.watch_once(path, query, timeout=seconds + health.grace)
            health.answered()
        except KubeError as exc:
            log.debug("watch probe: %s", exc)
            await asyncio.sleep(1.0)
        except Exception:  # a bug here must not end the probe: /readyz would stay 503
            log.exception("watch probe failed")
            await asyncio.sleep(1.0)
