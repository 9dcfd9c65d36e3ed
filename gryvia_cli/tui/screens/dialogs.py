"""Modal dialogs: confirm, pick one name from a list, type a line of text."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from gryvia_cli.core.plaintext import visible
from gryvia_cli.errors import GryviaError
from gryvia_cli.tui.bindings import CONFIRM, bindings
from gryvia_cli.tui.messages import NamesLoaded
from gryvia_cli.usertext import user_text

NAMES_SHOWN = 8
"""Subjects a confirmation lists by name before it says `and N more`."""


def subject_lines(subjects: Sequence[str], shown: int = NAMES_SHOWN) -> list[str]:
    """The first `shown` subjects (`namespace/name`), one a line, then `… and N more`."""
    lines = [f"  {s}" for s in subjects[:shown]]
    if len(subjects) > shown:
        lines.append(f"  … and {len(subjects) - shown} more")
    return lines


class ConfirmDialog(ModalScreen[bool]):
    """Ask a yes/no question about `subjects` (the jobs it names, `namespace/name`);
    dismisses with True for yes."""

    BINDINGS: ClassVar = bindings(CONFIRM)

    def __init__(self, question: str, detail: str = "", subjects: Sequence[str] = ()) -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.subjects = tuple(subjects)

    def compose(self) -> ComposeResult:
        """Question, the names, detail and the keys."""
        with Vertical(classes="dialog"):
            yield Label(user_text(self.question), classes="dialog--title")
            if self.subjects:
                names = Text("\n".join(subject_lines(self.subjects)))
                yield Label(names, id="confirm-subjects", classes="dialog--subjects")
            if self.detail:
                yield Label(user_text(self.detail), classes="dialog--detail")
            yield Label("y: yes    n / esc: no", classes="dialog--keys")

    def action_confirm(self) -> None:
        """Yes."""
        self.dismiss(True)

    def action_dismiss_dialog(self) -> None:
        """No."""
        self.dismiss(False)


class PickerDialog(ModalScreen[str | None]):
    """Pick one name (type to narrow); the names are read by `load` in a thread worker.
    Dismisses with the name or None."""

    BINDINGS: ClassVar = [("escape", "dismiss_dialog", "Close")]

    def __init__(self, title: str, current: str | None, load: Callable[[], list[str]]) -> None:
        super().__init__()
        self.title_text = title
        self.current = current
        self.load = load
        self.names: list[str] = []

    def compose(self) -> ComposeResult:
        """Title, filter input and the list."""
        with Vertical(classes="dialog -picker"):
            yield Label(user_text(self.title_text), classes="dialog--title")
            yield Input(placeholder="loading…", id="picker-filter")
            yield OptionList(id="picker-list")

    def on_mount(self) -> None:
        """Read the names and focus the filter."""
        self.query_one("#picker-filter", Input).focus()
        self._read()

    @work(thread=True, exclusive=True)
    def _read(self) -> None:
        """Read the names (thread worker)."""
        try:
            self.post_message(NamesLoaded(self.title_text, self.load()))
        except GryviaError as exc:
            self.post_message(NamesLoaded(self.title_text, [], exc.message))

    def on_names_loaded(self, message: NamesLoaded) -> None:
        """Show the names, or why there are none."""
        box = self.query_one("#picker-filter", Input)
        box.placeholder = visible(message.error) or "type to filter, enter to choose"
        self.names = message.names
        self._fill(box.value)

    def _fill(self, text: str) -> None:
        options = self.query_one("#picker-list", OptionList)
        options.clear_options()
        wanted = text.lower()
        shown = [n for n in self.names if wanted in n.lower()]
        options.add_options(
            Option(user_text(f"{n}  (current)" if n == self.current else n), id=n) for n in shown
        )
        if shown:
            options.highlighted = 0

    @on(Input.Changed, "#picker-filter")
    def _filter(self, event: Input.Changed) -> None:
        self._fill(event.value)

    @on(Input.Submitted, "#picker-filter")
    def _submit(self) -> None:
        options = self.query_one("#picker-list", OptionList)
        if options.highlighted is not None:
            self.dismiss(options.get_option_at_index(options.highlighted).id)

    def on_key(self, event: events.Key) -> None:
        """Up and down move in the list while typing."""
        options = self.query_one("#picker-list", OptionList)
        if event.key == "up":
            options.action_cursor_up()
            event.stop()
        elif event.key == "down":
            options.action_cursor_down()
            event.stop()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_dialog(self) -> None:
        """Close without choosing."""
        self.dismiss(None)


class PromptDialog(ModalScreen[str | None]):
    """Ask for one line of text (with suggestions); dismisses with it or None."""

    BINDINGS: ClassVar = [("escape", "dismiss_dialog", "Close")]

    def __init__(self, title: str, placeholder: str = "", suggestions: list[str] | None = None):
        super().__init__()
        self.title_text = title
        self.placeholder = placeholder
        self.suggestions = suggestions or []

    def compose(self) -> ComposeResult:
        """Title and input."""
        with Vertical(classes="dialog -prompt"):
            yield Label(user_text(self.title_text), classes="dialog--title")
            suggester = SuggestFromList(self.suggestions, case_sensitive=False)
            yield Input(placeholder=self.placeholder, suggester=suggester, id="prompt-input")

    def on_mount(self) -> None:
        """Focus the input."""
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_dismiss_dialog(self) -> None:
        """Close without an answer."""
        self.dismiss(None)
