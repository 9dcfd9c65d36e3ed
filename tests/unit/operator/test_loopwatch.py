"""The event-loop watchdog names where a blocked loop waits, once per stall."""

from __future__ import annotations

import asyncio
import logging

import pytest

from gryvia_operator.controller.loopwatch import LoopWatch
from tests.support.wait import wait_for


def _blocking_call(watch: LoopWatch) -> None:
    """Hold the loop's thread (what is being detected) until the watch has reported it."""
    wait_for(lambda: watch.stalls == 1, timeout=10, interval=0.01, what="the stall reported")


def test_a_blocked_loop_is_reported_once_with_the_blocking_frame(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> LoopWatch:
        watch = LoopWatch(threshold=0.2, interval=0.05)
        watch.start()
        await asyncio.sleep(0)  # the first heartbeat
        _blocking_call(watch)
        for _ in range(100):  # let the watch see the loop run again
            await asyncio.sleep(0.02)
            if any("ran again" in r.getMessage() for r in caplog.records):
                break
        watch.stop()
        return watch

    with caplog.at_level(logging.INFO, logger="gryvia.operator.loop"):
        watch = asyncio.run(main())
    blocked = [r.getMessage() for r in caplog.records if "blocked for" in r.getMessage()]
    assert watch.stalls == 1
    assert len(blocked) == 1 and "_blocking_call" in blocked[0]
    assert any("ran again" in r.getMessage() for r in caplog.records)


def test_a_loop_that_keeps_running_is_never_reported() -> None:
    async def main() -> LoopWatch:
        watch = LoopWatch(threshold=0.2, interval=0.05)
        watch.start()
        for _ in range(20):
            await asyncio.sleep(0.02)
        watch.stop()
        return watch

    assert asyncio.run(main()).stalls == 0
