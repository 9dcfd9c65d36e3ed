"""Snapshots of every view from the fixed cluster and a frozen clock, at 80x24 and 160x48."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from gryvia_cli.tui import make_app
from gryvia_cli.tui.widgets.logview import LogView
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]

SIZES = pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])


@SIZES
@pytest.mark.parametrize("view", ["jobs", "queue", "capacity", "cost", "nodes", "submit"])
def test_view(snap_compare: Any, fake_source: FakeSource, view: str, size: tuple[int, int]) -> None:
    """Each top-level view of the fixed cluster."""
    app = make_app(fake_source, clock=lambda: NOW, view=view)
    assert snap_compare(app, terminal_size=size, run_before=settle)


@SIZES
@pytest.mark.parametrize("tab", ["overview", "logs"])
def test_job_view(
    snap_compare: Any, fake_source: FakeSource, tab: str, size: tuple[int, int]
) -> None:
    """The Job view of a running distributed job: overview, and its followed log."""
    app = make_app(fake_source, clock=lambda: NOW)

    async def open_job(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        app.open_job("tenant-acme/llama-pretrain", tab)
        await wait_until(
            pilot, lambda: app.screen.__class__.__name__ == "JobScreen", what="job view"
        )
        screen = app.screen
        if tab == "logs":
            await wait_until(
                pilot,
                lambda: [v for v in screen.query(LogView) if len(v.lines) == 40],
                what="40 log lines",
            )
            log = screen.query_one(LogView)
            # The view scrolls to the end after a refresh: wait for that, not for a delay.
            await wait_until(
                pilot,
                lambda: log.scroll_y == log.max_scroll_y,
                what="log scrolled to its end",
            )

            def scrollbar_drawn() -> bool:  # the next layout gives the bar the new numbers
                bar = log.vertical_scrollbar
                return log.max_scroll_y == 0 or (
                    bar.window_virtual_size == log.virtual_size.height
                    and bar.window_size == log.scrollable_content_region.height
                    and round(bar.position) == round(log.scroll_y)
                )

            await wait_until(pilot, scrollbar_drawn, what="the log's scrollbar at its end")
        else:
            await wait_until(pilot, lambda: getattr(screen, "events", None), what="events")
            await wait_until(pilot, lambda: len(getattr(screen, "pods", {})) == 2, what="pods")
        for box in screen.query(Input):
            box.cursor_blink = False
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=open_job)


def test_help(snap_compare: Any, fake_source: FakeSource) -> None:
    """The `?` screen over the Jobs view."""
    app = make_app(fake_source, clock=lambda: NOW)

    async def open_help(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "HelpScreen", what="help")

    assert snap_compare(app, terminal_size=(80, 24), run_before=open_help)


@SIZES
@pytest.mark.parametrize("view", ["events", "tenants", "pods", "reservations"])
def test_registry_view(
    snap_compare: Any, fake_source: FakeSource, view: str, size: tuple[int, int]
) -> None:
    """The views built from the view registry: Events (newest first), Tenants, Pods,
    Reservations."""
    app = make_app(fake_source, clock=lambda: NOW, view=view)

    async def rows_shown(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await wait_until(pilot, lambda: getattr(app.screen, "items", None), what="rows")
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=rows_shown)


@SIZES
@pytest.mark.parametrize("view", ["budgets", "hooks", "priorities", "checkpoints", "gpusharing"])
def test_policy_view(
    snap_compare: Any, policy_source: FakeSource, view: str, size: tuple[int, int]
) -> None:
    """The registry views of the job-policy kinds and budgets, over the fixed cluster with
    hooks, priorities, checkpoint guards, GPU sharing policies and four budgets."""
    app = make_app(policy_source, clock=lambda: NOW, view=view)

    async def rows_shown(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await wait_until(pilot, lambda: getattr(app.screen, "items", None), what="rows")
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=rows_shown)


@SIZES
@pytest.mark.parametrize("row", ["acme", "globex"])
def test_describe_tenant(
    snap_compare: Any, fake_source: FakeSource, row: str, size: tuple[int, int]
) -> None:
    """`d` on a tenant: its details, members, quota with budget, GryviaBudget, fields."""
    app = make_app(fake_source, clock=lambda: NOW, view="tenants")

    async def describe(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await wait_until(pilot, lambda: getattr(app.screen, "items", None), what="tenants")
        app.screen.query_one(RowTable).move_to_key(row)
        await pilot.press("d")
        await wait_until(pilot, lambda: getattr(app.screen, "loads", 0), what="described")
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=describe)
