"""The console's live feed: watch threads into the store, their state into the top bar's
connection words and notifications, buffered changes applied a few times a second, and the
streams screens start stopped with the app. A mixin of `GryviaApp`."""

from __future__ import annotations

import asyncio
from typing import cast

from textual import on
from textual.app import App, ScreenStackError, UnknownModeError
from textual.reactive import reactive

from gryvia_cli.tui.feed import OPTIONAL, Feed
from gryvia_cli.tui.kindnames import Kind
from gryvia_cli.tui.messages import (
    ClusterChanged,
    HealthChanged,
    WatchReconnecting,
    WatchStateChanged,
)
from gryvia_cli.tui.source import ClusterSource, Runner, Stoppable
from gryvia_cli.tui.store import Change, ClusterStore


class LiveFeed(App[None]):
    """The feed's side of the app: `source` is watched into `store`; `connection` (live |
    slow | connecting | reconnecting | unreachable | failed) and `connection_detail` say how
    the watches fare. The app sets these attributes up in its constructor."""

    source: ClusterSource
    store: ClusterStore
    feed: Feed | None
    start_view: str
    connection_detail: str
    connection: reactive[str]
    _told_failed: set[str]
    _tracked: set[Stoppable]

    def stop_streams(self) -> None:
        """Stop the feed's watchers and every tracked stream (idempotent, any time)."""
        if self.feed is not None:
            self.feed.stop()
        for runner in list(self._tracked):
            runner.stop()

    def track(self, runner: Stoppable) -> None:
        """Stop `runner` when the app exits (streams started by screens)."""
        self._tracked.add(runner)

    def untrack(self, runner: Stoppable) -> None:
        """Forget a runner that ended."""
        self._tracked.discard(runner)

    # -- feed ------------------------------------------------------------------------------

    def _start_feed(self) -> None:
        first: Kind | None = "jobs" if self.start_view == "jobs" else None
        loop = asyncio.get_running_loop()

        def first_listed() -> None:  # on the watcher's thread
            try:
                loop.call_soon_threadsafe(self._show_first, feed)
            except RuntimeError:  # the loop closed: the console is quitting
                feed.release()

        feed = self.feed = Feed(
            self.source,
            self._on_watch_state,
            self._on_health,
            first=first,
            on_first_listed=first_listed,
        )
        self._told_failed.clear()
        for kind, runner in feed.runners().items():

            def run(kind: Kind = kind, runner: Runner = runner) -> None:
                feed.wait_first(kind)  # the first view's kind loads alone, then the rest
                runner.run()

            self.run_worker(
                run, thread=True, group="watch", name=f"watch {kind}", exit_on_error=False
            )
        self.run_worker(
            feed.prober().run, thread=True, group="watch", name="probe", exit_on_error=False
        )

    def _on_health(self, health: object) -> None:
        """Called from the prober's thread."""
        self.post_message(HealthChanged(health))  # type: ignore[arg-type]

    @on(HealthChanged)
    def _health_changed(self, message: HealthChanged) -> None:
        self._update_connection()

    def _on_watch_state(self, kind: str, state: str, detail: str) -> None:
        """Called from watch threads."""
        message = WatchReconnecting if state == "reconnecting" else WatchStateChanged
        self.post_message(message(kind, state, detail))

    @on(WatchStateChanged)
    def _watch_state_changed(self, message: WatchStateChanged) -> None:
        if self.feed is None:
            return
        if message.state in ("failed", "forbidden"):
            self.store.failed.add(message.kind)  # type: ignore[arg-type]
        if message.state == "forbidden":
            # RBAC without cluster-wide rights: the view says "not allowed", nothing pops up
            self.store.forbidden.add(message.kind)  # type: ignore[arg-type]
            self.screen.post_message(ClusterChanged(None))
        elif message.state == "failed":
            if message.kind not in self.store.loaded:  # a view waiting for it says why
                kind = cast("Kind", message.kind)
                self.screen.post_message(ClusterChanged(Change(keys={kind: set()})))
            if message.kind not in OPTIONAL and message.kind not in self._told_failed:
                self._told_failed.add(message.kind)
                self.notify(message.detail, title=f"Cannot watch {message.kind}", severity="error")
        elif message.state == "live":
            self._told_failed.discard(message.kind)
        self._update_connection()

    def _update_connection(self) -> None:
        if self.feed is None:
            return
        before = self.connection
        state, self.connection_detail = self.feed.connection()
        self.connection = state
        if self.connection in ("reconnecting", "unreachable") and before not in (
            "reconnecting",
            "unreachable",
        ):
            self.notify(
                f"{self.connection_detail}; retrying",
                title="Lost the API server",
                severity="warning",
                timeout=6,
            )
        elif before in ("reconnecting", "unreachable") and self.connection in ("live", "slow"):
            self.notify("Watching again; lists refreshed.", title="Reconnected", timeout=4)

    def _show_first(self, feed: Feed) -> None:
        """The first view's first page, or its whole list, arrived: apply it now rather than
        at the next tick; once the whole list is in, let the other watchers list after the
        view has drawn it (their lists would otherwise compete with the first paint and the
        pages for the CPU)."""
        try:
            screen = self.screen if feed is self.feed and self.is_running else None
        except (ScreenStackError, UnknownModeError):
            screen = None  # no view yet, or no more: the next tick applies the list
        if screen is None:
            if feed.first_listed.is_set():
                feed.release()
            return
        self.flush()
        if feed.first_listed.is_set() and not screen.call_after_refresh(feed.release):
            feed.release()

    def flush(self) -> None:
        """Apply what the watches buffered and tell the view (a few times a second); a tick
        that comes while the console closes only applies it."""
        if self.feed is None or not self.feed.pending:
            return
        change = self.store.apply(self.feed.drain())
        if not change:
            return
        try:
            screen = self.screen
        except (ScreenStackError, UnknownModeError):
            return  # the console is closing (its last screen is gone): nobody to tell
        screen.post_message(ClusterChanged(change))
