"""The key footer: Textual's `Footer`, with its keys created in the footer's compact state.

Textual's `FooterKey.compact` defaults to True and is then data-bound to the footer's
(False here): on mount each key adds the `-compact` class and removes it again, and each class
change restyles the key. With ~20 keys, recomposed on every change of bindings (a screen or
focus change), that is ~40 style updates each time: about a fifth of the console's start-up
CPU. Here each key starts with the footer's value and class before it mounts, so neither the
first watcher call nor the data binding changes anything. What is drawn is the same. Keys not
bound to the footer's `compact` (the command-palette key) are left as Textual makes them.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class KeyFooter(Footer):
    """`Footer` whose keys are created compact exactly when the footer is."""

    def compose(self) -> ComposeResult:
        """Textual's keys, each bound one set to the footer's `compact` before it mounts."""
        for widget in super().compose():
            bound = getattr(widget, "_reactive_connect", None) or {}
            if isinstance(widget, FooterKey) and "compact" in bound:
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
            yield widget
