"""The console's colour theme (the stylesheet refers to these variables)."""

from __future__ import annotations

from textual.theme import Theme

GRYVIA_THEME = Theme(
    name="gryvia",
    primary="#5FA8FF",
    secondary="#8A7CFF",
    accent="#FFB454",
    warning="#FFC857",
    error="#FF5F6D",
    success="#4FD18B",
    foreground="#D8DEE9",
    background="#101419",
    surface="#161B22",
    panel="#1E2530",
    dark=True,
)
