"""The paged list-then-watch (`kube.pagedwatch`) and its pure parts (`core.paging`): each page
handed over as it arrives, pages read ahead on another thread, an expired continue token
listed again from the first page, the growing count's words (no cluster: scripted access)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from gryvia_cli.core.paging import ListProgress, PageBuffer, count_words
from gryvia_cli.errors import ForbiddenError
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.errors import translate_api_exception
from gryvia_cli.kube.pagedwatch import PagedListWatcher, start_pages
from gryvia_cli.kube.watch import Backoff
from tests.unit.cli.test_kube_watch import (
    Recorder,
    ScriptedAccess,
    Stream,
    page,
    run_in_thread,
)


def _paged(access: ScriptedAccess, rec: Recorder, pages: list[Any], **kw: Any) -> PagedListWatcher:
    def listed(items: list[dict[str, Any]], version: str) -> None:
        rec.listed.append((items, version))
        rec.changed.set()

    def on_page(items: list[dict[str, Any]], first: bool, last: bool) -> None:
        pages.append(([i["n"] for i in items], first, last))
        rec.changed.set()

    return PagedListWatcher(
        access,
        r.AIJOB,
        "ml",
        on_listed=listed,
        on_event=lambda ev: None,
        on_state=lambda s, d: rec.states.append((s, d)),
        backoff=Backoff(initial=0.01, maximum=0.02),
        on_page=on_page,
        **kw,
    )


def test_count_words_say_the_count_grows_until_the_list_is_complete() -> None:
    assert count_words(1000, "jobs", loading=True) == "1000+ jobs, loading…"
    assert count_words(3, "jobs", shown=1, loading=True) == "1 of 3+ jobs, loading…"
    assert count_words(20000, "jobs", loading=False) == "20000 jobs"
    assert count_words(20000, "jobs", shown=10, loading=False) == "10 of 20000 jobs"


def test_list_progress_covers_a_list_only_when_its_last_page_is_in() -> None:
    progress = ListProgress()
    progress.add({"a": 1, "b": 2}, 3)  # one of three objects did not validate
    assert not progress.covers(3)
    progress.add({"c": 3}, 1, last=True)
    assert progress.covers(4) and not progress.covers(5)
    assert progress.entries == {"a": 1, "b": 2, "c": 3}


def test_page_buffer_hands_pages_over_in_order_then_the_readers_failure() -> None:
    buffer = PageBuffer()
    got: list[dict[str, Any]] = []
    taker = threading.Thread(target=lambda: got.append(buffer.take(0, 5)))
    taker.start()
    buffer.put({"n": 0})
    taker.join(5)
    assert got == [{"n": 0}]
    buffer.put({"n": 1})
    buffer.fail(ForbiddenError("no"))
    assert buffer.take(1, 0) == {"n": 1}  # a page read before the failure still counts
    with pytest.raises(ForbiddenError):
        buffer.take(2, 0)
    with pytest.raises(TimeoutError):
        PageBuffer().take(0, 0.01)


def test_each_page_is_handed_over_before_the_next_is_asked_for() -> None:
    access = ScriptedAccess(
        [page("5", {"n": 1}, {"n": 2}, token="t1"), page("5", {"n": 3}, token="t2"), page("6")],
        [Stream(hold=True)],
    )
    rec, pages = Recorder(), []
    asked_when: list[int] = []
    list_page = access.list_objects

    def counted(*args: Any, **kw: Any) -> Any:
        asked_when.append(len(pages))
        return list_page(*args, **kw)

    access.list_objects = counted  # type: ignore[method-assign]
    watcher = _paged(access, rec, pages)
    thread = run_in_thread(watcher)
    rec.wait_for("the list", lambda: rec.listed)
    watcher.stop()
    thread.join(5)
    assert pages == [([1, 2], True, False), ([3], False, False), ([], False, True)]
    assert asked_when == [0, 1, 2]
    assert rec.listed == [([{"n": 1}, {"n": 2}, {"n": 3}], "6")]
    lists = [kw for kind, kw in access.calls if kind == "list"]
    # pages of 500 at the latest version (no resourceVersion: the cache would ignore limit)
    assert [(kw["limit"], kw["continue_token"], kw.get("resource_version")) for kw in lists] == [
        (500, None, None),
        (500, "t1", None),
        (500, "t2", None),
    ]
    watch = next(kw for kind, kw in access.calls if kind == "watch")
    assert watch["resource_version"] == "6"


def test_an_expired_continue_token_lists_again_from_the_first_page() -> None:
    expired = translate_api_exception(410, None, resource=r.AIJOB, verb="list")
    access = ScriptedAccess(
        [page("5", {"n": 1}, token="t1"), expired, page("9", {"n": 1}, token="u1"), page("9")],
        [Stream(hold=True)],
    )
    rec, pages = Recorder(), []
    watcher = _paged(access, rec, pages)
    thread = run_in_thread(watcher)
    rec.wait_for("the list", lambda: rec.listed)
    watcher.stop()
    thread.join(5)
    assert pages == [([1], True, False), ([1], True, False), ([], False, True)]
    assert rec.listed == [([{"n": 1}], "9")]
    assert not any(s in ("reconnecting", "failed") for s, _ in rec.states)


def test_pages_read_ahead_serve_the_first_list_and_a_failed_read_ahead_lists_again() -> None:
    ahead = ScriptedAccess([page("3", {"n": 1}, token="t"), page("3", {"n": 2})], [])
    buffer = start_pages(ahead, r.AIJOB, "ml", page_size=1)  # type: ignore[arg-type]
    access = ScriptedAccess([], [Stream(hold=True)])
    rec, pages = Recorder(), []
    watcher = _paged(access, rec, pages, prepaged=buffer)
    thread = run_in_thread(watcher)
    rec.wait_for("the list", lambda: rec.listed)
    watcher.stop()
    thread.join(5)
    assert rec.listed == [([{"n": 1}, {"n": 2}], "3")]
    assert pages == [([1], True, False), ([2], False, True)]
    assert access.kinds()[:1] == ["watch"]  # no list of its own

    failed = PageBuffer()
    failed.fail(ForbiddenError("gryviaaijobs is forbidden"))
    access = ScriptedAccess([page("8", {"n": 7})], [Stream(hold=True)])
    rec, pages = Recorder(), []
    watcher = _paged(access, rec, pages, prepaged=failed)
    thread = run_in_thread(watcher)
    rec.wait_for("the list", lambda: rec.listed)
    watcher.stop()
    thread.join(5)
    assert rec.listed == [([{"n": 7}], "8")]
    assert access.kinds()[:2] == ["list", "watch"]
