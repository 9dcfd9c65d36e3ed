"""kopf's start-up indexing barrier with LinearToggleSet: same outcomes as kopf's ToggleSet,
waiters woken once per change of the set's state instead of once per object indexed."""

from __future__ import annotations

import asyncio

from kopf._cogs.aiokits import aiotoggles

from gryvia_operator.controller import indexbarrier
from gryvia_operator.controller.indexbarrier import LinearToggleSet


class CountingCondition(asyncio.Condition):
    """An asyncio.Condition that counts the waiters its notifications wake."""

    woken = 0

    def notify_all(self) -> None:
        CountingCondition.woken += len(self._waiters)
        super().notify_all()


async def _barrier(kind: type[aiotoggles.ToggleSet], objects: int) -> tuple[int, int]:
    """kopf's start-up for `objects` objects: each worker adds a toggle, is indexed, drops its
    toggle and waits for the whole set. Returns (workers released, waiters woken)."""
    toggles = kind(all)
    toggles._condition = CountingCondition()
    CountingCondition.woken = 0
    blocker = await toggles.make_toggle(name="blocker")
    released = 0

    async def worker() -> None:
        nonlocal released
        mine = await toggles.make_toggle(name="object")
        await asyncio.sleep(0)  # indexing
        await toggles.drop_toggle(mine)
        await toggles.wait_for(True)
        released += 1

    tasks = [asyncio.create_task(worker()) for _ in range(objects)]
    for _ in range(3):
        await asyncio.sleep(0)
    await toggles.drop_toggle(blocker)
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
    return released, CountingCondition.woken


def test_every_worker_is_released_and_wake_ups_grow_linearly() -> None:
    for n in (200, 400):
        released, woken = asyncio.run(_barrier(LinearToggleSet, n))
        assert released == n
        assert woken <= n, (n, woken)  # one wake-up each, when the set turns on


def test_kopfs_own_set_wakes_quadratically_for_the_same_work() -> None:
    released, woken = asyncio.run(_barrier(aiotoggles.ToggleSet, 400))
    assert released == 400
    assert woken > 400 * 50  # what LinearToggleSet removes


def test_state_changes_still_wake_waiters_for_off_and_on() -> None:
    async def scenario() -> list[str]:
        toggles = LinearToggleSet(all)
        seen: list[str] = []
        first = await toggles.make_toggle(True)
        await toggles.wait_for(True)
        seen.append("on")
        off = asyncio.create_task(toggles.wait_for(False))
        await asyncio.sleep(0)
        second = await toggles.make_toggle(False)  # the set turns off: the waiter wakes
        await asyncio.wait_for(off, timeout=5)
        seen.append("off")
        on = asyncio.create_task(toggles.wait_for(True))
        await asyncio.sleep(0)
        await second.turn_to(True)  # a child's own change still notifies
        await asyncio.wait_for(on, timeout=5)
        seen.append("on again")
        await toggles.drop_toggles([first, second])
        assert toggles.is_on() and len(toggles) == 0
        return seen

    assert asyncio.run(scenario()) == ["on", "off", "on again"]


def test_install_makes_kopf_build_linear_sets_once() -> None:
    original = aiotoggles.ToggleSet
    try:
        assert indexbarrier.install() is True
        assert aiotoggles.ToggleSet is LinearToggleSet
        assert indexbarrier.install() is True  # idempotent
    finally:
        aiotoggles.ToggleSet = original
