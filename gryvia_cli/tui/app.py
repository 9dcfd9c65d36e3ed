"""GryviaApp: views as modes, the live feed into the store, jumps, switchers; `make_app`.

Screens load where they are first shown (`modes`, and inside the actions that push them):
starting the console imports Textual, the store and the first view only."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.notifications import SeverityLevel
from textual.reactive import reactive

from gryvia_cli.core.plaintext import visible
from gryvia_cli.tui.bindings import APP, REGISTRY_VIEWS, VIEWS, bindings, resolve_jump
from gryvia_cli.tui.commands import GryviaCommands
from gryvia_cli.tui.driver import exit_by_deadline, quick_driver
from gryvia_cli.tui.feed import Feed
from gryvia_cli.tui.modes import view_modes
from gryvia_cli.tui.retarget import Retargeting
from gryvia_cli.tui.source import ClusterSource, Stoppable, Target
from gryvia_cli.tui.store import ClusterStore
from gryvia_cli.tui.theme import GRYVIA_THEME
from gryvia_cli.tui.threads import DaemonExecutor
from gryvia_cli.tui.usercommands import UserCommands, table_columns
from gryvia_cli.tui.userconfig import LoadedConfig, load_console_config
from gryvia_cli.tui.widgets.textfield import is_typing

Clock = Callable[[], datetime]
FLUSH_SECONDS = 0.1
"""How often buffered watch updates are applied (seconds): a change is on screen within ~0.1 s
plus a redraw, and a busy cluster costs at most ten re-sorts a second."""


class GryviaApp(UserCommands, Retargeting):
    """The console. Build it with `make_app`."""

    CSS_PATH = "gryvia.tcss"
    TITLE = "gryvia"
    BINDINGS: ClassVar = bindings(APP)
    COMMANDS: ClassVar = App.COMMANDS | {GryviaCommands}
    MODES: ClassVar = view_modes(REGISTRY_VIEWS)

    target: reactive[Target] = reactive(Target("", None), always_update=True)
    connection: reactive[str] = reactive("connecting", always_update=True)
    """live | slow | connecting | reconnecting | unreachable | failed; `connection_detail`
    holds the top bar's words for it (set before it)."""

    def __init__(
        self,
        source: ClusterSource,
        *,
        readonly: bool,
        clock: Clock | None,
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
        self.exit_deadline = False
        """Set by `gryvia_cli.tui.run`: asking to close also arms `exit_by_deadline`."""
        self.set_reactive(GryviaApp.target, source.target)

    def exit(self, result: object = None, return_code: int = 0, message: object = None) -> None:
        """Close the console; with `exit_deadline` the process ends within
        `EXIT_DEADLINE_SECONDS` even when closing hangs."""
        if self.exit_deadline:
            exit_by_deadline(self._driver, return_code)
        super().exit(result, return_code, message)  # type: ignore[arg-type]

    def now(self) -> datetime:
        """The clock every view uses: the test's frozen one, else the source's (the API
        server's time, `ClusterSource.now`), so that ages read as kubectl shows them."""
        return self.clock() if self.clock is not None else self.source.now()

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

    # -- navigation ------------------------------------------------------------------------

    def action_view(self, name: str) -> None:
        """Show view `name`."""
        if name in self.MODES:
            self.switch_mode(name)

    def open_job(self, key: str | None, tab: str) -> None:
        """Push the Job view of `key` (namespace/name)."""
        from gryvia_cli.tui.screens.job import JobScreen

        if key:
            self.push_screen(JobScreen(key, tab))

    def action_jump(self) -> None:
        """`:` — type a view name (or ctx, ns, quit)."""
        from gryvia_cli.tui.screens.base import ViewScreen
        from gryvia_cli.tui.screens.dialogs import PromptDialog

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
        from gryvia_cli.tui.describeref import describe_ref
        from gryvia_cli.tui.screens.registry import open_object

        ref = describe_ref(argument, self.target.namespace)
        if isinstance(ref, str):
            self.notify(ref, severity="warning", markup=False)
        else:
            open_object(self, ref)

    def action_help(self) -> None:
        """Show every key."""
        from gryvia_cli.tui.screens.help import HelpScreen
        from gryvia_cli.tui.screens.job import JobScreen

        current = "job" if isinstance(self.screen, JobScreen) else (self.current_mode or "jobs")
        self.push_screen(HelpScreen(current, self.readonly))


def make_app(
    source: ClusterSource,
    *,
    readonly: bool = False,
    clock: Clock | None = None,
    view: str = "jobs",
    config_file: Path | None = None,
) -> GryviaApp:
    """The console over `source` (KubeSource for real use, a fake for rendering tests);
    `clock` freezes time in tests (None: the source's, the API server's time); `view` is the
    first view shown; `config_file` the console's config (None: defaults, nothing saved; a
    bad file is reported, never raised)."""
    return GryviaApp(
        source,
        readonly=readonly,
        clock=clock,
        view=view,
        user_config=load_console_config(config_file, table_columns),
    )
