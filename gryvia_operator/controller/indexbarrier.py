"""kopf's start-up indexing barrier in linear time.

At start-up kopf holds every object's handlers until every object of every indexed kind is
indexed: each object's worker adds a toggle to one `ToggleSet(all)`, drops it once indexed,
then waits for the whole set to be on. kopf's `ToggleSet.make_toggle` and `drop_toggle` call
`notify_all` on every change, so each of N objects indexed wakes every one of the N workers
waiting, each of which takes the condition's lock in turn to find the set still off: N² wake-ups
(measured: operator ready 5.4 s after start at 1,000 usage records, 21 s at 2,000, 51 s at
3,000, all of it in the reactor; the subject of kopf PR 1218).

`LinearToggleSet` notifies only when adding or dropping a toggle changes the set's state, which
is the only thing its waiters wait for; a child toggle's own `turn_to` still notifies as
before. Waiters therefore wake once, when the last object is indexed: N operations for N
objects. `install()` makes kopf build its toggle sets with it; it is a no-op where kopf's
internals differ from the version this was written against (kopf 1.37 to 1.45), so a kopf
upgrade can slow start-up again but never break it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

log = logging.getLogger("gryvia.operator")

try:  # kopf's private module: checked, never assumed
    from kopf._cogs.aiokits import aiotoggles as _toggles
except ImportError:  # pragma: no cover - a kopf without it keeps its own barrier
    _toggles = None  # type: ignore[assignment]

_BASE: Any = getattr(_toggles, "ToggleSet", object)


class LinearToggleSet(_BASE):  # type: ignore[misc]
    """kopf's `ToggleSet` whose membership changes wake waiters only when the set's state
    (its function over the toggles, `all` or `any`) changes."""

    async def make_toggle(self, __val: bool = False, *, name: str | None = None) -> Any:
        """Add a toggle in state `__val` (shares the set's condition); returns it."""
        toggle = _toggles.Toggle(__val, name=name, condition=self._condition)
        async with self._condition:
            before = self.is_on()
            self._toggles.add(toggle)
            self._notify_if_changed(before)
        return toggle

    async def drop_toggle(self, toggle: Any) -> None:
        """Remove `toggle` from the set."""
        async with self._condition:
            before = self.is_on()
            self._toggles.discard(toggle)
            self._notify_if_changed(before)

    async def drop_toggles(self, toggles: Iterable[Any]) -> None:
        """Remove every toggle of `toggles` from the set."""
        async with self._condition:
            before = self.is_on()
            self._toggles.difference_update(toggles)
            self._notify_if_changed(before)

    def _notify_if_changed(self, before: bool) -> None:
        if self.is_on() != before:
            self._condition.notify_all()


def _compatible() -> bool:
    if _toggles is None:
        return False
    probe = _toggles.ToggleSet(all)
    needed = ("_condition", "_toggles", "is_on", "make_toggle", "drop_toggle", "drop_toggles")
    return all(hasattr(probe, name) for name in needed) and hasattr(_toggles, "Toggle")


def install() -> bool:
    """Make kopf create its toggle sets as `LinearToggleSet` (call before `kopf.operator`).
    Returns False, changing nothing, where kopf's toggle module is not the expected one."""
    if _toggles is None or _toggles.ToggleSet is LinearToggleSet:
        return _toggles is not None
    if not _compatible():
        log.warning("kopf's toggle sets differ from the known ones; start-up stays quadratic")
        return False
    _toggles.ToggleSet = LinearToggleSet  # type: ignore[misc]
    return True
