"""The watch probe's rule (`controller/watchprobe.WatchHealth`) and what /readyz says of it."""

from __future__ import annotations

from typing import Any, cast

import aiohttp

from gryvia_operator.controller.probes import serve_probes
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.watchprobe import WatchHealth
from tests.support.ports import free_port
from tests.unit.operator.fakeapi import FakeApi


class Clock:
    """A settable monotonic clock (seconds)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_silence_past_two_probes_and_the_grace_is_lost_and_an_answer_heals_it() -> None:
    clock = Clock()
    health = WatchHealth(period=15, grace=5, clock=clock)
    assert health.limit == 35
    clock.now += 35
    assert not health.lost()  # exactly at the limit: still within it
    clock.now += 1
    assert health.lost()
    assert health.describe() == "watches lost for 36 s (no answer from the API server)"
    health.answered()
    assert not health.lost() and health.silent_for() == 0


async def test_readyz_is_503_while_the_watches_are_lost_then_200_again() -> None:
    clock = Clock()
    rt = Runtime(api=cast(Any, FakeApi()))
    rt.watch_health = WatchHealth(period=2, grace=1, clock=clock)
    rt.mark_synced()
    port = free_port()
    runners = await serve_probes(rt, "127.0.0.1", port, 0, role=lambda: "standby (leader: a)")
    url = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            ready = await http.get(f"{url}/readyz")
            assert (ready.status, await ready.text()) == (200, "ready: standby (leader: a)")
            clock.now += 10
            ready = await http.get(f"{url}/readyz")
            assert ready.status == 503
            assert await ready.text() == (
                "not ready: watches lost for 10 s (no answer from the API server): "
                "standby (leader: a)"
            )
            alive = await http.get(f"{url}/healthz")  # liveness stays: a restart heals nothing
            assert alive.status == 200
            rt.watch_health.answered()
            ready = await http.get(f"{url}/readyz")
            assert ready.status == 200
    finally:
        for runner in runners:
            await runner.cleanup()
