"""User data is never markup in the views the registry builds (Events, Pods, Budgets, Hooks,
Priorities, Checkpoint guards, GPU sharing, Reservations and their describe views) and in the
Submit view's preview (issue 22, point 2), over the hostile fake cluster of test_markup."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input

from gryvia_cli.core.plaintext import visible
from gryvia_cli.tui import make_app
from tests.tui.builders import NOW, H, M, ts
from tests.tui.fake import FakeSource
from tests.tui.fixed import _event
from tests.tui.fixed_policies import obj as obj_of
from tests.tui.fixed_policies import ready
from tests.tui.test_markup import (
    COMMAND_SHOWN,
    ESCAPES,
    JOB,
    MARKUP,
    NAMED,
    NODE,
    NS,
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


def hostile_policies() -> FakeSource:
    """The hostile cluster plus a hook, priority, guard, sharing policy, budget and
    reservation whose names, URLs, selectors, nodes and messages are markup and escapes."""
    source = hostile_source()
    odd = MARKUP[1] + " " + MARKUP[3] + " " + ESCAPES[0]
    failed = [ready("False", "[/]Bad", odd)]
    source.objects["jobhooks"] = [
        obj_of(
            "GryviaJobHook",
            "[bold]hook[/bold]",
            {"events": ["Failed"], "webhook": {"url": "https://h.example/[@click=app.quit]z[/]"}},
            {"conditions": failed, "lastError": MARKUP[2] + ESCAPES[1], "failures": 2},
            namespace=NS,
        )
    ]
    source.objects["priorities"] = [
        obj_of("GryviaPriority", "[@click=app.quit]p[/]", {"value": 7, "description": odd}),
    ]
    source.objects["checkpointguards"] = [
        obj_of(
            "GryviaCheckpointGuard",
            "[/]guard",
            {
                "jobSelector": {"matchLabels": {"team": MARKUP[2]}},
                "checkpointPolicy": {"intervalSeconds": 60},
            },
            {
                "lastRestore": {
                    "job": NAMED,
                    "pod": NAMED + "-0",
                    "step": 3,
                    "reason": "PodEvicted",
                    "time": ts(H),
                }
            },
            namespace=NS,
        )
    ]
    source.objects["gpusharingpolicies"] = [
        obj_of(
            "GryviaGPUSharingPolicy",
            "[bold]share[/bold]",
            {"strategy": "time-slicing", "nodeSelector": {}, "timeSlicing": {"replicas": 2}},
            {"nodes": [NODE], "conditions": failed},
        )
    ]
    source.objects["budgets"] = [
        obj_of(
            "GryviaBudget",
            "[bold]budget[/bold]",
            {"scope": {"type": "team", "name": MARKUP[3]}, "period": {"type": "monthly"}},
            {"state": "warning", "message": odd},
        )
    ]
    source.objects["reservations"][0]["status"]["allocatedNodes"] = [NODE]
    return source


async def test_policy_views_and_their_describe_show_user_text_literally() -> None:
    source = hostile_policies()
    app = make_app(source, clock=lambda: NOW)
    odd = MARKUP[1] + " " + MARKUP[3] + " " + ESCAPES[0]
    shown = {
        "hooks": ["[bold]hook[/bold]", "https://h.example/[@click=app.quit]z[/]", "[/]Bad"],
        "priorities": ["[@click=app.quit]p[/]", odd],
        "checkpoints": ["[/]guard", "team=" + MARKUP[2], NAMED + " @ step 3"],
        "gpusharing": ["[bold]share[/bold]", NODE, "[/]Bad"],
        "budgets": ["[bold]budget[/bold]", "team " + MARKUP[3]],
        "reservations": [NODE],
    }
    details = {
        "hooks": ["[/]Bad: " + odd, MARKUP[2] + ESCAPES[1]],
        "priorities": [odd],
        "checkpoints": [f"{NAMED}-0 from step 3"],
        "gpusharing": [f"1: {NODE}", "[/]Bad: " + odd],
        "budgets": [odd],
        "reservations": [NODE],
    }
    async with app.run_test(size=(250, 60)) as pilot:
        await settle(pilot)
        for view, values in shown.items():
            await _jump(pilot, view)
            await wait_until(
                pilot,
                lambda v=visible(values[0])[:12]: v in screen_text(app),  # type: ignore[misc]
                what=f"the {view} view",
            )
            text = screen_text(app)
            for value in values:
                assert_literal(text, value, room=13)  # the narrowest column cuts the rest
            await pilot.press("d")
            await wait_until(
                pilot,
                lambda v=visible(details[view][0]): v in screen_text(app),  # type: ignore[misc]
                what=f"{view}: the describe view",
            )
            text = screen_text(app)
            for value in details[view]:
                assert_literal(text, value)
            await pilot.press("escape")
        assert app.is_running and app.return_code is None
