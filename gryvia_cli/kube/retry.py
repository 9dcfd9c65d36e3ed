"""Waiting out a stalled or cut connection to the API server during a long-running command.

`submit --wait/--logs`, `logs -f`, `status JOB --watch` and `queue -w` poll and stream for
as long as a job runs. A request that gets no answer (refused, reset, timed out: see
`kube.errors.is_transient`) does not end them: a `Link` says
`reconnecting to the API server (attempt N, last error: ...)` on stderr once per failed
attempt, waits with exponential back-off and jitter (0.5 s doubling, capped at
`MAX_DELAY` so that a connection coming back is noticed within a few seconds), and says
`reconnected to the API server` once a request works again. Only the command's own
deadline (`--wait-timeout`) ends the wait, with WaitTimeoutError (exit 124). Answers that
retrying cannot change (401, 403, 404, 422, ...) are raised at once.

Polls use reads bounded by `POLL_READ_TIMEOUT` (`KubeAccess.shorten_reads`), far shorter
than any wait, so a blackholed connection is noticed within about 20 s (a read timeout,
then urllib3's one retry on a fresh connection whose handshake has a 5 s deadline).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from gryvia_cli.errors import WaitTimeoutError
from gryvia_cli.kube.errors import is_transient
from gryvia_cli.kube.watch import Backoff, describe_error

T = TypeVar("T")

POLL_READ_TIMEOUT = 10.0
"""Seconds a poll waits for the API server's answer during a wait (the session's
`request_timeout` when that is shorter)."""
MAX_DELAY = 4.0
"""Cap of the back-off between reconnect attempts (seconds)."""
RETRY_BACKOFF = Backoff(initial=0.5, maximum=MAX_DELAY, factor=2.0, jitter=0.25)


class Link:
    """The connection to the API server as one long-running command sees it.

    `call(fn)` runs one request (or a few) and retries it while it fails transiently;
    `failed(exc)` / `ok()` are the same bookkeeping for loops that schedule their own next
    try. Messages go to `say` (one line each). Not thread-safe: use it from one thread.
    """

    def __init__(
        self,
        say: Callable[[str], None],
        *,
        backoff: Backoff = RETRY_BACKOFF,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.say = say
        self.backoff = backoff
        self.clock = clock
        self.sleep = sleep
        self.attempt = 0
        """Failed attempts in the current outage (0: connected)."""
        self.last_error = ""

    @property
    def lost(self) -> bool:
        """True between a transient failure and the next success."""
        return self.attempt > 0

    def failed(self, exc: BaseException) -> float:
        """Record a transient failure: say `reconnecting ...` and return the seconds to wait
        before the next attempt."""
        self.attempt += 1
        self.last_error = describe_error(exc)
        self.say(
            f"reconnecting to the API server (attempt {self.attempt}, "
            f"last error: {self.last_error})"
        )
        return self.backoff.delay(self.attempt - 1)

    def ok(self) -> None:
        """Record a success: say `reconnected ...` when it ends an outage."""
        if self.attempt:
            self.say(f"reconnected to the API server after {self.attempt} failed attempt(s)")
        self.attempt = 0
        self.last_error = ""

    def call(
        self,
        fn: Callable[[], T],
        *,
        deadline: float | None = None,
        what: str = "the wait",
        hint: str | None = None,
    ) -> T:
        """Return `fn()`, retrying it (with back-off) while it fails transiently.

        Other errors propagate at once. When `deadline` (a `clock()` time; None: none)
        passes during an outage, raises WaitTimeoutError `<what> did not end before the wait
        timeout: ...` with `hint`.
        """
        while True:
            try:
                result = fn()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                pause = self.failed(exc)
                self.pause(pause, deadline, what, hint)
                continue
            self.ok()
            return result

    def pause(self, seconds: float, deadline: float | None, what: str, hint: str | None) -> None:
        """Sleep `seconds`, or until `deadline`; raise WaitTimeoutError once it has passed."""
        now = self.clock()
        if deadline is not None and now >= deadline:
            raise WaitTimeoutError(self.expired_message(what), hint=hint)
        self.sleep(seconds if deadline is None else min(seconds, deadline - now))
        if deadline is not None and self.clock() >= deadline:
            raise WaitTimeoutError(self.expired_message(what), hint=hint)

    def expired_message(self, what: str) -> str:
        """The WaitTimeoutError message for a deadline that passed during an outage."""
        return (
            f"{what} did not end before the wait timeout: the API server has not answered "
            f"for {self.attempt} attempt(s) (last error: {self.last_error})"
        )
