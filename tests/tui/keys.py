"""Keys for pilot tests as a terminal sends them: one event per key, and bursts posted at
once (the way a paste or `tmux send-keys` arrives) with a wait for the app to handle them."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.pilot import Pilot

KEY_NAMES = {
    " ": "space",
    "-": "minus",
    "'": "apostrophe",
    "[": "left_square_bracket",
    "]": "right_square_bracket",
    ".": "full_stop",
    ":": "colon",
    "/": "slash",
    "?": "question_mark",
    "(": "left_parenthesis",
    ")": "right_parenthesis",
    ";": "semicolon",
}


def key_event(key: str) -> events.Key:
    """The Key event a terminal sends for `key` (a character or a key name)."""
    if len(key) == 1:
        return events.Key(KEY_NAMES.get(key, key), key)
    return events.Key(key, None)


async def handled(pilot: Pilot[Any], rounds: int = 3) -> None:
    """Let the app route, bubble and act on what was posted (a few passes of every queue)."""
    for _ in range(rounds):
        await pilot.pause(0)
