"""FilterInput: a one-line input (filter, search, `:` command) that takes and gives back the
focus at once.

Textual routes each key to the widget focused when the key arrives, so in a fast burst such
as `/train⏎l` the keys after `/` must find the input focused already and the `l` after enter
must still reach the table. The views open these inputs from priority bindings that move the
focus synchronously; on enter the input hands the focus back synchronously, and keys it
receives after that are not typed but go to the widget focused now (TextField's rule), so a
burst such as `:submit⏎` followed by text lands in the form field the line gave the focus to.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding
from textual.widget import Widget

from gryvia_cli.tui.widgets.textfield import TextField, refocus_key


class FilterInput(TextField):
    """An Input shown on demand; `return_to` (a selector) gets the focus back on enter;
    escape empties and closes it."""

    BINDINGS: ClassVar = [Binding("escape", "cancel_line", "Close", show=False)]

    def __init__(
        self,
        *,
        return_to: str | None = None,
        keep: bool = True,
        placeholder: str = "",
        id: str | None = None,
    ) -> None:
        super().__init__(placeholder=placeholder, id=id, classes="filter")
        self.return_to = return_to
        self.keep = keep
        self._previous: Widget | None = None

    def open(self) -> None:
        """Show the input and focus it now."""
        focused = self.screen.focused
        if focused is not self:
            self._previous = focused
        self.add_class("-active")
        self.screen.set_focus(self)

    def close(self) -> None:
        """Hide the input (kept while it holds a filter) and focus back now."""
        if not self.keep:
            self.value = ""
        self.set_class(bool(self.value), "-active")
        target = self.screen.query_one(self.return_to) if self.return_to else self._previous
        self.screen.set_focus(target)

    def submit_now(self) -> None:
        """Close, then post Submitted with the value."""
        value = self.value
        self.close()
        self.post_message(self.Submitted(self, value))

    def action_cancel_line(self) -> None:
        """Escape: empty, close, and tell the view (Changed) so it drops the filter."""
        self.value = ""
        self.close()

    async def action_submit(self) -> None:
        """Enter: apply and hand the focus back."""
        self.submit_now()

    async def _on_key(self, event: events.Key) -> None:
        # Runs before TextField's and Input's _on_key (each class's handler, unless prevented).
        if refocus_key(self, event):  # routed here before enter moved the focus: not typed,
            return  # the widget focused now gets it
        if event.key in ("enter", "escape"):  # handled here, not by a binding, so that keys
            event.stop()  # behind it already see the new focus
            event.prevent_default()
            if event.key == "enter":
                self.submit_now()
            else:
                self.action_cancel_line()
