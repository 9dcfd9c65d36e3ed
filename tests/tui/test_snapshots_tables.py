"""Snapshots of a view sorted by a column (header arrow, status) and of the drill-downs
(pods on a node, jobs behind a cost figure), at 80x24 and 160x48."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from gryvia_cli.tui import make_app
from gryvia_cli.tui.screens.drill import CostJobsScreen, NodePodsScreen
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]

SIZES = pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])


@SIZES
def test_jobs_sorted_by_cost(
    snap_compare: Any, fake_source: FakeSource, size: tuple[int, int]
) -> None:
    """Jobs sorted by COST, most expensive first (shift+c twice)."""
    app = make_app(fake_source, clock=lambda: NOW)

    async def sort(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("C", "C")
        table = app.screen.query_one(RowTable)
        await wait_until(pilot, lambda: table.sort_reverse, what="cost, reversed")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=sort)


@SIZES
def test_pods_on_a_node(snap_compare: Any, fake_source: FakeSource, size: tuple[int, int]) -> None:
    """Nodes -> enter on gpu-h100-0: its pod, with the job it belongs to."""
    app = make_app(fake_source, clock=lambda: NOW, view="nodes")

    async def drill(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        app.screen.query_one(RowTable).move_to_key("gpu-h100-0")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, NodePodsScreen), what="pods")
        await wait_until(pilot, lambda: app.screen.query_one(RowTable).order, what="pod rows")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=drill)


@SIZES
def test_jobs_behind_a_cost_figure(
    snap_compare: Any, fake_source: FakeSource, size: tuple[int, int]
) -> None:
    """Cost -> enter on acme: the jobs whose usage makes up acme's spend."""
    app = make_app(fake_source, clock=lambda: NOW, view="cost")

    async def drill(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        tenants = app.screen.query_one("#cost-tenants", RowTable)
        await wait_until(pilot, lambda: "acme" in tenants.order, what="acme")
        tenants.move_to_key("acme")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CostJobsScreen), what="jobs")
        await wait_until(pilot, lambda: app.screen.query_one(RowTable).order, what="job rows")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=drill)
