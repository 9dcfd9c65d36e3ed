"""The `?` screen: every key, generated from the binding registry (write keys hidden when
read-only)."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

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


class HelpScreen(ModalScreen[None]):
    """Keys by scope, the current view's first."""

    BINDINGS: ClassVar = [("escape,question_mark,q", "dismiss", "Close")]

    def __init__(self, current: str, readonly: bool) -> None:
        super().__init__()
        self.current = current
        self.readonly = readonly

    def compose(self) -> ComposeResult:
        """One table per scope."""
        with Vertical(classes="dialog -help"):
            yield Label("Keys  (esc closes · ctrl+p: command palette)", classes="dialog--title")
            with VerticalScroll():
                for scope in scope_order(self.current):
                    keys = [k for k in SCOPES[scope] if not (self.readonly and k.write)]
                    if not keys:
                        continue
                    table = Table(box=None, show_header=False, padding=(0, 1), expand=True)
                    table.add_column(width=12, style="bold")
                    table.add_column(width=12)
                    table.add_column(ratio=1)
                    for key in keys:
                        cells = (key_label(key), key.description, key.tooltip)
                        table.add_row(*(user_text(c) for c in cells))  # `[` is no markup
                    yield Static(SCOPE_TITLES[scope], classes="section-title")
                    yield Static(table)
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
