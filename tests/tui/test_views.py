"""Pilot tests of the registry views over the fake cluster: Events (cluster-wide and per
object), Tenants with quotas, budgets and members (`:tenants`, `:quotas`), Pods, describe
(`d`) and the previous container's log (`p`)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from gryvia_cli.tui import make_app
from gryvia_cli.tui.app import GryviaApp
from gryvia_cli.tui.screens.job import JobScreen
from gryvia_cli.tui.screens.registry import DescribeScreen, ListScreen, render_sections
from gryvia_cli.tui.widgets.logview import LogView
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.fixed import PREVIOUS_LOG_LINES
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]


def app_for(source: FakeSource) -> GryviaApp:
    """The console over `source` with the frozen clock."""
    return make_app(source, clock=lambda: NOW)


async def jump(pilot: Any, word: str) -> None:
    """Type `:word⏎`."""
    await pilot.press("colon", *word, "enter")


def list_screen(app: GryviaApp, spec: str) -> ListScreen | None:
    """The shown ListScreen of `spec` once it has rows, else None."""
    screen = app.screen
    if isinstance(screen, ListScreen) and screen.spec.name == spec and screen.items:
        return screen
    return None


def described(app: GryviaApp) -> str:
    """The plain text of the shown DescribeScreen once it has read its object, else ""."""
    screen = app.screen
    if isinstance(screen, DescribeScreen) and screen.raw is not None:
        return render_sections(screen.sections()).plain
    return ""


async def test_events_view_lists_every_event_newest_first(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await jump(pilot, "events")
        screen = await wait_until(pilot, lambda: list_screen(app, "events"), what="events")
        table = screen.query_one(RowTable)
        assert table.order == [f"uid-e{i}" for i in (5, 4, 2, 3, 1, 6)]
        assert screen.items["uid-e3"]["message"].startswith("BackoffLimitExceeded: [exit 1]")
        await pilot.press("slash", *"warning", "enter")
        await wait_until(pilot, lambda: len(table.order) == 3, what="the three warnings")
        await pilot.press("escape", "escape")
        await pilot.press("q")
    app2 = app_for(fake_source)
    async with app2.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+e")
        await wait_until(pilot, lambda: list_screen(app2, "events"), what="events by ctrl+e")


async def test_events_of_a_job_from_the_jobs_view_and_the_job_view(
    fake_source: FakeSource,
) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        app.screen.query_one(RowTable).move_to_key("tenant-acme/llama-pretrain")
        await pilot.press("e")
        screen = await wait_until(pilot, lambda: list_screen(app, "events"), what="job events")
        assert screen.pushed and "llama-pretrain" in screen.title_text
        assert [e["reason"] for e in screen.items.values()] == ["BackOff", "Scheduled"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "JobsScreen")
        app.open_job("tenant-acme/llama-pretrain", "overview")
        await wait_until(pilot, lambda: isinstance(app.screen, JobScreen), what="job view")
        await pilot.press("e")
        await wait_until(pilot, lambda: list_screen(app, "events"), what="events from job")


@pytest.mark.parametrize("word", ["tenants", "quotas"])
async def test_tenants_view_shows_quotas_budgets_and_members(
    fake_source: FakeSource, word: str
) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await jump(pilot, word)
        screen = await wait_until(pilot, lambda: list_screen(app, "tenants"), what="tenants")
        table = screen.query_one(RowTable)
        assert table.order == ["acme", "globex"]
        acme = dict(zip([c.key for c in screen.spec.columns], table.cells("acme"), strict=True))
        assert acme["members"][0] == "2" and acme["quotas"][0] == "acme"
        assert acme["gpus"][0] == "0/16" and acme["budget"][0] == "0/12000 (0%)"
        globex = dict(zip([c.key for c in screen.spec.columns], table.cells("globex"), strict=True))
        assert globex["budget"][0] == "0/1500 (0%)" and globex["quotas"][0] == "-"
        await pilot.press("d")
        text = await wait_until(pilot, lambda: described(app), what="acme described")
        assert re.search(r"alice@acme\.example\s+admin", text)
        assert "Quota acme" in text and "Members" in text and "Conditions" in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: list_screen(app, "tenants"), what="back to tenants")
        await pilot.press("down", "enter")
        text = await wait_until(pilot, lambda: described(app), what="globex described")
        assert "Budget globex-monthly" in text and "no GryviaQuota covers this tenant" in text


async def test_pods_view_describes_a_pod_with_its_events(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await jump(pilot, "pods")
        screen = await wait_until(pilot, lambda: list_screen(app, "pods"), what="pods")
        assert len(screen.items) == 5
        screen.query_one(RowTable).move_to_key("tenant-acme/llama-pretrain-1")
        await pilot.press("d")
        text = await wait_until(pilot, lambda: described(app), what="pod described")
        assert "Namespace" in text and "tenant-acme" in text
        assert re.search(r"containerStatuses\[0\]\.restartCount\s+1\n", text)
        assert "BackOff" in text  # the fixed event about llama-pretrain-1
        await pilot.press("e")
        await wait_until(pilot, lambda: list_screen(app, "events"), what="pod events")


async def test_nodes_describe_and_events(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "NodesScreen")
        await wait_until(pilot, lambda: app.screen.query_one(RowTable).order, what="nodes")
        await pilot.press("d")
        text = await wait_until(pilot, lambda: described(app), what="node described")
        assert "GryviaGpuNode" in text
        await pilot.press("e")
        screen = await wait_until(
            pilot,
            lambda: isinstance(app.screen, ListScreen) and app.screen.polls and app.screen,
            what="node events",
        )
        assert screen.title_text.startswith("Events of GPU node ")


async def test_previous_log_of_a_restarted_pod(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        app.open_job("tenant-acme/llama-pretrain", "logs")
        await wait_until(pilot, lambda: isinstance(app.screen, JobScreen), what="job view")
        screen: Any = app.screen
        log = await wait_until(pilot, lambda: screen.query_one(LogView), what="the log view")
        await wait_until(pilot, lambda: len(log.lines) == 40, what="40 lines")
        await pilot.press("p")  # pod 0 never restarted: nothing is asked, the view says why
        await wait_until(pilot, lambda: screen.log_state == "ended", what="no previous log")
        assert screen.log_previous and screen.log_note == "no previous container"
        assert "RESTARTS 0" in log.empty_text
        await pilot.press("right_square_bracket")
        await wait_until(
            pilot,
            lambda: screen.log_pod == "llama-pretrain-1" and len(log.lines) == 6,
            what="pod 1's previous log",
        )
        assert log.lines[-1][1] == PREVIOUS_LOG_LINES[-1].split(" ", 1)[1]
        await pilot.press("p", "left_square_bracket")
        await wait_until(
            pilot,
            lambda: screen.log_pod == "llama-pretrain-0" and len(log.lines) == 40,
            what="the current log again",
        )
        assert not screen.log_previous


async def test_reservations_view_and_describe(fake_source: FakeSource) -> None:
    app = app_for(fake_source)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await jump(pilot, "rsv")
        screen = await wait_until(pilot, lambda: list_screen(app, "reservations"), what="rsv")
        table = screen.query_one(RowTable)
        assert table.order == ["acme-h100-weekly", "globex-demo"]
        assert table.cells("acme-h100-weekly")[2] == ("8/8", "")
        await pilot.press("slash", *"l40", "enter")
        await wait_until(pilot, lambda: table.order == ["globex-demo"], what="the L40 one")
        await pilot.press("d")
        text = await wait_until(pilot, lambda: described(app), what="reservation described")
        assert "GryviaReservation" in text and re.search(r"resources\.gpuType\s+L40", text)
