"""How well the API server answers, from one probe after another: a pure state machine.

A prober (`gryvia_cli.kube.health`) asks the server a cheap question every few seconds with
a deadline and folds each outcome into a `Health` with `after_probe`. The console's top bar
shows the state: `live` (answers within `SLOW_SECONDS`), `slow` (answers, but later),
`reconnecting` (the last probes failed: attempt N and the last error) and `unreachable`
(failing for `UNREACHABLE_SECONDS` or longer). Times are seconds (floats, monotonic clock).

Slow is not dead: only a request that got no answer for `DEAD_SECONDS` (the prober's
deadline, and how long the console waits for a connection and its TLS handshake) or that
failed otherwise (refused, reset) makes the connection `reconnecting`. A request whose own
timeout ended its wait sooner (a short `request_timeout`) says the server is slow (`slow
>5.0s`), until such timeouts have left it without an answer for `DEAD_SECONDS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

HealthState = Literal["live", "slow", "reconnecting", "unreachable"]

SLOW_SECONDS = 2.0
"""An answer later than this makes the connection `slow`."""
DEAD_SECONDS = 15.0
"""No answer for this long makes the connection `reconnecting`: the prober's deadline, and
how long the console waits for a connection and its TLS handshake (a server 5 s away needs
about 10 s for a first answer)."""
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
    stalled_since: float | None = None
    """While `slow` because requests timed out before `DEAD_SECONDS` (no answer yet): when
    the first of them was sent; None once an answer came."""

    @property
    def failing(self) -> bool:
        """True while probes fail (reconnecting or unreachable)."""
        return self.state in ("reconnecting", "unreachable")

    @property
    def stalled(self) -> bool:
        """True while slow without an answer yet (the last probe timed out early)."""
        return self.stalled_since is not None

    def label(self) -> str:
        """The top bar's words: `live`, `slow 3.1s` (answered after 3.1 s), `slow >5.0s`
        (gave up after 5 s, not yet for long enough to call it dead), `reconnecting (attempt 2,
        <error>)`, `unreachable (attempt 9, <error>)`."""
        if self.state == "slow":
            return f"slow {'>' if self.stalled else ''}{self.seconds:.1f}s"
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
    timed_out: bool = False,
    slow_after: float = SLOW_SECONDS,
    dead_after: float = DEAD_SECONDS,
    unreachable_after: float = UNREACHABLE_SECONDS,
) -> Health:
    """The health after one probe: `answered` with a round trip of `seconds`, or failed with
    `error` at monotonic time `now` after `seconds`. `timed_out`: it failed because a timeout
    of its request gave up waiting (not refused, reset or cut): before `dead_after` seconds
    without an answer (counted from the first such probe) that is `slow`, not a failure."""
    if answered:
        state: HealthState = "slow" if seconds > slow_after else "live"
        return Health(state, 0, "", seconds, None)
    stalled_since = prev.stalled_since if prev.stalled_since is not None else now - seconds
    if timed_out and now - stalled_since < dead_after and not prev.failing:
        return Health("slow", 0, "", seconds, None, stalled_since)
    since = prev.failing_since
    if since is None:  # failing from now on; a stall from when its first request was sent
        since = stalled_since if timed_out or prev.stalled else now
    state = "unreachable" if now - since >= unreachable_after else "reconnecting"
    return Health(state, prev.attempt + 1, error, prev.seconds, since)
