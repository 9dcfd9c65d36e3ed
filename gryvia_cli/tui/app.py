"""GryviaApp: views as modes, the live feed into the store, jumps, switchers; `make_app`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar, cast

from textual import on, work
from textual.app import App, ScreenStackError, UnknownModeError
from textual.notifications import SeverityLevel
from textual.reactive import reactive

from gryvia_cli.core.plaintext import visible
from gryvia_cli.errors import GryviaError
from gryvia_cli.tui.bindings import APP, REGISTRY_VIEWS, VIEWS, bindings, resolve_jump
from gryvia_cli.tui.commands import GryviaCommands
from gryvia_cli.tui.describeref import describe_ref
from gryvia_cli.tui.driver import quick_driver
from gryvia_cli.tui.feed import OPTIONAL, Feed
from gryvia_cli.tui.kindnames import Kind
from gryvia_cli.tui.messages import (
    ClusterChanged,
    HealthChanged,
    WatchReconnecting,
    WatchStateChanged,
)
from gryvia_cli.tui.screens.base import ViewScreen
from gryvia_cli.tui.screens.capacity import CapacityScreen
from gryvia_cli.tui.screens.cost import CostScreen
from gryvia_cli.tui.screens.dialogs import PickerDialog, PromptDialog
from gryvia_cli.tui.screens.help import HelpScreen
from gryvia_cli.tui.screens.job import JobScreen
from gryvia_cli.tui.screens.jobs import JobsScreen
from gryvia_cli.tui.screens.nodes import NodesScreen
from gryvia_cli.tui.screens.queue import QueueScreen
from gryvia_cli.tui.screens.registry import open_object, registry_modes
from gryvia_cli.tui.screens.submit import SubmitScreen
from gryvia_cli.tui.source import ClusterSource, Runner, Stoppable, Target
from gryvia_cli.tui.store import Change, ClusterStore
from gryvia_cli.tui.theme import GRYVIA_THEME
from gryvia_cli.tui.threads import DaemonExecutor
from gryvia_cli.tui.usercommands import TABLE_COLUMNS, UserCommands
from gryvia_cli.tui.userconfig import LoadedConfig, load_console_config
from gryvia_cli.tui.widgets.textfield import is_typing

Clock = Callable[[], datetime]
FLUSH_SECONDS = 0.1
"""How often buffered watch updates are applied (seconds): a change is on screen within ~0.1 s
plus a redraw, and a busy cluster costs at most ten re-sorts a second."""


class GryviaApp(UserCommands):
    """The console. Build it with `make_app`."""

    CSS_PATH = "gryvia.tcss"
    TITLE = "gryvia"
    BINDINGS: ClassVar = bindings(APP)
    COMMANDS: ClassVar = App.COMMANDS | {GryviaCommands}
    MODES: ClassVar = {
        "jobs": JobsScreen,
        "queue": QueueScreen,
        "capacity": CapacityScreen,
        "cost": CostScreen,
        "nodes": NodesScreen,
        "submit": SubmitScreen,
        **registry_modes(REGISTRY_VIEWS),
    }

    target: reactive[Target] = reactive(Target("", None), always_update=True)
    connection: reactive[str] = reactive("connecting", always_update=True)
    """live | slow | connecting | reconnecting | unreachable | failed; `connection_detail`
    holds the top bar's words for it (set before it)."""

    def __init__(
        self,
        source: ClusterSource,
        *,
        readonly: bool,
        clock: Clock,
        view: str,
        user_config: LoadedConfig | None = None,
    ) -> None:
        super().__init__(driver_class=quick_driver(App.get_driver_class(self)))
        self.user_config = user_config or LoadedConfig()
        self.source = source
        self.readonly = readonly
        self.clock = clock
        self.start_view = view
        self.store = ClusterStore()
        self.feed: Feed | None = None
        self.connection_detail = ""
        self._told_failed: set[str] = set()
        self._tracked: set[Stoppable] = set()
        self.set_reactive(GryviaApp.target, source.target)

    def now(self) -> datetime:
        """The clock every view uses."""
        return self.clock()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification of the console is plain text: its messages carry user data
        (job names, API errors), so `markup` is ignored and control characters shown."""
        super().notify(
            visible(str(message), multiline=True),
            title=visible(str(title)),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def on_mount(self) -> None:
        """Theme, threads for the watches, the feed, the first view."""
        self.register_theme(GRYVIA_THEME)
        self.theme = "gryvia"
        asyncio.get_running_loop().set_default_executor(DaemonExecutor("gryvia"))
        self._start_feed()
        self.set_interval(FLUSH_SECONDS, self.flush)
        self.switch_mode(self.start_view)
        self.bind_hotkeys()

    def on_unmount(self) -> None:
        """Stop every watch and stream so the worker threads end."""
        self.stop_streams()

    async def _shutdown(self) -> None:
        # Also on paths where Unmount never reaches the app (a crash while closing screens):
        # a blocked worker thread would otherwise hang the executor's shutdown.
        self.stop_streams()
        await super()._shutdown()

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
        """The first view's list arrived: apply it now rather than at the next tick, and let
        the other watchers list once the view has drawn it (their lists would otherwise
        compete with the first paint for the CPU)."""
        try:
            screen = self.screen if feed is self.feed and self.is_running else None
        except (ScreenStackError, UnknownModeError):
            screen = None  # no view yet, or no more: the next tick applies the list
        if screen is None:
            feed.release()
            return
        self.flush()
        if not screen.call_after_refresh(feed.release):
            feed.release()

    def flush(self) -> None:
        """Apply what the watches buffered and tell the view (a few times a second)."""
        if self.feed is None or not self.feed.pending:
            return
        change = self.store.apply(self.feed.drain())
        if change:
            self.screen.post_message(ClusterChanged(change))

    # -- navigation ------------------------------------------------------------------------

    def action_view(self, name: str) -> None:
        """Show view `name`."""
        if name in self.MODES:
            self.switch_mode(name)

    def open_job(self, key: str | None, tab: str) -> None:
        """Push the Job view of `key` (namespace/name)."""
        if key:
            self.push_screen(JobScreen(key, tab))

    def action_jump(self) -> None:
        """`:` — type a view name (or ctx, ns, quit)."""
        if isinstance(self.screen, ViewScreen):
            self.screen.open_command_line()
        else:
            words = [*VIEWS, "ctx", "ns", "describe", "quit"]
            self.push_screen(PromptDialog("Jump to", ", ".join(words), words), self.jump_to)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`:` is a priority key: it types into a focused input (or form) instead."""
        return not (action == "jump" and is_typing(self.focused))

    def jump_to(self, text: str | None) -> None:
        """Go where `:` + `text` says: a view, `ctx [NAME]`, `ns [NAME|all]` or quit (or an
        alias of one); with a name, ctx and ns switch at once instead of opening their picker."""
        if self.run_user_command(text or ""):
            return
        word, _, argument = (text or "").strip().partition(" ")
        target, argument = resolve_jump(word), argument.strip()
        actions = {"ctx": self.action_switch_context, "ns": self.action_switch_namespace}
        chosen = {"ctx": self._context_chosen, "ns": self._namespace_chosen}
        if target in self.MODES:
            self.action_view(target)
        elif target == "describe":
            self._describe(argument)
        elif target in chosen and argument:
            chosen[target](argument)
        elif target in actions:
            actions[target]()
        elif target == "quit":
            self.exit()
        elif target:
            words = ", ".join((*VIEWS, *REGISTRY_VIEWS))
            self.notify(
                f"no view called “{target}”: {words}; ctx NAME, ns NAME, describe KIND NAME, quit",
                severity="warning",
                markup=False,
            )

    def _describe(self, argument: str) -> None:
        """`:describe KIND NAME`: open the object's describe view (a job's Job view)."""
        ref = describe_ref(argument, self.target.namespace)
        if isinstance(ref, str):
            self.notify(ref, severity="warning", markup=False)
        else:
            open_object(self, ref)

    def action_help(self) -> None:
        """Show every key."""
        current = "job" if isinstance(self.screen, JobScreen) else (self.current_mode or "jobs")
        self.push_screen(HelpScreen(current, self.readonly))

    # -- context and namespace -------------------------------------------------------------

    def action_switch_context(self) -> None:
        """Pick another kubeconfig context."""
        dialog = PickerDialog("Context", self.target.context, self.source.contexts)
        self.push_screen(dialog, self._context_chosen)

    def _context_chosen(self, name: str | None) -> None:
        if name and name != self.target.context:
            self._switch_context(name)

    @work(thread=True, exclusive=True, group="retarget")
    def _switch_context(self, context: str) -> None:
        try:
            source = self.source.switch_context(context)
        except GryviaError as exc:
            self.call_from_thread(self.notify, exc.message, title="Cannot switch", severity="error")
            return
        self.call_from_thread(self._use_source, source)

    def action_switch_namespace(self) -> None:
        """Pick a namespace, or all namespaces."""
        names = self.source.namespaces
        dialog = PickerDialog("Namespace", self.target.namespace_label, lambda: ["all", *names()])
        self.push_screen(dialog, self._namespace_chosen)

    def _namespace_chosen(self, name: str | None) -> None:
        if name:
            self._retarget(self.target.context, None if name == "all" else name)

    @work(thread=True, exclusive=True, group="retarget")
    def _retarget(self, context: str, namespace: str | None) -> None:
        try:
            source = self.source.retarget(context=context, namespace=namespace)
        except GryviaError as exc:
            self.call_from_thread(self.notify, exc.message, title="Cannot switch", severity="error")
            return
        self.call_from_thread(self._use_source, source)
        if namespace is not None and not self._namespace_exists(namespace):
            self.call_from_thread(
                self.notify,
                f"namespace {namespace} does not exist: its views stay empty until it is created",
                title="No such namespace",
                severity="warning",
            )

    def _namespace_exists(self, name: str) -> bool:
        """False only when the namespaces can be listed and `name` is not among them."""
        try:
            return name in self.source.namespaces()
        except GryviaError:
            return True  # may not list namespaces: nothing to say

    def _use_source(self, source: ClusterSource) -> None:
        if self.feed is not None:
            self.feed.stop()
        self.store.clear()
        self.source = source
        self.target = source.target
        self.connection = "connecting"
        self._start_feed()
        self.screen.post_message(ClusterChanged(None))


def make_app(
    source: ClusterSource,
    *,
    readonly: bool = False,
    clock: Clock | None = None,
    view: str = "jobs",
    config_file: Path | None = None,
) -> GryviaApp:
    """The console over `source` (KubeSource for real use, a fake for rendering tests);
    `clock` freezes time in tests; `view` is the first view shown; `config_file` the
    console's config (None: defaults, nothing saved; a bad file is reported, never raised)."""
    return GryviaApp(
        source,
        readonly=readonly,
        clock=clock or (lambda: datetime.now(UTC)),
        view=view,
        user_config=load_console_config(config_file, TABLE_COLUMNS),
    )
