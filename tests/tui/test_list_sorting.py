"""Pilot tests over the fake cluster: the registry views (Events, Tenants, ...) sort by any
column (their own `shift+<letter>` keys, `ctrl+o`, `o`, `O`) with the header arrow, start in
their usual order, and hide columns with `ctrl+t`, saved in console.yaml under the view's
table name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from textual.widgets import Static

from gryvia_cli.tui.app import GryviaApp
from gryvia_cli.tui.bindings import LIST_SORTS, LISTS, TABLE, sort_letters
from gryvia_cli.tui.keytables import APP, LIST
from gryvia_cli.tui.registry import REGISTRY
from gryvia_cli.tui.sorting import text_value
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.tui.fake import FakeSource
from tests.tui.test_tables import app_for, header, pick
from tests.tui.test_views import jump, list_screen
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]

NEWEST_FIRST = [f"uid-e{i}" for i in (5, 4, 2, 3, 1, 6)]
"""The fake cluster's events, newest first (e6 has no time: last)."""


def status(screen: Any) -> str:
    """The list view's status line as text."""
    return str(screen.query_one("#list-status", Static).render())


def column(screen: Any, key: str) -> list[str]:
    """The text of column `key` of every row, in the table's order."""
    table = screen.query_one(RowTable)
    index = [c.key for c in screen.spec.columns].index(key)
    return [table.cells(k)[index][0] for k in table.order]


def test_every_registry_view_has_a_sort_key_per_column_that_clashes_with_no_other_key() -> None:
    single = {n for k in (*APP, *TABLE, *LIST, *LISTS) for n in k.key.split(",") if len(n) == 1}
    assert {"d", "e", "o", "O", "G"} <= single
    for name, spec in REGISTRY.items():
        keys = [k.key for k in LIST_SORTS[name]]
        assert len(keys) == len(spec.columns) == len(set(keys)), name
        assert not set(keys) & single, name
    assert [k.key for k in LIST_SORTS["events"]] == ["S", "T", "R", "B", "N", "M"]
    assert sort_letters([("a", "A"), ("ab", "AB")], {"A"}) == (("B", "ab", "AB"),)


def test_cell_text_sorts_numbers_by_value_before_words() -> None:
    texts = ["10/16", "2/16", "-", "$1,200 / $5,000", "abc"]
    assert sorted(texts, key=lambda t: (text_value(t) is None, text_value(t) or (0, 0))) == [
        "2/16",
        "10/16",
        "$1,200 / $5,000",
        "abc",
        "-",
    ]


async def test_events_sort_by_a_column_reverse_and_back_to_newest_first(
    fake_source: FakeSource,
) -> None:
    app: GryviaApp = app_for(fake_source)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        await jump(pilot, "events")
        screen = await wait_until(pilot, lambda: list_screen(app, "events"), what="events")
        table = screen.query_one(RowTable)
        assert table.order == NEWEST_FIRST and "LAST SEEN↑" in header(table)
        assert "newest first" in status(screen)
        await pilot.press("R")
        reasons = column(screen, "reason")
        assert reasons == sorted(reasons, key=str.lower) and "REASON↑" in header(table)
        assert "sorted by reason↑" in status(screen)
        await pilot.press("R")  # again: reversed
        assert column(screen, "reason") == sorted(reasons, key=str.lower, reverse=True)
        assert "REASON↓" in header(table)
        await pilot.press("ctrl+o")
        await pick(pilot, app, "seen")
        assert table.order == NEWEST_FIRST and "newest first" in status(screen)
        await pilot.press("O")  # reversed: oldest first, the event without a time first
        assert table.order == NEWEST_FIRST[::-1] and "LAST SEEN↓" in header(table)
        await pilot.press("o")  # the next column, direction kept
        assert "TYPE↓" in header(table)


async def test_tenants_sort_by_a_column_and_reverse(fake_source: FakeSource) -> None:
    app: GryviaApp = app_for(fake_source)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await jump(pilot, "tenants")
        screen = await wait_until(pilot, lambda: list_screen(app, "tenants"), what="tenants")
        table = screen.query_one(RowTable)
        assert table.order == ["acme", "globex"] and "TENANT↑" in header(table)
        await pilot.press("B")  # budget: both spent 0 (the leading number): ties keep row order
        assert table.order == ["acme", "globex"] and "BUDGET USD↑" in header(table)
        await pilot.press("M")  # members: globex has fewer than acme's two
        assert table.order == ["globex", "acme"] and "MEMBE…↑" in header(table)
        await pilot.press("M")
        assert table.order == ["acme", "globex"] and "MEMBE…↓" in header(table)
        await pilot.press("N")
        await pilot.press("N")
        assert table.order == ["globex", "acme"] and "TENANT↓" in header(table)


async def test_list_column_toggles_are_saved_under_the_view_name(
    fake_source: FakeSource, tmp_path: Path
) -> None:
    config = tmp_path / "gryvia" / "console.yaml"
    app = app_for(fake_source, config)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        await jump(pilot, "events")
        screen = await wait_until(pilot, lambda: list_screen(app, "events"), what="events")
        table = screen.query_one(RowTable)
        await pilot.press("ctrl+t")
        await pick(pilot, app, "namespace")
        assert "namespace" not in table.visible_columns() and "NAMESPACE" not in header(table)
        await pilot.press("N")  # sorting by a hidden column is refused
        assert screen.sorts["list-table"].column == "seen"
    assert yaml.safe_load(config.read_text()) == {"columns": {"events": {"hidden": ["namespace"]}}}
    again = app_for(fake_source, config)
    async with again.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        await jump(pilot, "events")
        screen = await wait_until(pilot, lambda: list_screen(again, "events"), what="events")
        assert "namespace" not in screen.query_one(RowTable).visible_columns()
        await jump(pilot, "pods")
        pods = await wait_until(pilot, lambda: list_screen(again, "pods"), what="pods")
        await pilot.press("ctrl+t")
        await pick(pilot, again, "node")
        assert "node" not in pods.query_one(RowTable).visible_columns()
    saved = yaml.safe_load(config.read_text())["columns"]
    assert saved == {"events": {"hidden": ["namespace"]}, "live-pods": {"hidden": ["node"]}}


async def test_priorities_start_highest_first_with_a_descending_arrow(
    policy_source: FakeSource,
) -> None:
    """The header's arrow says the order (`↑` ascending): highest first is `VALUE↓`, and
    `V` turns it to lowest first, `VALUE↑`."""
    app: GryviaApp = app_for(policy_source)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await jump(pilot, "priorities")
        screen = await wait_until(pilot, lambda: list_screen(app, "priorities"), what="priorities")
        await wait_until(pilot, lambda: screen.items, what="rows")
        table = screen.query_one(RowTable)
        values = [float(v.replace(",", "")) for v in column(screen, "value")]
        assert len(values) > 1 and values == sorted(values, reverse=True)
        assert "VALUE↓" in header(table) and "highest first" in status(screen)
        await pilot.press("V")
        values = [float(v.replace(",", "")) for v in column(screen, "value")]
        assert values == sorted(values) and "VALUE↑" in header(table)
        assert "sorted by value↑" in status(screen)
