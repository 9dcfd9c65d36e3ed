"""`user_text`: cluster or user text as a Rich `Text`, the one way the CLI's tables and the
console show job names, commands, labels, events, messages, node and tenant names, errors.

A `Text` is never parsed as markup (Rich's console markup, Textual's content markup with its
`[@click=...]` actions), so `[bold]x[/bold]` or `[/]` show as typed; control characters and
escapes are made visible first (`gryvia_cli.core.plaintext.visible`). Textual widgets given a
`str` (Static, Label, an Option's prompt, a notification) parse it as markup: give them this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gryvia_cli.core.plaintext import visible

if TYPE_CHECKING:
    from rich.style import Style
    from rich.text import Text


def user_text(value: Any, style: str | Style = "", *, multiline: bool = False) -> Text:
    """`value` (str() of it; None is "") as plain Text in `style`, controls made visible;
    line breaks kept only with `multiline`."""
    from rich.text import Text

    raw = "" if value is None else value if isinstance(value, str) else str(value)
    return Text(visible(raw, multiline=multiline), style=style)
