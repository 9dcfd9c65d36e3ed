"""User data is never markup in the views the registry builds (Events, Pods, describe) and in
the Submit view's preview (issue 22, point 2), over the hostile fake cluster of test_markup."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input

from gryvia_cli.tui import make_app
from tests.tui.builders import NOW, M
from tests.tui.fixed import _event
from tests.tui.test_markup import (
    COMMAND_SHOWN,
    ESCAPES,
    JOB,
    MARKUP,
    NODE,
    assert_literal,
    hostile_source,
    screen_text,
)
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]


async def _jump(pilot: Any, word: str) -> None:
    await pilot.press("colon", *word, "enter")


async def test_events_pods_and_describe_show_user_text_literally() -> None:
    source = hostile_source()
    message = MARKUP[1] + " " + MARKUP[3] + " " + ESCAPES[0]
    source.objects["events"].append(
        _event("e-odd", "research", "GryviaAIJob", JOB, "[/]Odd", message, M, type="Warning")
    )
    app = make_app(source, clock=lambda: NOW)
    async with app.run_test(size=(250, 60)) as pilot:
        await settle(pilot)
        await _jump(pilot, "events")
        await wait_until(pilot, lambda: "[/]Odd" in screen_text(app), what="the events view")
        text = screen_text(app)
        assert_literal(text, "[/]Odd")
        assert_literal(text, message, room=40)

        await _jump(pilot, "pods")
        await wait_until(pilot, lambda: f"{JOB}-0" in screen_text(app), what="the pods view")
        text = screen_text(app)
        assert_literal(text, NODE)  # the pod's node

        assert app.is_running and app.return_code is None


async def test_the_submit_preview_shows_a_command_with_brackets_whole() -> None:
    source = hostile_source()
    app = make_app(source, clock=lambda: NOW, view="submit")
    async with app.run_test(size=(250, 60)) as pilot:
        await settle(pilot)
        form: Any = app.screen
        form.query_one("#f-command", Input).value = COMMAND_SHOWN
        form.query_one("#f-image", Input).value = "[bold]img[/bold]:1"
        await wait_until(
            pilot, lambda: "range(30)]" in screen_text(app), what="the preview of the command"
        )
        text = screen_text(app)
        assert "[print(i) for i in range(30)]" in text
        assert_literal(text, "[bold]img[/bold]:1")
        assert app.is_running and app.return_code is None
