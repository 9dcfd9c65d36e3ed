"""How well the API server answers, from one probe after another: a pure state machine.

A prober (`gryvia_cli.kube.health`) asks the server a cheap question every few seconds with
a deadline and folds each outcome into a `Health` with `after_probe`. The console's top bar
shows the state: `live` (answers within `SLOW_SECONDS`), `slow` (answers, but later),
`reconnecting` (the last probes failed: attempt N and the last error) and `unreachable`
(failing for `UNREACHABLE_SECONDS` or longer). Times are seconds (floats, monotonic clock).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

HealthState = Literal["live", "slow", "reconnecting", "unreachable"]

SLOW_SECONDS = 2.0
"""An answer later than this makes the connection `slow`."""
UNREACHABLE_SECONDS = 60.0
"""Failing probes for this long make the connection `unreachable` (still retried)."""


@dataclass(frozen=True)
class Health:
    """The connection as the last probe left it.

    `attempt` counts failed probes in a row (0 when the last one answered), `error` is the
    last failure's one-line reason, `seconds` the last answer's round trip, `failing_since`
    the monotonic time of the first failure of the current run (None while answering).
    """

    state: HealthState = "live"
    attempt: int = 0
    error: str = ""
    seconds: float = 0.0
    failing_since: float | None = None

    @property
    def failing(self) -> bool:
        """True while probes fail (reconnecting or unreachable)."""
        return self.state in ("reconnecting", "unreachable")

    def label(self) -> str:
        """The top bar's words: `live`, `slow 3.1s`, `reconnecting (attempt 2, <error>)`,
        `unreachable (attempt 9, <error>)`."""
        if self.state == "slow":
            return f"slow {self.seconds:.1f}s"
        if self.failing:
            reason = f", {self.error}" if self.error else ""
            return f"{self.state} (attempt {self.attempt}{reason})"
        return self.state


def after_probe(
    prev: Health,
    *,
    answered: bool,
    seconds: float,
    error: str,
    now: float,
    slow_after: float = SLOW_SECONDS,
    unreachable_after: float = UNREACHABLE_SECONDS,
) -> Health:
    """The health after one probe: `answered` with a round trip of `seconds`, or failed with
    `error` at monotonic time `now`."""
    if answered:
        state: HealthState = "slow" if seconds > slow_after else "live"
        return Health(state, 0, "", seconds, None)
    since = prev.failing_since if prev.failing_since is not None else now
    state = "unreachable" if now - since >= unreachable_after else "reconnecting"
    return Health(state, prev.attempt + 1, error, prev.seconds, since)
