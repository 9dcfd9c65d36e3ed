"""The `?` screen: every key, generated from the binding registry (write keys hidden when
read-only).

Only the keys of the view shown and of the app are built and laid out when it opens: every
other scope (29 with the registry views, 250 keys) is one folded line whose table is built
the first time it is opened (enter or a click), so `?` costs the same whatever the number of
views."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

import gryvia_cli.tui.kinds  # noqa: F401  (registers the specs: their sort keys join SCOPES)
from gryvia_cli.tui.bindings import REGISTRY_VIEWS, SCOPE_TITLES, SCOPES, Key
from gryvia_cli.usertext import user_text

VIEW_SCOPES = {
    "jobs": ("jobs", "lists", "table"),
    "queue": ("queue", "lists", "table"),
    "nodes": ("nodes", "pods", "lists", "table"),
    "cost": ("cost", "costjobs", "lists", "table"),
    "capacity": (),
    "submit": ("submit",),
    "job": ("job", "logs"),
    **{name: ("list", f"{name}-list", "lists", "table") for name in REGISTRY_VIEWS},
}


def key_label(key: Key) -> str:
    """How a key is written for people (`/`, `ctrl+d`, `up, k`)."""
    if key.key_display:
        return key.key_display
    names = {"slash": "/", "question_mark": "?", "escape": "esc"}
    return ", ".join(names.get(k, k) for k in key.key.split(","))


def scope_order(current: str) -> list[str]:
    """Scopes of the current view first, then the app's, then the rest."""
    first = [s for s in VIEW_SCOPES.get(current, ()) if s in SCOPES]
    return [*first, "app", *(s for s in SCOPES if s not in first and s != "app")]


def key_table(keys: tuple[Key, ...] | list[Key]) -> Table:
    """The table of `keys`: key, action, what it does (all plain text: `[` is no markup)."""
    table = Table(box=None, show_header=False, padding=(0, 1), expand=True)
    table.add_column(width=12, style="bold")
    table.add_column(width=12)
    table.add_column(ratio=1)
    for key in keys:
        cells = (key_label(key), key.description, key.tooltip)
        table.add_row(*(user_text(c) for c in cells))
    return table


class FoldedScope(Static, can_focus=True):
    """A scope of another view, folded to one line; enter (or a click) builds its table the
    first time and shows or hides it."""

    BINDINGS: ClassVar = [Binding("enter", "unfold", "Show keys", show=False)]

    def __init__(self, scope: str, keys: list[Key]) -> None:
        super().__init__(
            self._label(scope, len(keys), opened=False),
            id=f"help-{scope}",
            classes="section-title -folded",
        )
        self.scope = scope
        self.keys = keys
        self.table: Static | None = None

    @staticmethod
    def _label(scope: str, count: int, *, opened: bool) -> Text:
        return Text(f"{'▾' if opened else '▸'} {SCOPE_TITLES[scope]}  ({count} keys)")

    def _title(self, *, opened: bool) -> None:
        self.update(self._label(self.scope, len(self.keys), opened=opened))

    def action_unfold(self) -> None:
        """Show the scope's keys (built now, the first time) or hide them again."""
        if self.table is None:
            self.table = Static(key_table(self.keys), classes="help-keys")
            self.parent.mount(self.table, after=self)  # type: ignore[union-attr]
        else:
            self.table.display = not self.table.display
        self._title(opened=bool(self.table.display))

    def on_click(self) -> None:
        """A click toggles as enter does."""
        self.action_unfold()


class HelpScreen(ModalScreen[None]):
    """Keys by scope, the current view's first."""

    BINDINGS: ClassVar = [("escape,question_mark,q", "dismiss", "Close")]

    def __init__(self, current: str, readonly: bool) -> None:
        super().__init__()
        self.current = current
        self.readonly = readonly

    def compose(self) -> ComposeResult:
        """A table per scope of the current view and of the app; the other scopes folded."""
        current = set(VIEW_SCOPES.get(self.current, ())) | {"app"}
        with Vertical(classes="dialog -help"):
            yield Label(
                "Keys  (esc closes · ctrl+p: command palette · enter opens a ▸ line)",
                classes="dialog--title",
            )
            with VerticalScroll():
                folded = False
                for scope in scope_order(self.current):
                    keys = [k for k in SCOPES[scope] if not (self.readonly and k.write)]
                    if not keys:
                        continue
                    if scope in current:
                        yield Static(SCOPE_TITLES[scope], classes="section-title")
                        yield Static(key_table(keys), classes="help-keys")
                        continue
                    if not folded:
                        folded = True
                        yield Static("Other views", classes="section-title")
                    yield FoldedScope(scope, keys)
                yield from self._user_keys()

    def _user_keys(self) -> ComposeResult:
        """Hotkeys and aliases of console.yaml, when it has any."""
        mine: list[tuple[str, str, str]] = getattr(self.app, "user_keys", list)()
        if mine:
            table = Table(box=None, show_header=False, padding=(0, 1), expand=True)
            table.add_column(width=12, style="bold")
            table.add_column(ratio=1)
            for key, command, description in mine:
                table.add_row(Text(key), Text(f"{command}  {description}".strip()))
            yield Static("Yours (console.yaml)", classes="section-title")
            yield Static(table)
