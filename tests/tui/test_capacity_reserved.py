"""The console's Capacity view counts GPUs of reserved nodes (label gryvia.io/reserved-for)
apart from free ones: "N reserved" on the type's bar and ◇ cells in the node grid."""

from __future__ import annotations

import copy

import pytest

from gryvia_cli.tui import make_app
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.fixed import fixed_cluster
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]


def screen_text(app: object) -> str:
    """What the terminal shows now, line by line."""
    compositor = app.screen._compositor  # type: ignore[attr-defined]
    return "\n".join(strip.text for strip in compositor.render_strips())


async def test_reserved_gpus_are_shown_apart_from_free() -> None:
    source = FakeSource(fixed_cluster())
    node = next(n for n in source.objects["nodes"] if n["metadata"]["name"] == "gpu-a100-80g-1")
    reserved = copy.deepcopy(node)
    reserved["metadata"].setdefault("labels", {})["gryvia.io/reserved-for"] = "night"
    source.emit("nodes", "MODIFIED", reserved)
    app = make_app(source, clock=lambda: NOW)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await wait_until(pilot, lambda: app.current_mode == "capacity", what="capacity")

        def shown() -> str | None:
            text = screen_text(app)
            return text if "4 reserved" in text else None

        text = await wait_until(pilot, shown, what="4 reserved GPUs on the A100-80G bar")
        assert "◇◇◇◇" in text and "◇ reserved" in text
