"""ViewScreen: what every view shares (top bar, footer, store refresh, read-only checks) and
the job write actions (cancel, delete, resubmit) with confirmation and a thread worker."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, cast

from textual import events, on, work
from textual.app import ComposeResult
from textual.geometry import Size
from textual.screen import Screen
from textual.widgets import Input

from gryvia_cli.core.jobs import nothing_to_cancel
from gryvia_cli.core.manifests import resubmit_body
from gryvia_cli.errors import GryviaError
from gryvia_cli.tui.messages import (
    ClusterChanged,
    JobsCancelled,
    JobsDeleted,
    JobsSubmitted,
    WriteFinished,
)
from gryvia_cli.tui.screens.dialogs import ConfirmDialog
from gryvia_cli.tui.store import Change, ClusterStore
from gryvia_cli.tui.widgets.filterinput import FilterInput
from gryvia_cli.tui.widgets.footer import KeyFooter
from gryvia_cli.tui.widgets.textfield import is_typing
from gryvia_cli.tui.widgets.toosmall import TooSmall, too_small
from gryvia_cli.tui.widgets.topbar import TopBar

WRITE_DETAIL = {
    "cancel": "The operator stops the pods; the job and its cost record are kept.",
    "delete": "The job, its pods and its volume claim are removed.",
    "resubmit": "A new job with the same spec is created for each.",
    "create": "The job(s) are created as the preview shows them.",
}
"""What each write does, shown under the names in its confirmation."""

PRIORITY_TYPING = frozenset({"filter", "search"})
"""Actions bound to printable keys with priority: refused while an input has the focus."""

if TYPE_CHECKING:
    from datetime import datetime

    from gryvia_cli.tui.app import GryviaApp
    from gryvia_cli.tui.source import ClusterSource


class ViewScreen(Screen[None]):
    """A view of the store: subclasses compose the body and implement `refresh_view`."""

    VIEW: ClassVar[str] = "jobs"
    WRITE_ACTIONS: ClassVar[frozenset[str]] = frozenset()

    def __init__(self) -> None:
        super().__init__()
        self._seen = -1

    @property
    def console(self) -> GryviaApp:
        """The app, typed."""
        return cast("GryviaApp", self.app)

    @property
    def store(self) -> ClusterStore:
        """The cluster copy."""
        return self.console.store

    @property
    def source(self) -> ClusterSource:
        """The data source."""
        return self.console.source

    def now(self) -> datetime:
        """The app clock (frozen in tests)."""
        return self.console.now()

    @property
    def view_name(self) -> str:
        """The view the top bar highlights."""
        return self.VIEW

    def compose(self) -> ComposeResult:
        """Top bar, body, footer."""
        yield TopBar(self.view_name)
        yield from self.compose_body()
        yield FilterInput(
            id="command-line",
            keep=False,
            placeholder=": jobs, queue, capacity, cost, nodes, submit · ctx NAME · ns NAME · quit",
        )
        yield KeyFooter()
        yield TooSmall()

    def compose_body(self) -> ComposeResult:
        """The view's own widgets."""
        yield from ()

    def refresh_view(self, change: Change | None) -> None:
        """Show the store; `change` None means everything may have changed."""

    def on_mount(self) -> None:
        """First paint from what the store holds already."""
        self._fit(self.app.size)
        self._sync(None)

    @on(events.Resize)
    def _resized(self, event: events.Resize) -> None:
        """The terminal changed size: show or drop the too-small notice."""
        self._fit(event.size)

    def _fit(self, size: Size) -> None:
        self.set_class(too_small(size), "-too-small")
        self.query_one(TooSmall).show_for(size)

    def _sync(self, change: Change | None) -> None:
        self._seen = self.store.version
        self.refresh_view(change)

    def on_cluster_changed(self, message: ClusterChanged) -> None:
        """Apply a batch of changes."""
        self._sync(message.change if self._seen >= 0 else None)

    def on_screen_resume(self) -> None:
        """Catch up with changes made while another view was shown (the terminal's size too)."""
        self._fit(self.app.size)
        if self._seen != self.store.version:
            self._sync(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide write actions in read-only mode; the priority `/` key acts only when no
        input has the focus."""
        if action in PRIORITY_TYPING:
            return not is_typing(self.focused)
        return not (action in self.WRITE_ACTIONS and self.console.readonly)

    def on_key(self, event: events.Key) -> None:
        """A printable key that reaches the screen while the user is typing (a form's select
        did not take it, say) stops here: it never runs a one-key binding of the view or app."""
        if event.is_printable and is_typing(self.focused):
            event.stop()
            event.prevent_default()

    def open_command_line(self) -> None:
        """Show the `:` line."""
        self.query_one("#command-line", FilterInput).open()

    @on(Input.Submitted, "#command-line")
    def _command(self, event: Input.Submitted) -> None:
        self.console.jump_to(event.value)

    # -- job writes ----------------------------------------------------------------------------

    def confirm_write(self, verb: str, keys: list[str]) -> None:
        """Ask, then run `verb` (cancel, delete, resubmit) on the jobs `keys` in a worker."""
        self.confirm_jobs(verb, keys, lambda: self.write_jobs(verb, keys))

    def confirm_jobs(self, verb: str, keys: list[str], then: Callable[[], object]) -> None:
        """Every write goes through here: a dialog naming the jobs `keys` (`namespace/name`)
        and what `verb` (cancel, delete, resubmit, create) does; `then` runs on yes only.
        Nothing happens without jobs or in read-only mode."""
        if not keys or self.console.readonly:
            return

        def answered(yes: bool | None) -> None:
            if yes:
                then()

        question = f"{verb.capitalize()} {len(keys)} job(s)?"
        self.app.push_screen(ConfirmDialog(question, WRITE_DETAIL[verb], keys), answered)

    @work(thread=True, group="writes")
    def write_jobs(self, verb: str, keys: list[str]) -> None:
        """Cancel, delete or resubmit jobs (thread worker); posts a WriteFinished."""
        done: list[str] = []
        failed: list[tuple[str, str]] = []
        jobs = self.store.jobs
        for key in keys:
            ns, _, name = key.partition("/")
            try:
                if verb == "cancel" and key in jobs and jobs[key].summary.terminal:
                    failed.append((key, nothing_to_cancel(name, jobs[key].summary.phase)))
                elif verb == "cancel":
                    self.source.cancel_job(ns, name)
                    done.append(key)
                elif verb == "delete":
                    self.source.delete_job(ns, name)
                    done.append(key)
                elif key in jobs:
                    done.append(self.source.create_job(resubmit_body(jobs[key].raw)))
            except GryviaError as exc:
                failed.append((key, exc.message))
        message = {"cancel": JobsCancelled, "delete": JobsDeleted}.get(verb, JobsSubmitted)
        self.post_message(message(done, failed))

    @on(WriteFinished)
    def _write_finished(self, message: WriteFinished) -> None:
        """Tell the user how a write went."""
        if message.done:
            names = ", ".join(k.split("/", 1)[-1] for k in message.done[:5])
            self.notify(f"{message.verb} {names}", title="Done")
        for key, error in message.failed[:5]:
            self.notify(
                f"{key}: {error}", title=f"Could not {message.action}", severity="error", timeout=10
            )
