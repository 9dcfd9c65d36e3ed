"""The one open streaming response of a watch or log worker, which another thread may shut.

A worker `open`s the response it reads; `stop()` (for good) or `interrupt()` (reconnect now)
from any other thread shuts its socket so the blocked read returns at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
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

    stop_stream(response)
    release(response)


def stop_stream(response: Any) -> None:
    """Shut a streaming response's socket down so that a read blocked on it in another thread
    returns at once; safe from any thread, idempotent, never raises (a response that is
    already closed or back in the pool has no read left to unblock)."""
    shutdown = getattr(response, "shutdown", None)
    try:
        if callable(shutdown):
            shutdown()  # urllib3 >= 2.3
            return
        import socket

        sock = getattr(getattr(response, "connection", None), "sock", None)
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except (ValueError, RuntimeError, OSError):
        return  # urllib3's way of saying the stream is already closed or released


def stream_lines(response: Any) -> Iterator[str]:
    """Yield decoded lines (without newline) from a streaming response until it ends."""
    pending = b""
    for chunk in response.stream(4096, decode_content=True):
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            yield line.decode("utf-8", "replace")
    if pending:
        yield pending.decode("utf-8", "replace")
