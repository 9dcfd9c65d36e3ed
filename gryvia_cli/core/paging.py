"""A list read in pages while it is shown: the pages a reader hands over from another thread,
what the rows gathered so far amount to, and how the growing count is worded.

Pure (threading only): the console's paged list-then-watch (`kube.pagedwatch`) reads a
collection `limit` objects at a time with `continue` tokens, as kubectl does
(`--chunk-size`, default 500), and shows the first page before the last one arrives.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

PAGE_SIZE = 500
"""Objects per page of a progressive list: kubectl's default chunk size."""


class PageBuffer:
    """Pages of one list, put by the thread that reads them and taken, in order, by another.

    The reader calls `put(body)` per page (a LIST reply: `items`, `metadata.continue`) and
    `fail(exc)` if a page fails; the taker calls `take(index)` for page 0, 1, ... and blocks
    until that page (or the failure) is there. A page is dropped once taken, so the buffer
    holds at most the pages read ahead."""

    def __init__(self) -> None:
        self._pages: dict[int, dict[str, Any]] = {}
        self._count = 0
        self._error: BaseException | None = None
        self._cond = threading.Condition()

    def put(self, body: dict[str, Any]) -> None:
        """Add the next page (from the reading thread)."""
        with self._cond:
            self._pages[self._count] = body
            self._count += 1
            self._cond.notify_all()

    def fail(self, exc: BaseException) -> None:
        """The next page failed with `exc`: `take` of it (and later pages) raises it."""
        with self._cond:
            self._error = exc
            self._cond.notify_all()

    def take(self, index: int, timeout: float | None = None) -> dict[str, Any]:
        """Page `index` (0-based), waiting for it at most `timeout` seconds (None: no limit).

        Raises the reader's exception when the reader failed before that page, TimeoutError
        when it does not come in time, KeyError when it was taken already."""
        with self._cond:
            if not self._cond.wait_for(
                lambda: index < self._count or self._error is not None, timeout
            ):
                raise TimeoutError(f"page {index + 1} of the list did not come in time")
            if index >= self._count and self._error is not None:
                raise self._error
            return self._pages.pop(index)


@dataclass
class ListProgress:
    """Rows of one list gathered page by page: `entries` by key and how many raw objects
    the pages held (an object that does not validate adds to `objects` but not to
    `entries`). `complete` once the last page is in."""

    entries: dict[str, Any] = field(default_factory=dict)
    objects: int = 0
    complete: bool = False

    def add(self, entries: dict[str, Any], objects: int, *, last: bool = False) -> None:
        """Gather one page: its `entries`, the number of raw `objects` it held, and whether
        it was the list's last page."""
        self.entries.update(entries)
        self.objects += objects
        self.complete = last

    def covers(self, objects: int) -> bool:
        """True when the pages gathered are the whole list of `objects` raw objects (the
        list's own count), so its rows need not be made again."""
        return self.complete and self.objects == objects


def count_words(total: int, noun: str, *, shown: int | None = None, loading: bool) -> str:
    """`10000 jobs`, `3 of 10000 jobs` (a filter shows `shown`), and while the list is
    still arriving `1000+ jobs, loading…` or `3 of 1000+ jobs, loading…`: the count so far
    and that it grows."""
    count = f"{total}+" if loading else str(total)
    words = f"{count} {noun}" if shown is None else f"{shown} of {count} {noun}"
    return f"{words}, loading…" if loading else words
