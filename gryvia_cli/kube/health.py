"""The console's connection prober: ask the API server `/version` every few seconds, with a
deadline, and report how it answers (`core.health`: live, slow, reconnecting, unreachable).

Runs on a worker thread until `stop()`; each probe runs on its own daemon thread
(`kube.deadline`), so a stalled network costs a probe its deadline, never the caller a hang.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from gryvia_cli.core.health import DEAD_SECONDS, Health, after_probe
from gryvia_cli.kube.deadline import Abandoned, call_with_deadline
from gryvia_cli.kube.errors import TimedOutError


class VersionAPI(Protocol):
    """The call of `KubeAccess` the prober makes (tests pass a fake)."""

    def server_version(self) -> dict[str, Any]:
        """The API server's `/version` document."""
        ...


class HealthProbe:
    """Probe `access` every `interval` seconds (`failing_interval` while failing), each probe
    with a deadline of `deadline` seconds (`DEAD_SECONDS`: no answer for that long is a dead
    server, a later answer a slow one); `on_health(health)` after every probe whose outcome
    changed the state, attempt or rounded round trip (from the prober's thread)."""

    def __init__(
        self,
        access: VersionAPI,
        on_health: Callable[[Health], None],
        *,
        interval: float = 5.0,
        failing_interval: float = 2.0,
        deadline: float = DEAD_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.access = access
        self.on_health = on_health
        self.interval = interval
        self.failing_interval = failing_interval
        self.deadline = deadline
        self.clock = clock
        self.health = Health()
        self._stop = threading.Event()

    def stop(self) -> None:
        """End `run()` soon; safe from any thread, idempotent."""
        self._stop.set()

    def probe(self) -> Health:
        """One probe; returns (and keeps) the new health."""
        from gryvia_cli.kube.watch import describe_error

        start = self.clock()
        timed_out = False
        try:
            call_with_deadline(self.access.server_version, self.deadline, cancel=(self._stop,))
            answered, error = True, ""
        except Abandoned:
            return self.health
        except Exception as exc:  # refused, cut, or no answer by the deadline: a failure
            answered, error = False, describe_error(exc)
            timed_out = isinstance(exc, TimedOutError)  # its own timeout came first: slow?
        end = self.clock()
        self.health = after_probe(
            self.health,
            answered=answered,
            seconds=end - start,
            error=error,
            now=end,
            timed_out=timed_out,
            dead_after=self.deadline,
        )
        return self.health

    def run(self) -> None:
        """Probe until `stop()`."""
        shown: tuple[str, int, float] | None = None
        while not self._stop.is_set():
            health = self.probe()
            if self._stop.is_set():
                return
            key = (health.state, health.attempt, round(health.seconds, 1))
            if health.state == "live":
                key = ("live", 0, 0.0)
            if key != shown:
                shown = key
                self.on_health(health)
            again = health.failing or health.stalled
            self._stop.wait(self.failing_interval if again else self.interval)
