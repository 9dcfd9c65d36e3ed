"""The jobs list shown page by page: the store puts each page beside what it holds and the whole
list then drops what the list no longer has; the feed makes each job's row once; the Jobs view
shows its first rows while the list is held after its first page, says the count grows, and
filters and sorts every job once the list is complete (fake cluster; the sandbox's is
tests/tui/test_paged_sandbox.py)."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Static

from gryvia_cli.tui.feed import Feed
from gryvia_cli.tui.screens.jobs import JobsScreen
from gryvia_cli.tui.store import ClusterStore, Update, list_update, make_entries
from gryvia_cli.tui.widgets.rowtable import RowTable
from tests.tui.builders import make_job
from tests.tui.fake import FakeSource
from tests.tui.fixed import fixed_cluster
from tests.tui.test_tables import app_for
from tests.tui.waits import wait_loaded, wait_until

pytestmark = [pytest.mark.tui]

MANY = 1200
PAGE = 500


def _job(index: int, phase: str = "Queued") -> dict[str, Any]:
    obj = make_job(f"bulk-{index:04d}").ns(f"team-{index % 3}").phase(phase).obj()
    obj["metadata"]["resourceVersion"] = f"{index}-{phase}"
    return obj


def test_pages_add_to_the_store_and_the_whole_list_drops_what_it_no_longer_has() -> None:
    store = ClusterStore()
    store.apply([list_update("jobs", [_job(i) for i in range(4)])])
    # A relist arrives in two pages: job 3 is gone, job 1 changed, job 9 new.
    change = store.apply([Update("jobs", "page", entries=make_entries("jobs", [_job(0), _job(9)]))])
    assert store.paging == {"jobs"} and change.keys["jobs"] == {"team-0/bulk-0009"}
    assert len(store.jobs) == 5  # job 3 stays until the list is complete
    rest = make_entries("jobs", [_job(1, "Running"), _job(2)])
    change = store.apply([Update("jobs", "page", entries=rest)])
    assert change.keys["jobs"] == {"team-1/bulk-0001"}
    whole = make_entries("jobs", [_job(0), _job(9), _job(1, "Running"), _job(2)])
    change = store.apply([Update("jobs", "list", entries=whole)])
    assert store.paging == set() and "jobs" in store.loaded
    assert sorted(store.jobs) == sorted(f"team-{i % 3}/bulk-{i:04d}" for i in (0, 1, 2, 9))
    assert "team-0/bulk-0003" in change.keys["jobs"]


def test_the_feed_makes_each_row_once_and_ends_the_list_with_the_rows_of_its_pages() -> None:
    source = FakeSource({"jobs": [_job(i) for i in range(MANY)]})
    source.page_size = PAGE
    source.page_gate.set()
    feed = Feed(source, lambda kind, state, detail: None, first="jobs")
    watcher = feed.runners()["jobs"]
    import threading

    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    try:
        assert feed.first_listed.wait(10)
        updates = feed.drain()
        assert [u.op for u in updates] == ["page", "page", "list"]
        pages = [u.entries or {} for u in updates[:2]]
        whole = updates[2].entries or {}
        assert [len(p) for p in pages] == [PAGE, PAGE] and len(whole) == MANY
        first = next(iter(pages[0]))
        assert whole[first] is pages[0][first]  # the row made for the page, not made again
    finally:
        watcher.stop()
        thread.join(5)


def _status(app: Any) -> str:
    return str(app.screen.query_one("#jobs-status", Static).render())


async def test_first_rows_show_before_the_list_ends_then_filter_and_sort_see_every_job() -> None:
    objects = fixed_cluster()
    fixed = len(objects["jobs"])
    objects["jobs"] = [_job(i) for i in range(MANY)] + objects["jobs"]
    source = FakeSource(objects)
    source.page_size = PAGE
    app = app_for(source)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, JobsScreen) and app.screen, what="jobs view"
        )
        table = screen.query_one("#jobs-table", RowTable)
        await wait_until(pilot, lambda: len(table.order) == PAGE, what="the first page's rows")
        assert f"{PAGE}+ jobs, loading…" in _status(app)
        assert app.store.paging == {"jobs"} and "jobs" not in app.store.loaded
        await pilot.press("slash", *"bulk-11", "enter")  # filtering what is there so far
        await wait_until(pilot, lambda: "0 of 500+ jobs, loading…" in _status(app), what="0")
        source.page_gate.set()
        total = MANY + fixed
        await wait_loaded(pilot)
        await wait_until(pilot, lambda: f"100 of {total} jobs" in _status(app), what="filtered")
        assert "loading" not in _status(app)
        shown = sorted(k.split("/")[1] for k in table.order)
        assert shown == [f"bulk-{i}" for i in range(1100, 1200)]
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: len(table.order) == total, what="every job")
        screen.action_sort_by("name")
        await wait_until(pilot, lambda: "sort name" in _status(app), what="sorted by name")
        names = [k.split("/", 1)[1] for k in table.order]
        assert names == sorted(k.split("/", 1)[1] for k in app.store.jobs)
        assert f"{total} jobs" in _status(app)
