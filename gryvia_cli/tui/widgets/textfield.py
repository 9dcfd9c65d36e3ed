"""TextField: an Input that keeps every typed key where the user meant it.

Textual routes each key to the widget focused when the key *arrives*, and a burst (a fast
typist, a paste, `tmux send-keys`) arrives before earlier keys of the same burst are handled.
With a plain Input, `ab<tab>cd` puts `abcd` in the first field, because tab moves the focus
only when it has bubbled up to the screen's binding, after `c` and `d` were queued for the
first field. A TextField therefore

- moves the focus on tab / shift+tab itself, synchronously (inside a container that traps the
  focus, such as the submit form, this cycles through its fields);
- runs its own key bindings (backspace, arrows, home, end, enter ...) as the key reaches it,
  not after the key has bubbled up to the app and come back, when later keys of the burst
  were typed already (`abc`, backspace, `x` gave `abc`; now `abx`);
- hands a key that reaches it after the focus has moved on to the widget focused now, instead
  of typing it (or letting it bubble to one-key bindings);
- (FormSelect does the first two for a form's selects);
- keeps the cursor where it was on focus (no select-all), so typing after a tab back into a
  field appends instead of replacing what was there.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from textual import events
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Input, Select, TextArea


def refocus_key(widget: Widget, event: events.Key) -> bool:
    """If `widget` no longer has the focus of its screen, stop `event` and send a copy to the
    widget focused now (the screen when nothing is); True when it did. A key that bubbled up
    from a part of `widget` with the focus (a select's open list) is left alone: that part
    had it first, and a copy sent back to it would bubble up here again, for ever."""
    screen = widget.screen
    focused = screen.focused
    if focused is widget or (focused is not None and widget in focused.ancestors):
        return False
    event.prevent_default()
    event.stop()
    target = screen.focused or screen
    target.post_message(events.Key(event.key, event.character))
    return True


def keep_keys(widget: Widget, event: events.Key) -> bool:
    """`refocus_key`, then tab / shift+tab moving the focus now; True when it handled
    `event` (call it first in a field's `_on_key`)."""
    if refocus_key(widget, event):
        return True
    if event.key not in ("tab", "shift+tab") or widget.screen.focused is not widget:
        return False
    event.prevent_default()
    event.stop()
    if event.key == "tab":
        widget.screen.focus_next()
    else:
        widget.screen.focus_previous()
    return True


@cache
def _binding_actions(cls: type[Widget]) -> dict[str, str]:
    """Key -> action of the `BINDINGS` of `cls` and its bases (a subclass's win)."""
    actions: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        for binding in klass.__dict__.get("BINDINGS", ()):
            if isinstance(binding, Binding):
                actions.update(
                    dict.fromkeys((k.strip() for k in binding.key.split(",")), binding.action)
                )
    return actions


class TextField(Input):
    """An Input for forms and prompts; see the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("select_on_focus", False)
        super().__init__(*args, **kwargs)

    async def _on_key(self, event: events.Key) -> None:
        # Runs before Input._on_key (Textual calls each class's handler unless prevented).
        if keep_keys(self, event) or event.is_printable:
            return  # printable keys: Input._on_key inserts them, in order
        actions = _binding_actions(type(self))
        action = next((actions[k] for k in event.aliases if k in actions), None)
        if action is None:
            return
        event.prevent_default()  # acted on now, not after bubbling up to the app and back
        event.stop()
        await self.run_action(action)


class FormSelect(Select[str]):
    """A Select for forms: tab and keys of a burst behave as in a TextField."""

    async def _on_key(self, event: events.Key) -> None:
        keep_keys(self, event)


FORM_CLASS = "text-form"
"""Class of a container whose controls (inputs and selects) all count as typing."""


def is_typing(focused: Widget | None) -> bool:
    """Whether keys go to text now: `focused` is an Input or TextArea, or sits in a container
    of class `text-form` (the submit form, whose selects must not pass letters on either).
    While this holds no printable key may run a one-key binding."""
    if focused is None:
        return False
    if isinstance(focused, Input | TextArea):
        return True
    return any(node.has_class(FORM_CLASS) for node in focused.ancestors_with_self)
