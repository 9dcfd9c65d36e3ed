"""The list and detail screens every `ViewSpec` of the registry gets: `ListScreen` (a view
mode such as `:events`, or pushed for one object's events) and `DescribeScreen` (fields,
spec, status, conditions and events of one object, plus the spec's own sections).

Data: the store for the spec's kinds; polls (`ViewSpec.poll`) and the described object are
read through the ClusterSource in thread workers. Cluster text is drawn as plain Rich Text,
never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Input, Static

from gryvia_cli.core.cells import plural
from gryvia_cli.core.describe import Section, describe
from gryvia_cli.core.plaintext import visible
from gryvia_cli.errors import GryviaError
from gryvia_cli.tui.bindings import DESCRIBE, LIST, LIST_SORTS, bindings
from gryvia_cli.tui.kinds import events_of
from gryvia_cli.tui.registry import BY_KIND, REGISTRY, Ctx, ObjectRef, Poll, ViewSpec
from gryvia_cli.tui.screens.base import ViewScreen
from gryvia_cli.tui.screens.tables import TableView
from gryvia_cli.tui.sorting import SortState, text_value
from gryvia_cli.tui.store import Change
from gryvia_cli.tui.widgets.filterinput import FilterInput
from gryvia_cli.tui.widgets.rowtable import Cell, RowTable
from gryvia_operator.api.names import LABEL_JOB

if TYPE_CHECKING:
    from gryvia_cli.tui.app import GryviaApp

LABEL_WIDTH = 30
"""Widest label column of a detail view; a longer label pushes its value right."""


class Polled(Message):
    """A poll of a list view answered: its rows, or the error's words."""

    def __init__(self, rows: list[dict[str, Any]], error: str = "") -> None:
        super().__init__()
        self.rows = rows
        self.error = error


class Described(Message):
    """The described object, its events and the spec's extras were read."""

    def __init__(
        self,
        raw: dict[str, Any] | None,
        events: list[dict[str, Any]],
        extra: dict[str, list[dict[str, Any]]],
        error: str = "",
    ) -> None:
        super().__init__()
        self.raw, self.events, self.extra, self.error = raw, events, extra, error


def open_events(app: GryviaApp, namespace: str, names: Sequence[str], title: str) -> None:
    """Push an Events view of the objects `names` in `namespace`, newest first."""
    spec = REGISTRY["events"]
    app.push_screen(ListScreen(spec, poll=events_of(namespace, list(names)), title=title))


def open_job_events(app: GryviaApp, key: str | None, pods: Sequence[str] | None = None) -> None:
    """Push the events of job `key` (`namespace/name`) and of its pods (`pods`, else the
    live pods the store holds with the job's label)."""
    if not key:
        return
    ns, _, name = key.partition("/")
    if pods is None:
        pods = [
            str(p["metadata"]["name"])
            for p in app.store.objects["pods"].values()
            if (p["metadata"].get("namespace") == ns)
            and (p["metadata"].get("labels") or {}).get(LABEL_JOB) == name
        ]
    open_events(app, ns, [name, *sorted(pods)], f"Events of job {key} and its pods")


def open_object(app: GryviaApp, ref: ObjectRef | None) -> None:
    """Open `ref`: a job in the Job view, anything else in a DescribeScreen."""
    if ref is None:
        return
    if ref.kind == "jobs":
        app.open_job(f"{ref.namespace}/{ref.name}", "overview")
    else:
        app.push_screen(DescribeScreen(ref))


