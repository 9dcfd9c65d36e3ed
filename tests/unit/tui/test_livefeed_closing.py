"""The console's feed tick after its last screen is gone (the console closing while a watch
still delivers): the change is applied, nobody is told, nothing raises (it ended
test_sandbox_pilot's console with ScreenStackError once)."""

from __future__ import annotations

from typing import Any

from textual.app import ScreenStackError

from gryvia_cli.tui.livefeed import LiveFeed


class _Feed:
    pending = True

    def drain(self) -> list[str]:
        return ["event"]


class _Store:
    def __init__(self) -> None:
        self.applied: list[list[str]] = []

    def apply(self, events: list[str]) -> list[str]:
        self.applied.append(events)
        return ["changed"]


class _Closing:
    def __init__(self) -> None:
        self.feed = _Feed()
        self.store = _Store()

    @property
    def screen(self) -> Any:
        raise ScreenStackError("No screens on stack")


def test_a_tick_while_closing_applies_the_change_and_raises_nothing() -> None:
    closing = _Closing()
    LiveFeed.flush(closing)  # type: ignore[arg-type]
    assert closing.store.applied == [["event"]]
