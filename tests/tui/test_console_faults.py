"""The console's faults of issue 38 (failure 12), each reproduced over the fixed cluster: the
notice of a terminal too small, the notice when the job under the cursor goes away, the work
`?` and esc do at 5,000 rows."""

from __future__ import annotations

from typing import Any

import pytest

from gryvia_cli.tui import make_app
from gryvia_cli.tui.app import GryviaApp
from gryvia_cli.tui.screens import help as help_module
from gryvia_cli.tui.screens import tables as tables_module
from gryvia_cli.tui.screens.help import VIEW_SCOPES, HelpScreen
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.test_connection import recorded
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


async def test_the_job_under_the_cursor_going_away_is_told(fake_source: FakeSource) -> None:
    """Deleted by someone else (a watch DELETED): a warning names it and where the cursor went;
    a job deleted elsewhere in the list, a row the filter hides and a delete made from this
    console (which says "Done" already) tell nothing more."""
    app = make_app(fake_source, clock=lambda: NOW)
    told = recorded(app)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RowTable)
        await pilot.press("down")
        key, above, last = table.cursor_key, table.order[0], table.order[-1]
        assert key is not None
        fake_source.emit("jobs", "DELETED", fake_source.find("jobs", *key.split("/")))
        await wait_until(pilot, lambda: key not in table.order, what="the row gone")
        await wait_until(pilot, lambda: told, what="the notice")
        assert told == [
            ("warning", "Job gone", f"{key} was deleted; the cursor is on {table.cursor_key}")
        ]
        told.clear()
        fake_source.emit("jobs", "DELETED", fake_source.find("jobs", *last.split("/")))
        await wait_until(pilot, lambda: last not in table.order, what="another row gone")
        await pilot.press("slash", *"phase:failed", "enter")
        await wait_until(pilot, lambda: len(table.order) == 1, what="the filter")
        deleted = table.order[0]
        await pilot.press("ctrl+d", "y")
        await wait_until(pilot, lambda: not table.order, what="deleted from here")
        await wait_until(pilot, lambda: told, what="the write's outcome")
        await pilot.pause(0.3)
        assert told == [("information", "Done", f"deleted {deleted.split('/')[1]}")]
        assert above in app.store.jobs


async def test_help_builds_the_key_tables_of_the_view_shown_only(
    fake_source: FakeSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`?` over the Jobs view builds (and lays out) the key tables of the Jobs view and of the
    app, not those of every scope; another view's keys are built when opened there."""
    built: list[int] = []

    class Counted(help_module.Table):  # type: ignore[name-defined,misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            built.append(1)

    monkeypatch.setattr(help_module, "Table", Counted)
    app = make_app(fake_source, clock=lambda: NOW)
    async with app.run_test(size=(120, 120)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        await pilot.pause(0.1)
        assert len(built) == len(VIEW_SCOPES["jobs"]) + 1  # jobs, lists, table; app
        shown = screen_text(app)
        assert "Jobs view" in shown and "Everywhere" in shown and "shift+c" in shown
        assert "▸ Queue view" in shown and "Sort WAITED" not in shown
        folded = app.screen.query_one("#help-queue")
        folded.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Sort WAITED" in screen_text(app), what="queue keys")
        assert len(built) == len(VIEW_SCOPES["jobs"]) + 2
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Sort WAITED" not in screen_text(app), what="folded")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Sort WAITED" in screen_text(app), what="unfolded")
        assert len(built) == len(VIEW_SCOPES["jobs"]) + 2  # built once


async def test_leaving_the_filter_with_esc_sorts_no_row_again(
    fake_source: FakeSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Esc (from the table, or inside the filter line) shows every job again in the order
    sorted before the filter, without sorting them again; a new sort, or a changed job,
    still sorts."""
    sorted_rows: list[int] = []
    real = tables_module.ordered

    def counted(keys: Any, value: Any, state: Any) -> list[str]:
        sorted_rows.append(len(keys))
        return real(keys, value, state)

    monkeypatch.setattr(tables_module, "ordered", counted)
    app = make_app(fake_source, clock=lambda: NOW)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RowTable)
        before = list(table.order)
        await pilot.press("slash", *"phase:running", "enter")
        await wait_until(pilot, lambda: len(table.order) == 4, what="4 running jobs")
        sorted_rows.clear()
        await pilot.press("escape")
        await wait_until(pilot, lambda: len(table.order) == 13, what="filter cleared")
        await pilot.pause(0.2)
        assert table.order == before and sorted_rows == []
        await pilot.press("slash", *"crashy")
        await wait_until(pilot, lambda: len(table.order) == 1, what="1 job")
        await pilot.press("escape")
        await wait_until(pilot, lambda: len(table.order) == 13, what="filter closed")
        await pilot.pause(0.2)
        assert table.order == before and sorted_rows == []
        await pilot.press("O")
        assert table.order == before[::-1] and sorted_rows == [13]
        job = fake_source.find("jobs", *before[0].split("/"))
        job["metadata"]["creationTimestamp"] = "2000-01-01T00:00:00Z"
        fake_source.emit("jobs", "MODIFIED", job)
        await wait_until(pilot, lambda: table.order[0] == before[0], what="re-sorted, oldest first")
        assert len(sorted_rows) == 2