class ListScreen(TableView):
    """Rows of one spec: filter, table, status line; `d`/enter describe, `e` events. Sorts
    by any column (the spec's `shift+<letter>` keys, `ctrl+o`, `o`, `O`; first: the first
    column, in the order of the spec's rows) and hides columns (`ctrl+t`, saved in
    console.yaml under `spec.table_name`), as every TableView does."""

    BINDINGS: ClassVar = bindings(LIST)

    def __init__(self, spec: ViewSpec, *, poll: Poll | None = None, title: str = "") -> None:
        super().__init__()
        self.spec = spec
        self.default_sort = SortState(spec.columns[0].key, reverse=spec.descending)
        self.sorts = {"list-table": self.default_sort}
        for key in LIST_SORTS.get(spec.name, ()):  # this spec's own shift+<letter> keys
            self._bindings.key_to_bindings.setdefault(key.key, []).append(key.binding)
        self.poll = poll or spec.poll
        self.title_text = title
        self.pushed = bool(title)
        self.items: dict[str, Any] = {}
        self.polled: list[dict[str, Any]] = []
        self.poll_error = ""
        self.polls = 0
        self.query_text = ""

    @property
    def view_name(self) -> str:
        """The spec's name (the top bar highlights none of the numbered views)."""
        return self.spec.name

    def compose_body(self) -> ComposeResult:
        """Title, filter line, table, status line."""
        title = self.title_text or self.spec.title
        yield Static(Text(visible(f" {title}")), id="list-title", classes="title-line")
        yield FilterInput(
            placeholder=self.spec.placeholder, id="list-filter", return_to="#list-table"
        )
        yield RowTable(self.spec.columns, self._cells, empty_text="Loading…", id="list-table")
        yield Static(id="list-status", classes="status-line")

    def on_mount(self) -> None:
        """First paint, focus, and the poll when the spec polls."""
        super().on_mount()
        self.query_one(RowTable).focus()
        if self.poll is not None:
            self._poll_now()
            self.set_interval(self.spec.poll_every, self._tick)

    def _tick(self) -> None:
        if self.is_current:  # a view mode left behind, or covered, reads nothing
            self._poll_now()

    def on_screen_resume(self) -> None:
        """Shown again: catch up with the store, and poll at once."""
        super().on_screen_resume()
        if self.poll is not None and self.polls:
            self._poll_now()

    def ctx(self) -> Ctx:
        """What the spec's functions see."""
        return Ctx(self.store, self.now(), self.polled)

    def config_name(self, table: RowTable) -> str:
        """The spec's table name (`events`, `live-pods`)."""
        return self.spec.table_name

    def _cells(self, key: str) -> list[Cell]:
        item = self.items.get(key)
        return self.spec.cells(item, self.ctx()) if item is not None else []

    def _sorted(self, keys: list[str], ctx: Ctx) -> list[str]:
        """`keys` (in the spec's row order) in the order of the table's sort; ties keep the
        row order."""
        column = self.sorts["list-table"].column
        index = [c.key for c in self.spec.columns].index(column)
        own = self.spec.sort_values.get(column)
        position = {k: i for i, k in enumerate(keys)}

        def value(_: str, key: str) -> tuple[tuple[int, Any], int]:
            item = self.items[key]
            raw = own(item) if own else text_value(self.spec.cells(item, ctx)[index][0])
            return ((1, 0) if raw is None else (0, raw)), position[key]

        return self.ordered_keys("list-table", keys, value)

    @work(thread=True, exclusive=True, group="list-poll")
    def _poll_now(self) -> None:
        if self.poll is None:
            return
        try:
            rows = self.poll(self.source, self.console.target.namespace)
        except GryviaError as exc:
            self.post_message(Polled([], exc.message))
            return
        self.post_message(Polled(rows))

    def on_polled(self, message: Polled) -> None:
        """New rows from the poll."""
        self.polls += 1
        self.poll_error = message.error
        if not message.error:
            self.polled = message.rows
        self.refresh_view(None)

    def refresh_view(self, change: Change | None) -> None:
        """Rebuild the rows (for a store change of the spec's kinds, or a poll)."""
        if change is not None and not change.kinds & self.spec.kinds:
            return
        ctx = self.ctx()
        items = self.spec.rows(ctx)
        words = self.query_text.lower().split()
        shown = [k for k, item in items.items() if all(w in self.spec.search(item) for w in words)]
        self.items = items
        table = self.query_one(RowTable)
        loaded = self.polls > 0 if self.poll is not None else self.spec.kinds <= self.store.loaded
        table.empty_text = self.spec.empty if loaded else "Loading…"
        problem = self.poll_error or ("" if loaded else self._watch_problem())
        if problem:
            table.empty_text = f"Cannot read: {problem}"
        table.invalidate(None)
        table.set_order(self._sorted(shown, ctx))
        status = plural(len(items), self.spec.noun, self.spec.nouns or None)
        if len(shown) != len(items):
            status = f"{len(shown)} of {status} match “{self.query_text}”"
        state = self.sorts["list-table"]
        if state != self.default_sort:
            status += f" · sorted by {state.label}"
        elif self.spec.order:
            status += f" · {self.spec.order}"
        if self.poll is not None:
            status += f" · every {self.spec.poll_every:g}s"
        refused = self.store.not_allowed(*sorted(self.spec.kinds))
        if refused:
            status += f" · {refused}"
        self.query_one("#list-status", Static).update(Text(visible(" " + status)))

    def _watch_problem(self) -> str:
        """Why a watched kind of the spec has no list yet: its watch's last error (the CRD
        is not installed, RBAC refuses it), "" while it is still connecting."""
        feed = self.console.feed
        for kind in sorted(self.spec.kinds - self.store.loaded):
            if kind in self.store.failed and feed is not None:
                return feed.states[kind][1] or "the watch failed"
        return ""

    def action_filter(self) -> None:
        """Show and focus the filter line."""
        self.query_one("#list-filter", FilterInput).open()

    @on(Input.Changed, "#list-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.query_text = event.value
        self.refresh_view(None)

    def _ref(self) -> ObjectRef | None:
        key = self.query_one(RowTable).cursor_key
        item = self.items.get(key or "")
        return self.spec.ref(item) if item is not None else None

    def action_describe(self) -> None:
        """Describe the object of the row under the cursor."""
        open_object(self.console, self._ref())

    @on(RowTable.Activated, "#list-table")
    def _activated(self, event: RowTable.Activated) -> None:
        self.action_describe()

    def action_events(self) -> None:
        """The events of the object under the cursor."""
        ref = self._ref()
        if ref is not None:
            open_events(self.console, ref.events_namespace, [ref.name], f"Events of {ref.label}")

    def action_back(self) -> None:
        """Close a pushed view; in a view mode, clear the filter."""
        if self.pushed:
            self.dismiss()
        else:
            self.query_one("#list-filter", FilterInput).value = ""


def render_sections(sections: Sequence[Section]) -> Text:
    """Sections as plain text: a title line, then `label  value` rows aligned. Every string
    is cluster text: never markup, control characters shown as glyphs (`␛`), a line break
    inside a value as ` ⏎ `."""
    out = Text()
    width = min(max((len(k) for s in sections for k, _ in s.rows), default=8), LABEL_WIDTH)
    for i, section in enumerate(sections):
        if i:
            out.append("\n")
        out.append(visible(section.title) + "\n", style="bold")
        if not section.rows:
            out.append("  " + visible(section.empty) + "\n", style="dim")
        for label, value in section.rows:
            out.append(f"  {visible(label):<{width}}  ", style="bold" if label else "")
            out.append(visible(value.replace("\n", " ⏎ ")) + "\n")
    return out


class DescribeScreen(ViewScreen):
    """One object like `kubectl describe`, re-read every few seconds; pushed."""

    BINDINGS: ClassVar = bindings(DESCRIBE)
    REFRESH_EVERY = 5.0

    def __init__(self, ref: ObjectRef) -> None:
        super().__init__()
        self.ref = ref
        self.spec = BY_KIND.get(ref.kind)
        self.raw: dict[str, Any] | None = None
        self.events: list[dict[str, Any]] = []
        self.extra: dict[str, list[dict[str, Any]]] = {}
        self.error = ""
        self.loads = 0

    @property
    def view_name(self) -> str:
        """The view it was opened from."""
        return self.app.current_mode or "jobs"

    def compose_body(self) -> ComposeResult:
        """Title, scrolling body."""
        title = Text(f" Describe {visible(self.ref.label)}")
        yield Static(title, id="describe-title", classes="title-line")
        with VerticalScroll(id="describe-scroll"):
            yield Static(Text("Loading…"), id="describe-body")

    def on_mount(self) -> None:
        """Read now and every few seconds."""
        super().on_mount()
        self.query_one("#describe-scroll").focus()
        self._load()
        self.set_interval(self.REFRESH_EVERY, self._tick)

    def _tick(self) -> None:
        if self.is_current:
            self._load()

    @work(thread=True, exclusive=True, group="describe")
    def _load(self) -> None:
        ref = self.ref
        try:
            raw = self.source.get_object(ref.kind, ref.namespace, ref.name)
        except GryviaError as exc:
            self.post_message(Described(None, [], {}, exc.message))
            return
        try:
            events = self.source.events(ref.events_namespace, [ref.name])
        except GryviaError:
            events = []  # events are best effort
        extra = self.spec.fetch(self.source, raw) if self.spec else {}
        self.post_message(Described(raw, events, extra))

    def on_described(self, message: Described) -> None:
        """Show what was read."""
        self.loads += 1
        self.error = message.error
        if message.raw is not None:
            self.raw, self.events, self.extra = message.raw, message.events, message.extra
        self.refresh_view(None)

    def sections(self) -> list[Section]:
        """The spec's sections, then the generic ones."""
        if self.raw is None:
            return []
        ctx = Ctx(self.store, self.now(), extra=self.extra)
        own = self.spec.sections(self.raw, ctx) if self.spec else []
        return [*own, *describe(self.raw, ctx.now, self.events)]

    def refresh_view(self, change: Change | None) -> None:
        """Redraw from the last read (the store feeds the spec's sections)."""
        if self.loads == 0:
            return
        body = self.query_one("#describe-body", Static)
        if self.raw is None:
            body.update(Text(visible(f"Cannot read {self.ref.label}: {self.error}")))
            return
        text = render_sections(self.sections())
        if self.error:
            text = Text(visible(f"(last read failed: {self.error})") + "\n", style="dim") + text
        body.update(text)

    def action_back(self) -> None:
        """Back to where it was opened."""
        self.dismiss()

    def action_events(self) -> None:
        """This object's events in an Events view."""
        ref = self.ref
        open_events(self.console, ref.events_namespace, [ref.name], f"Events of {ref.label}")
