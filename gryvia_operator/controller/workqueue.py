"""An asyncio work queue of object keys, with the client-go workqueue semantics.

Deduplicated, one worker per key at a time, delayed and rate-limited re-adds. A handler says
"retry later" or "give up" with kopf's own exceptions, as a kopf handler would.

Two lanes, as controller-runtime's priority queue has: a key added with `low=True` (an object
of a start-up list that needs nothing, such as a finished job) waits behind every normal key,
so that a new leader first serves the jobs submitted while its predecessor was gone, not
the thousands of finished ones its first list also returns. A normal add promotes a low key.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

import kopf

K = TypeVar("K", bound=Hashable)
log = logging.getLogger("gryvia.operator.workqueue")


class WorkQueue(Generic[K]):
    """Keys waiting to be reconciled.

    A key added while queued is queued once; a key added while being processed is processed
    again after the current run. `add_after` schedules an add (the earliest pending delay
    wins); `retry` adds after a per-key exponential backoff that `forget` resets.
    """

    def __init__(self, name: str, *, base_delay: float = 0.05, max_delay: float = 60.0) -> None:
        self.name = name
        self._queue: asyncio.PriorityQueue[tuple[int, int, K]] = asyncio.PriorityQueue()
        self._lane: dict[K, int] = {}
        """The lane (0 normal, 1 low) of each dirty key."""
        self._seq = 0
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._timers: dict[K, tuple[float, asyncio.TimerHandle]] = {}
        self._failures: dict[K, int] = {}
        self._base, self._max = base_delay, max_delay

    def __len__(self) -> int:
        return len(self._dirty)

    def add(self, key: K, *, low: bool = False) -> None:
        """Queue `key` now (no-op when already queued, unless this normal add promotes a low
        key); `low`: behind every normal key."""
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer[1].cancel()
        lane = 1 if low else 0
        if key in self._dirty:
            if lane < self._lane[key]:
                self._lane[key] = lane
                if key not in self._processing:
                    self._push(key)
            return
        self._dirty.add(key)
        self._lane[key] = lane
        if key not in self._processing:
            self._push(key)

    def _push(self, key: K) -> None:
        self._seq += 1
        self._queue.put_nowait((self._lane[key], self._seq, key))

    def add_after(self, key: K, delay: float) -> None:
        """Queue `key` after `delay` seconds, unless an earlier add is already pending."""
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        when = loop.time() + delay
        pending = self._timers.get(key)
        if pending is not None:
            if pending[0] <= when:
                return
            pending[1].cancel()
        self._timers[key] = (when, loop.call_at(when, self._fire, key))

    def _fire(self, key: K) -> None:
        self._timers.pop(key, None)
        self.add(key)

    def retry(self, key: K) -> float:
        """Queue `key` again after its exponential backoff; return the delay used."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        delay = float(min(self._base * (2**failures), self._max))
        self.add_after(key, delay)
        return delay

    def forget(self, key: K) -> None:
        """Reset the backoff of `key` (after a successful run)."""
        self._failures.pop(key, None)

    def drop(self, key: K) -> None:
        """Forget `key` entirely: pending delayed adds and backoff (the object is gone)."""
        self.forget(key)
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer[1].cancel()

    async def get(self) -> K:
        """Wait for the next key; the caller must call `done(key)` when finished."""
        while True:  # an entry left behind by a promotion or an earlier run is skipped
            lane, _, key = await self._queue.get()
            if key in self._dirty and key not in self._processing and self._lane[key] == lane:
                break
        self._dirty.discard(key)
        del self._lane[key]
        self._processing.add(key)
        return key

    def done(self, key: K) -> None:
        """Mark `key` finished; it is queued again if it was added meanwhile."""
        self._processing.discard(key)
        if key in self._dirty:
            self._push(key)

    async def run_workers(self, count: int, handle: Callable[[K], Awaitable[None]]) -> None:
        """Process keys with `count` concurrent workers until cancelled.

        `handle` signals how a key failed: `kopf.TemporaryError(delay=s)` queues it again after
        `s` seconds (a planned re-check: logged at debug), `kopf.TemporaryError(delay=None)`
        after its exponential backoff (a failure: logged as a warning), and
        `kopf.PermanentError` drops it until something adds it again (logged as an error).
        Any other exception is logged with its traceback and the key retried with backoff.
        """

        async def worker() -> None:
            while True:
                key = await self.get()
                try:
                    await handle(key)
                except asyncio.CancelledError:
                    raise
                except kopf.PermanentError as exc:
                    self.drop(key)
                    log.error("%s: %s: gave up: %s", self.name, key, exc)
                except kopf.TemporaryError as exc:
                    if exc.delay is None:
                        delay = self.retry(key)
                        log.warning("%s: %s: %s (retry in %.1fs)", self.name, key, exc, delay)
                    else:
                        self.add_after(key, exc.delay)
                        log.debug("%s: %s: %s (again in %.1fs)", self.name, key, exc, exc.delay)
                except Exception:
                    log.exception("%s: unhandled error for %s", self.name, key)
                    self.retry(key)
                finally:
                    self.done(key)

        tasks = [asyncio.create_task(worker(), name=f"{self.name}-{i}") for i in range(count)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            for _, handle_ in self._timers.values():
                handle_.cancel()
