"""Named wait helpers for integration tests: poll a condition with a deadline, never sleep blind."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    check: Callable[[], T | None],
    *,
    timeout: float = 60.0,
    interval: float = 0.5,
    what: str = "condition",
) -> T:
    """Call `check` until it returns a truthy value and return that value.

    Raises AssertionError naming `what` and the last value when `timeout` seconds pass.
    """
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last: {last!r}")
