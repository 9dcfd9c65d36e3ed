"""Pausing Python's cycle collector while the client only allocates.

Parsing a list reply (10,000 jobs: ~7 MB of JSON, a few hundred thousand dicts, lists and
strings), turning it into rows, or importing the console's modules creates many objects and
frees almost none. CPython's collector runs after every 700 new container objects and, as
the heap grows, walks the whole heap again and again: on 10,000 jobs `orjson.loads` took
115-180 ms with it and 45 ms without. JSON and our rows hold no reference cycles, so nothing
is left for the collector to find afterwards.

`paused()` turns the collector off for a block (nested and concurrent blocks are counted; it
turns back on when the last one ends, and only if it was on before). `settle()` moves what
exists now into the permanent generation (`gc.freeze`), so later collections of a
long-running console skip the start-up heap.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def paused() -> Iterator[None]:
    """Run the block with the cycle collector off (reference counting still frees objects)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()


def settle() -> None:
    """Freeze everything allocated so far (`gc.freeze`): later collections skip it."""
    gc.freeze()


YOUNG_THRESHOLD = 50_000
"""New container objects between two collections of the youngest generation once `relax` ran
(CPython's default is 700)."""


def relax() -> None:
    """Collect the youngest generation every `YOUNG_THRESHOLD` new objects instead of every
    700 (`gc.set_threshold`; the older generations keep their ratios of 10).

    A `gryvia` command imports a few hundred modules and parses a reply: hundreds of
    thousands of objects that live to the end, and almost no reference cycles. With the
    default threshold the collector runs hundreds of times during start-up and re-walks the
    growing older generations. Measured on 200 jobs, `gryvia list jobs -A` used 241 ms of CPU
    with the default and 226 ms relaxed. Long-running commands (the console, `-w`, `logs -f`)
    still collect: less often, each time a little more.
    """
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
