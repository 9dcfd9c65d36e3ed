"""`-w/--watch` of the read commands: `list jobs -w` prints a line per change (like
`kubectl get -w`), `queue -w N` and `capacity -w N` redraw on every change and at least every
N seconds.

Both ride on `kube.watch.ListWatcher` (on a daemon thread): a watch that breaks resumes from
the last resourceVersion seen, with back-off, and relists after 410 Gone; each failed attempt
says `reconnecting to the API server (...)` on stderr and the first success after it
`reconnected to the API server`. Ctrl-C ends the watch with exit code 0.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from gryvia_cli.core.watching import WatchEvent, WatchState
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.watch import ListWatcher
from gryvia_cli.output import warn

SETTLE_SECONDS = 0.3
"""A redraw waits this long after a change for the changes that come with it."""
CLEAR = "\x1b[H\x1b[2J"
"""Home the cursor and clear the terminal before a redraw (as `watch` does)."""


class _Reporter:
    """Turns watcher states into `reconnecting ...` / `reconnected ...` lines (thread-safe)."""

    def __init__(self, what: str, say: Callable[[str], None]) -> None:
        self.what = what
        self.say = say
        self.lost = 0

    def __call__(self, state: WatchState, detail: str) -> None:
        if state in ("reconnecting", "failed"):
            self.lost += 1
            self.say(
                f"reconnecting to the API server (attempt {self.lost}, watch of {self.what}: "
                f"{detail})"
            )
        elif state == "live" and self.lost:
            self.say(f"reconnected to the API server after {self.lost} failed attempt(s)")
            self.lost = 0
        elif state == "forbidden":
            self.say(f"cannot watch {self.what}: {detail}")


class _Resumed(ListWatcher):
    """A ListWatcher whose first list is one the command already made (`first`)."""

    def __init__(self, *args: Any, first: tuple[list[dict[str, Any]], str], **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._first: tuple[list[dict[str, Any]], str] | None = first

    def list_once(self) -> tuple[list[dict[str, Any]], str]:
        """The command's list the first time, a real (paged) list after a 410."""
        if self._first is not None:
            first, self._first = self._first, None
            return first
        return super().list_once()


class _Trigger(ListWatcher):
    """A ListWatcher that only needs to know that something changed: its lists fetch one
    object, for the collection's resourceVersion."""

    def list_once(self) -> tuple[list[dict[str, Any]], str]:
        """([], the collection's current resourceVersion)."""
        body = self._request(
            lambda: self.access.list_objects(self.res, self.namespace, limit=1, **self.selectors)
        )
        return [], str((body.get("metadata") or {}).get("resourceVersion") or "")


def _start(watcher: ListWatcher) -> threading.Thread:
    thread = threading.Thread(target=watcher.run, name=f"watch-{watcher.res.plural}", daemon=True)
    thread.start()
    return thread


def can_watch(access: Any) -> bool:
    """True when the access layer can open watches (test fakes may not)."""
    return callable(getattr(access, "watch_objects", None))


def follow_changes(
    access: Any,
    res: r.Resource,
    namespace: str | None,
    first: tuple[list[dict[str, Any]], str],
    on_change: Callable[[dict[str, Any]], None],
    *,
    label_selector: str | None = None,
    say: Callable[[str], None] = warn,
) -> None:
    """Watch `res` from the list `first` (items, resourceVersion) the command printed and call
    `on_change(object)` on this thread for every object that changes afterwards (a relist
    after 410 passes on the objects whose resourceVersion moved). Returns on Ctrl-C."""
    changes: queue.Queue[dict[str, Any]] = queue.Queue()
    seen = {_key(o): _version(o) for o in first[0]}
    listed = [False]

    def on_listed(items: list[dict[str, Any]], _version_: str) -> None:
        if not listed[0]:
            listed[0] = True
            return
        for item in items:
            changes.put(item)

    def on_event(event: WatchEvent) -> None:
        changes.put(event.object)

    watcher = _Resumed(
        access,
        res,
        namespace,
        first=first,
        on_listed=on_listed,
        on_event=on_event,
        on_state=_Reporter(res.plural, say),
        label_selector=label_selector,
        page_size=500,
    )
    _start(watcher)
    try:
        while True:
            try:
                obj = changes.get(timeout=0.5)
            except queue.Empty:
                continue
            key, version = _key(obj), _version(obj)
            if seen.get(key) == version:
                continue  # replayed after a reconnect
            seen[key] = version
            on_change(obj)
    except KeyboardInterrupt:
        return
    finally:
        watcher.stop()


def redraw_on_changes(
    access: Any,
    collections: Sequence[tuple[r.Resource, str | None]],
    draw: Callable[[], None],
    every: float,
    *,
    say: Callable[[str], None] = warn,
) -> None:
    """Call `draw()` now, then after every change of one of `collections` (resource,
    namespace or None for all) and at least every `every` seconds, clearing the terminal
    before each redraw (off a terminal, frames follow each other after a blank line on
    stderr). Without watch support in `access` (test fakes) it redraws every `every`
    seconds. Returns on Ctrl-C."""
    changed = threading.Event()
    watchers: list[ListWatcher] = []
    if can_watch(access):
        for res, namespace in collections:
            watchers.append(
                _Trigger(
                    access,
                    res,
                    namespace,
                    on_listed=_Relisted(changed),
                    on_event=lambda _event: changed.set(),
                    on_state=_Reporter(res.plural, say),
                )
            )
    for watcher in watchers:
        _start(watcher)
    tty = sys.stdout.isatty()
    try:
        draw()
        while True:
            if watchers:
                if changed.wait(max(every, 1)):
                    time.sleep(SETTLE_SECONDS)
                changed.clear()
            else:
                time.sleep(max(every, 1))
            if tty:
                sys.stdout.write(CLEAR)
            else:
                sys.stderr.write("\n")
            draw()
            sys.stdout.flush()
    except KeyboardInterrupt:
        return
    finally:
        for watcher in watchers:
            watcher.stop()


class _Relisted:
    """A trigger's on_listed: its first list is the state already drawn; a relist (after
    410 Gone) may hide changes, so it asks for a redraw."""

    def __init__(self, changed: threading.Event) -> None:
        self.changed = changed
        self.first = True

    def __call__(self, _items: list[dict[str, Any]], _version: str) -> None:
        if self.first:
            self.first = False
            return
        self.changed.set()


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _version(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")
