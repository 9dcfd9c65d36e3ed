"""The tmux trial of issue 22 replayed, `ctrl+r` and the `:` line's words.

The trial: a shell command with digits, spaces, `o` and `c` typed into the submit form, Tab
past the last field, more typing. It had switched views, marked jobs, sorted and pressed
cancel; now nothing is cancelled, no view switches and the text lands in the fields.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input, Select

from gryvia_cli.tui import make_app
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.keys import KEY_NAMES, handled, key_event
from tests.tui.test_connection import recorded
from tests.tui.waits import wait_loaded, wait_until

pytestmark = [pytest.mark.tui]

TRIAL_COMMAND = "python3 -c 'import time; [print(i) for i in range(30)]'"
TRIAL_AGAIN = "sleep 3 1 oc"


@pytest.mark.parametrize("delivery", ["burst", "key by key"])
async def test_typing_through_the_submit_form_cancels_nothing(
    fake_source: FakeSource, delivery: str
) -> None:
    """The trial: a command with digits, spaces, `o` and `c` into the Command field, tab past
    the last field (Storage), type again. As `tmux send-keys` sends it (one burst) and as a
    person types it (key by key): no write, no view switch, no dialog; the text in fields,
    the focus visibly on the field it wrapped to (the form's first, Name)."""
    app = make_app(fake_source, clock=lambda: NOW, view="submit")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        screen = app.screen
        screen.set_focus(screen.query_one("#f-command"))
        keys = [*TRIAL_COMMAND, "tab", "tab", *TRIAL_AGAIN]
        if delivery == "burst":
            for key in keys:
                app.post_message(key_event(key))
            await handled(pilot, 10)
        else:
            await pilot.press(*(KEY_NAMES.get(k, k) for k in keys))
        await wait_until(
            pilot, lambda: screen.query_one("#f-name", Input).value == TRIAL_AGAIN, what="typing"
        )
        assert screen.query_one("#f-command", Input).value == TRIAL_COMMAND
        assert screen.query_one("#f-storage", Input).value == ""
        assert app.screen is screen and app.current_mode == "submit"
        assert fake_source.writes == []
        name = screen.query_one("#f-name", Input)
        assert app.focused is name and name.has_pseudo_class("focus")
        assert name.styles.background != screen.query_one("#f-image", Input).styles.background
        await pilot.press("escape", "1")  # out of the form, the view keys work again
        await wait_until(pilot, lambda: app.current_mode == "jobs", what="the jobs view")


async def test_a_form_select_opens_moves_and_picks_by_keyboard(fake_source: FakeSource) -> None:
    """Enter opens the Type list, down moves in it, enter picks, escape closes: keys pressed
    in the open list once went round between the list and its select for ever (the console
    hung at full CPU)."""
    app = make_app(fake_source, clock=lambda: NOW, view="submit")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        screen = app.screen
        select = screen.query_one("#f-type", Select)
        before = select.value
        screen.set_focus(select)
        await pilot.press("enter")
        await wait_until(pilot, lambda: select.expanded, what="the list open")
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: not select.expanded, what="the list closed")
        assert select.value != before
        assert app.focused is select
        picked = select.value
        await pilot.press("enter")
        await wait_until(pilot, lambda: select.expanded, what="the list open again")
        await pilot.press(*"c13 o", "down", "escape")  # letters in the list run nothing
        await wait_until(pilot, lambda: not select.expanded, what="the list closed by escape")
        assert select.value == picked
        assert app.current_mode == "submit" and fake_source.writes == []


@pytest.mark.parametrize(
    ("keys", "typed"),
    [
        (["a", "b", "c", "backspace", "x"], "abx"),
        (["a", "b", "left", "C"], "aCb"),
        (["a", "b", "home", "Z", "end", "Y"], "ZabY"),
    ],
)
@pytest.mark.parametrize("field", ["#f-name", "#jobs-filter"])
async def test_editing_keys_of_a_burst_keep_their_order(
    fake_source: FakeSource, field: str, keys: list[str], typed: str
) -> None:
    """Backspace, arrows, home and end in one burst with letters (a paste, `tmux send-keys`,
    a fast typist) act where they were typed: they once acted after the letters behind them,
    so `abc`, backspace, `x` left `abc`."""
    app = make_app(fake_source, clock=lambda: NOW, view="submit" if field == "#f-name" else "jobs")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        if field == "#jobs-filter":
            await pilot.press("slash")
        box = app.screen.query_one(field, Input)
        app.screen.set_focus(box)
        await handled(pilot)
        for key in keys:
            app.post_message(key_event(key))
        await handled(pilot, 10)
        assert box.value == typed


async def test_ctrl_r_clears_the_form(fake_source: FakeSource) -> None:
    app = make_app(fake_source, clock=lambda: NOW, view="submit")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        screen = app.screen
        await pilot.press(*"run-1", "tab")  # name, then the Type select
        screen.query_one("#f-type", Select).value = "inference"
        screen.query_one("#f-image", Input).value = "img:1"
        screen.query_one("#f-gpus", Input).value = "4"
        screen.set_focus(screen.query_one("#f-command"))
        await pilot.press("ctrl+r")
        values = {i.id: i.value for i in screen.query(Input) if i.id and i.id[:2] == "f-"}
        assert values == {
            "f-name": "",
            "f-namespace": "default",
            "f-image": "",
            "f-gpus": "1",
            "f-nodes": "1",
            "f-command": "",
            "f-storage": "",
        }
        assert screen.query_one("#f-type", Select).value == "training"
        assert app.focused is screen.query_one("#f-name")


@pytest.mark.parametrize(
    ("line", "check"),
    [
        ("ns tenant-acme", lambda app: app.target.namespace == "tenant-acme"),
        ("ns all", lambda app: app.target.namespace is None),
        ("quotas", lambda app: app.current_mode == "tenants"),
        ("tenants", lambda app: app.current_mode == "tenants"),
        ("ctx other-cluster", lambda app: app.target.context == "other-cluster"),
    ],
)
async def test_command_line_words(fake_source: FakeSource, line: str, check: Any) -> None:
    """`:ns NAME`, `:ctx NAME` switch at once; `:quotas`, `:tenants` open the view with the
    tenants' quotas, budgets and members (Tenants)."""
    app = make_app(fake_source.retarget(context=None, namespace="research"), clock=lambda: NOW)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("colon", *(KEY_NAMES.get(k, k) for k in line), "enter")
        await wait_until(pilot, lambda: check(app), what=f":{line}")


@pytest.mark.parametrize(("namespace", "warned"), [("nope-ns", True), ("tenant-acme", False)])
async def test_switching_to_a_namespace_that_does_not_exist_warns(
    fake_source: FakeSource, namespace: str, warned: bool
) -> None:
    app = make_app(fake_source, clock=lambda: NOW)
    told = recorded(app)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("colon", *(KEY_NAMES.get(k, k) for k in f"ns {namespace}"), "enter")
        await wait_until(pilot, lambda: app.target.namespace == namespace, what="the switch")
        await wait_until(
            pilot,
            lambda: all(w.is_finished for w in app.workers if w.group == "retarget"),
            what="the switch's worker",
        )
        missing = f"namespace {namespace} does not exist: its views stay empty until it is created"
        assert any(message == missing for _, _, message in told) is warned
