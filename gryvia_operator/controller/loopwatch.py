"""A watchdog for the operator's event loop: a blocked loop is logged with where it blocks.

The webhook, the probes and every controller share one asyncio loop, so a call that blocks
it (a synchronous read, a long pure pass) delays admission answers past the API server's
timeout (`webhook.timeoutSeconds`, which then fails open) and `/healthz`. The loop stamps a
heartbeat every `interval` seconds; a daemon thread checks it and, when the last stamp is
older than `threshold` seconds, logs a warning once per stall with the loop thread's stack
(`sys._current_frames`), then an info line with the stall's length when the loop runs again.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
import traceback

log = logging.getLogger("gryvia.operator.loop")

THRESHOLD_SECONDS = 1.0
"""A loop silent this long is reported (a fifth of the webhook's default 5 s timeout)."""


class LoopWatch:
    """Watches the running loop from a daemon thread; `start()` on the loop, `stop()` to end.

    `stalls` counts the stalls reported (for tests and metrics)."""

    def __init__(self, threshold: float = THRESHOLD_SECONDS, interval: float = 0.25) -> None:
        self.threshold, self.interval = threshold, interval
        self.stalls = 0
        self._beat = time.monotonic()
        self._stop = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0

    def start(self) -> None:
        """Begin stamping on the running loop and watching it (call from the loop)."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._beat = time.monotonic()
        self._loop.call_soon(self._stamp)
        threading.Thread(target=self._watch, name="loop-watch", daemon=True).start()

    def stop(self) -> None:
        """End the watch (idempotent)."""
        self._stop.set()

    def _stamp(self) -> None:
        self._beat = time.monotonic()
        if not self._stop.is_set() and self._loop is not None:
            self._loop.call_later(self.interval, self._stamp)

    def _watch(self) -> None:
        reported = 0.0  # the heartbeat of the stall last reported
        while not self._stop.wait(self.interval):
            beat = self._beat
            silent = time.monotonic() - beat
            if silent >= self.threshold and beat != reported:
                reported = beat
                self.stalls += 1
                frame = sys._current_frames().get(self._loop_thread)
                stack = "".join(traceback.format_stack(frame, limit=12)) if frame else "?"
                log.warning("event loop blocked for %.1f s, at:\n%s", silent, stack)
            elif reported and beat != reported and silent < self.threshold:
                since = time.monotonic() - reported
                log.info("event loop ran again (blocked from %.1f s ago)", since)
                reported = 0.0
