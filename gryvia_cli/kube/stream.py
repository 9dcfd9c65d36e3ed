"""The one open streaming response of a watch or log worker, which another thread may shut.

A worker `open`s the response it reads; `stop()` (for good) or `interrupt()` (reconnect now)
from any other thread shuts its socket so the blocked read returns at once.
"""

from __future__ import annotations

import threading
from typing import Any


def release(response: Any) -> None:
    """Give the response's connection back to its pool (when it has one)."""
    release = getattr(response, "release_conn", None)
    if callable(release):
        release()


class HeldStream:
    """The one open response of a worker, which `stop()` or `interrupt()` may shut from
    another thread. `wake` is set by both: it cuts a back-off wait or a pending request."""

    def __init__(self) -> None:
        self.stop_event = threading.Event()
        self.wake = threading.Event()
        self._lock = threading.Lock()
        self._response: Any = None

    def open(self, response: Any) -> bool:
        """Hold `response`; False (and the response shut) when already stopped."""
        from gryvia_cli.kube.access import stop_stream

        with self._lock:
            if not self.stop_event.is_set():
                self._response = response
                return True
        stop_stream(response)
        release(response)
        return False

    def close(self) -> None:
        """Release the held response's connection."""
        with self._lock:
            response, self._response = self._response, None
        if response is not None:
            release(response)

    def interrupt(self) -> None:
        """Shut the held response down (its read raises) and set `wake`."""
        from gryvia_cli.kube.access import stop_stream

        self.wake.set()
        with self._lock:
            response = self._response
        if response is not None:
            stop_stream(response)

    def stop(self) -> None:
        """Set the stop flag and shut the held response down."""
        self.stop_event.set()
        self.interrupt()


def drop(response: Any) -> None:
    """Shut and release a response that arrived after its caller left."""
    from gryvia_cli.kube.access import stop_stream

    stop_stream(response)
    release(response)
