"""Blocking calls with a deadline that the caller can walk away from.

`call_with_deadline` runs a call on its own daemon thread and waits for it at most `seconds`,
returning early (with `Abandoned`) when one of the caller's `cancel` events is set: a thread
that must stop at once (the console quitting, a watch told to reconnect) never waits for a
socket that a stalled network keeps open. The call itself goes on until its own socket
timeout; whatever it returns late is handed to `on_late` (to release a connection) and then
dropped. Daemon threads never keep the process alive.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from gryvia_cli.errors import ClusterUnreachableError

T = TypeVar("T")

POLL_SECONDS = 0.05
"""How often a waiting caller looks at its cancel events (seconds)."""


class DeadlineExceeded(ClusterUnreachableError):
    """The call did not answer within its deadline (a stalled or very slow network)."""


class Abandoned(Exception):
    """A cancel event was set while the call was running; its result will be dropped."""


class _Slot:
    def __init__(self, on_late: Callable[[Any], None] | None) -> None:
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.abandoned = False
        self.value: Any = None
        self.error: BaseException | None = None
        self.on_late = on_late

    def run(self, call: Callable[[], Any]) -> None:
        try:
            value = call()
        except BaseException as exc:  # handed to the caller, who re-raises it
            self.error = exc
            value = None
        with self.lock:
            self.value = value
            self.done.set()
            late = self.abandoned
        if late and value is not None and self.on_late is not None:
            with contextlib.suppress(Exception):  # nobody is left to tell
                self.on_late(value)

    def abandon(self) -> bool:
        """Mark abandoned; False when the call already finished (take its result)."""
        with self.lock:
            if self.done.is_set():
                return False
            self.abandoned = True
            return True


def call_with_deadline(
    call: Callable[[], T],
    seconds: float,
    *,
    cancel: Sequence[threading.Event] = (),
    on_late: Callable[[T], None] | None = None,
    what: str = "the API server",
) -> T:
    """Run `call()` on a daemon thread and return its result (or raise its exception).

    Raises DeadlineExceeded when it takes longer than `seconds`, Abandoned as soon as an
    event of `cancel` is set; in both cases the thread is left to finish on its own and a
    result it returns later goes to `on_late(result)`.
    """
    slot = _Slot(on_late)
    thread = threading.Thread(target=slot.run, args=(call,), name="gryvia-call", daemon=True)
    thread.start()
    end = time.monotonic() + seconds
    while not slot.done.wait(min(POLL_SECONDS, max(end - time.monotonic(), 0.0))):
        if any(e.is_set() for e in cancel):
            if slot.abandon():
                raise Abandoned()
            break
        if time.monotonic() >= end:
            if slot.abandon():
                raise DeadlineExceeded(f"{what} did not answer within {seconds:g}s")
            break
    if slot.error is not None:
        raise slot.error
    return slot.value  # type: ignore[no-any-return]
