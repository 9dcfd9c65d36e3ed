"""Pilot tests of the views of budgets, hooks, priorities, checkpoint guards, GPU sharing
policies and reservations over the fake cluster: `:` names, filter, describe (`d`), the events
of a row (`e`), events opening their object, and reservations following the watch."""

from __future__ import annotations

import copy
import re

import pytest

from gryvia_cli.tui import make_app
from gryvia_cli.tui.screens.registry import DescribeScreen, ListScreen
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.test_views import described, jump, list_screen
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]


async def test_each_policy_view_by_name_describes_its_row(policy_source: FakeSource) -> None:
    app = make_app(policy_source, clock=lambda: NOW)
    cases = [
        ("gjh", "hooks", "tenant-acme/notify-done", "Headers"),
        ("prio", "priorities", "urgent", "PriorityClass"),
        ("checkpoint", "checkpoints", "tenant-acme/guarded", "Job llama-pretrain"),
        ("gpu", "gpusharing", "h100-time-slicing", "Config key"),
        ("budget", "budgets", "acme-monthly", "Forecast"),
        ("rsv", "reservations", "acme-h100-weekly", "Nodes held"),
        ("idle", "idle", "tenant-acme/idle-gpus", "tenant-acme/llama-pretrain"),
        ("gst", "storage", "fast-nfs", "Last probe"),
    ]
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        for word, view, key, label in cases:
            await jump(pilot, word)
            screen = await wait_until(pilot, lambda v=view: list_screen(app, v), what=view)
            assert app.current_mode == view
            screen.query_one(RowTable).move_to_key(key)
            await pilot.press("d")
            text = await wait_until(pilot, lambda: described(app), what=f"{view}: {key}")
            assert re.search(rf"^  {re.escape(label)}\s+\S", text, re.M), text
            await pilot.press("escape")
            await wait_until(pilot, lambda: isinstance(app.screen, ListScreen), what="back")


async def test_hook_events_and_an_event_opens_its_hook(policy_source: FakeSource) -> None:
    app = make_app(policy_source, clock=lambda: NOW, view="hooks")
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        screen = await wait_until(pilot, lambda: list_screen(app, "hooks"), what="hooks")
        await pilot.press("slash", *"acme.example", "enter")
        table = screen.query_one(RowTable)
        await wait_until(
            pilot, lambda: table.order == ["tenant-acme/notify-done"], what="the filtered hook"
        )
        await pilot.press("e")
        events = await wait_until(
            pilot,
            lambda: isinstance(app.screen, ListScreen) and app.screen.pushed and app.screen,
            what="the hook's events",
        )
        await wait_until(pilot, lambda: events.items, what="its event")
        assert [e["reason"] for e in events.items.values()] == ["DeliveryFailed"]
        assert events.title_text == "Events of hook tenant-acme/notify-done"
        await pilot.press("d")  # the event's object: the hook
        text = await wait_until(pilot, lambda: described(app), what="the hook described")
        assert isinstance(app.screen, DescribeScreen)
        assert app.screen.ref.kind == "jobhooks" and "Retry" in text


async def test_events_view_opens_guards_priorities_sharing_and_budgets(
    policy_source: FakeSource,
) -> None:
    app = make_app(policy_source, clock=lambda: NOW, view="events")
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        screen = await wait_until(pilot, lambda: list_screen(app, "events"), what="events")
        table = screen.query_one(RowTable)
        for uid, kind, section in [
            ("uid-p2", "checkpointguards", "Checkpoint guard"),
            ("uid-p3", "priorities", "Priority"),
            ("uid-p4", "gpusharingpolicies", "GPU sharing"),
            ("uid-p5", "budgets", "Budget"),
        ]:
            table.move_to_key(uid)
            await pilot.press("enter")
            text = await wait_until(pilot, lambda: described(app), what=kind)
            assert app.screen.ref.kind == kind  # type: ignore[attr-defined]
            assert text.startswith(section + "\n")
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is screen, what="the events again")


async def test_reservations_follow_the_watch(policy_source: FakeSource) -> None:
    app = make_app(policy_source, clock=lambda: NOW, view="reservations")
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        screen = await wait_until(pilot, lambda: list_screen(app, "reservations"), what="rsv")
        table = screen.query_one(RowTable)
        assert table.cells("globex-demo")[-1] == ("-", "dim")
        assert "every" not in str(screen.query_one("#list-status").render())  # not polled
        held = copy.deepcopy(policy_source.objects["reservations"][1])
        held["status"] = {"state": "active", "allocatedGPUs": 4, "allocatedNodes": ["gpu-l40-0"]}
        policy_source.emit("reservations", "MODIFIED", held)
        await wait_until(
            pilot, lambda: table.cells("globex-demo")[-1] == ("gpu-l40-0", ""), what="its node"
        )
        assert table.cells("globex-demo")[2] == ("4/2", "")


async def test_a_list_whose_watch_fails_says_why(policy_source: FakeSource) -> None:
    policy_source.failing["reservations"] = "GryviaReservation is not installed (no CRD)"
    app = make_app(policy_source, clock=lambda: NOW, view="reservations")
    async with app.run_test(size=(120, 20)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RowTable)
        await wait_until(
            pilot,
            lambda: table.empty_text == "Cannot read: GryviaReservation is not installed (no CRD)",
            what="the watch's error",
        )
        assert app.connection == "live"  # an optional kind: no outage
