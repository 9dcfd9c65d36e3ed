"""The console's faults of issue 38 (failure 12), each reproduced over the fixed cluster."""

from __future__ import annotations

import pytest

from gryvia_cli.tui import make_app
from gryvia_cli.tui.app import GryviaApp
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]


def screen_text(app: GryviaApp) -> str:
    """What the terminal shows now, as text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_a_terminal_too_small_says_so_and_the_view_comes_back(
    fake_source: FakeSource,
) -> None:
    app = make_app(fake_source, clock=lambda: NOW)
    async with app.run_test(size=(40, 10)) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: "too small" in screen_text(app), what="the notice")
        shown = " ".join(screen_text(app).split())
        assert "40x10" in shown and "60x12" in shown
        await pilot.resize_terminal(120, 30)
        await wait_until(pilot, lambda: "too small" not in screen_text(app), what="no notice")
        assert "llama-pretrain" in screen_text(app)
        assert app.screen.focused is app.screen.query_one(RowTable)
        await pilot.resize_terminal(59, 30)
        await wait_until(pilot, lambda: "too small" in screen_text(app), what="too narrow")
        await pilot.resize_terminal(80, 11)
        await wait_until(pilot, lambda: "80x11" in screen_text(app), what="too short")

