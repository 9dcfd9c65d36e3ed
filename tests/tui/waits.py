"""Named wait helpers for pilot tests: poll a condition with a deadline, never sleep blind."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from textual.css.query import NoMatches
from textual.pilot import Pilot
from textual.widgets import Input

from gryvia_cli.tui.app import GryviaApp


async def wait_until(
    pilot: Pilot[Any], check: Callable[[], Any], *, timeout: float = 10.0, what: str = "condition"
) -> Any:
    """Pause the pilot until `check()` is truthy; AssertionError naming `what` on timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except NoMatches:  # the screen has not composed yet
            last = None
        if last:
            return last
        await pilot.pause(0.05)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last: {last!r}")


async def wait_in_thread(
    check: Callable[[], Any],
    *,
    timeout: float = 60.0,
    interval: float = 0.2,
    what: str = "condition",
) -> Any:
    """Like wait_until for blocking checks (kubectl): each check runs in a thread."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = await asyncio.to_thread(check)
        if last:
            return last
        await asyncio.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last: {last!r}")


async def wait_loaded(pilot: Pilot[Any]) -> None:
    """Until every kind is listed (or refused: no watcher is still connecting; the others
    start once the first view has drawn its list), the app is live and the view has drawn
    the store."""
    app = pilot.app
    assert isinstance(app, GryviaApp)
    await wait_until(
        pilot,
        lambda: (
            {"jobs", "gpunodes", "usage"} <= app.store.loaded
            and app.connection == "live"
            and app.feed is not None
            and all(state != "connecting" for state, _ in app.feed.states.values())
            and not app.feed.pending
        ),
        what="the first list of every kind",
    )
    await pilot.pause(0.1)


async def settle(pilot: Pilot[Any]) -> None:
    """wait_loaded, then stop cursor blinking so screenshots are stable."""
    await wait_loaded(pilot)
    for box in pilot.app.screen.query(Input):
        box.cursor_blink = False
    await pilot.pause()
