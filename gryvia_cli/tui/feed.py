"""The live feed: one list-then-watch per kind, their updates buffered for the UI thread,
and a prober of the API server that says how the connection holds.

Watch threads parse objects and append `Update`s to a buffer; the app drains the buffer on a
short timer and applies the batch to the store, so tables redraw a few times a second at most,
however fast the cluster changes. When the prober sees the server stop answering, and again
when it answers once more, every watcher is kicked: stale streams are dropped and watches
resume from their last resourceVersion at once, without waiting out a back-off.
Textual-free: the app runs `runners()` and `prober()` in daemon threads.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from gryvia_cli.core.health import Health
from gryvia_cli.core.paging import ListProgress
from gryvia_cli.core.watching import WatchEvent, WatchState
from gryvia_cli.gcpause import paused, settle
from gryvia_cli.tui.kindnames import KINDS, Kind
from gryvia_cli.tui.source import ClusterSource, Runner, WatchCallbacks, Watcher
from gryvia_cli.tui.store import Update, event_update, list_update, make_entries

NAMESPACED: frozenset[Kind] = frozenset({"jobs", "usage"})
"""Kinds watched in the target namespace; the rest are cluster-wide."""
OPTIONAL: frozenset[Kind] = frozenset(
    {"pods", "nodes", "tenants", "quotas", "skus", "usage", "budgets", "reservations"}
)
"""Kinds the console works without (RBAC may forbid them): their failure is not an outage."""
LIVE_PODS = "status.phase!=Succeeded,status.phase!=Failed"
LARGE_LIST = 1000
"""Lists of more objects are frozen out of the cycle collector once stored (`gcpause`)."""
PAGED: frozenset[Kind] = frozenset({"jobs"})
"""Kinds listed page by page, each page shown as it arrives (the Jobs view paints its first
rows from the first 500 jobs while the rest arrive)."""

StateCallback = Callable[[Kind, WatchState, str], None]
HealthCallback = Callable[[Health], None]


def _ignore(health: Health) -> None:
    return None


class Feed:
    """Watchers for every kind of one source, and the buffer between them and the UI."""

    def __init__(
        self,
        source: ClusterSource,
        on_state: StateCallback,
        on_health: HealthCallback = _ignore,
        *,
        first: Kind | None = None,
        on_first_listed: Callable[[], None] = lambda: None,
    ) -> None:
        self.source = source
        self.first = first
        """The kind the first view shows: `wait_first` holds the other watchers back until it
        is shown (`release`, or its watch failed), so its load and first paint have the CPU
        to themselves."""
        self.on_first_listed = on_first_listed
        """Called from the watcher's thread once the first kind's first page is buffered,
        and again when its whole list is: the UI applies it at once instead of at its next
        tick, and calls `release` once `first_listed` is set."""
        self.first_listed = threading.Event()
        """Set once the first kind's whole list is buffered."""
        self.first_done = threading.Event()
        if first is None:
            self.first_done.set()
        self.on_state = on_state
        self.on_health = on_health
        self.pending: deque[Update] = deque()
        self.progress: dict[Kind, ListProgress] = {}
        """The pages of each paged kind's list that is still arriving."""
        self.states: dict[Kind, tuple[WatchState, str]] = dict.fromkeys(KINDS, ("connecting", ""))
        self.health = Health()
        self._runners: dict[Kind, Watcher] = {}
        self._prober: Runner | None = None
        self.stopped = False

    def runners(self) -> dict[Kind, Watcher]:
        """A watcher per kind (built once)."""
        if not self._runners:
            for kind in KINDS:
                self._runners[kind] = self._make(kind)
        return self._runners

    def prober(self) -> Runner:
        """The connection prober (built once); its reports land in `health`."""
        if self._prober is None:
            self._prober = self.source.prober(self.health_changed)
        return self._prober

    def health_changed(self, health: Health) -> None:
        """Keep `health`; kick every watcher when the server stops or starts answering."""
        before, self.health = self.health, health
        if before.failing != health.failing and not self.stopped:
            for runner in list(self._runners.values()):
                runner.kick()
        self.on_health(health)

    def forbidden(self) -> set[Kind]:
        """Kinds RBAC refuses cluster-wide (their watchers ended)."""
        return {k for k, (state, _) in self.states.items() if state == "forbidden"}

    def _make(self, kind: Kind) -> Watcher:
        def page(items: list[dict[str, Any]], first: bool, last: bool) -> None:
            if first:
                self.progress[kind] = ListProgress()
            with paused():  # rows of hundreds of objects: no reference cycles
                entries = make_entries(kind, items)
            self.progress[kind].add(entries, len(items), last=last)
            if not last:  # the last page comes with the whole list, at once
                self.pending.append(Update(kind, "page", entries=entries))
            if first and not last and kind == self.first and not self.first_done.is_set():
                self.on_first_listed()

        def listed(items: list[dict[str, Any]], version: str) -> None:
            progress = self.progress.pop(kind, None)
            if progress is not None and progress.covers(len(items)):
                update = Update(kind, "list", entries=progress.entries)
            else:
                with paused():  # rows of thousands of objects: no reference cycles
                    update = list_update(kind, items)
            if len(items) > LARGE_LIST:
                settle()
            self.pending.append(update)
            if kind == self.first and not self.first_done.is_set():
                self.first_listed.set()
                self.on_first_listed()

        def event(ev: WatchEvent) -> None:
            self.pending.append(event_update(kind, ev.type, ev.object))

        def state(value: WatchState, detail: str) -> None:
            self.states[kind] = (value, detail)
            if kind == self.first and value in ("failed", "reconnecting", "forbidden", "stopped"):
                self.first_done.set()
            self.on_state(kind, value, detail)

        namespace = self.source.target.namespace if kind in NAMESPACED else None
        return self.source.watcher(
            kind,
            WatchCallbacks(listed, event, state, page if kind in PAGED else None),
            namespace=namespace,
            field_selector=LIVE_PODS if kind == "pods" else None,
        )

    def wait_first(self, kind: Kind, seconds: float = 3.0) -> None:
        """Block a watcher of `kind` (not the first kind) until the first kind is listed,
        at most `seconds`."""
        if kind != self.first:
            self.first_done.wait(seconds)

    def release(self) -> None:
        """Let the watchers held by `wait_first` list now (the first view is shown)."""
        self.first_done.set()

    def drain(self) -> list[Update]:
        """Everything buffered since the last drain, in arrival order."""
        out = []
        while self.pending:
            out.append(self.pending.popleft())
        return out

    def connection(self) -> tuple[str, str]:
        """Overall state for the status bar and its words: the prober's `reconnecting` or
        `unreachable` (attempt N, last error) first, then a required kind's `reconnecting`,
        `failed` or `connecting` (its detail), then `slow` (the round trip), else `live`.
        Kinds RBAC forbids cluster-wide are not failures."""
        if self.health.failing:
            return self.health.state, self.health.label()
        required = {k: v for k, v in self.states.items() if k not in OPTIONAL}
        for wanted in ("reconnecting", "failed", "connecting"):
            for kind, (state, detail) in required.items():
                if state == wanted:
                    return wanted, f"{kind}: {detail}" if detail else kind
        if self.health.state == "slow":
            return "slow", self.health.label()
        return "live", ""

    def stop(self) -> None:
        """Stop every watcher (their threads return soon)."""
        self.stopped = True
        self.first_done.set()
        self.first_listed.set()
        for runner in self._runners.values():
            runner.stop()
        if self._prober is not None:
            self._prober.stop()
