"""An early list (`kube.paging.prefetch_list`) hands its result to the first ListWatcher, which
watches from it without listing again; a failed early list is listed again as usual."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from gryvia_cli.core.watching import WatchEvent
from gryvia_cli.errors import ForbiddenError
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.paging import prefetch_list
from tests.unit.cli.test_kube_watch import (
    OBJ,
    Recorder,
    ScriptedAccess,
    Stream,
    line,
    page,
    run_in_thread,
)


def test_prefetch_lists_every_page_and_the_watcher_watches_from_its_version() -> None:
    access = ScriptedAccess(
        [page("4", {"a": 1}, token="t1"), page("5", {"b": 2})],
        [Stream(line("ADDED", OBJ), hold=True)],
    )
    early = prefetch_list(access, r.AIJOB, "ml")  # type: ignore[arg-type]
    assert early.result(5) == ([{"a": 1}, {"b": 2}], "5")
    rec = Recorder()
    watcher = rec.watcher(access, prelisted=early)
    thread = run_in_thread(watcher)
    rec.wait_for("the ADDED event", lambda: rec.events)
    watcher.stop()
    thread.join(5)
    assert rec.listed == [([{"a": 1}, {"b": 2}], "5")]
    assert rec.events == [WatchEvent("ADDED", OBJ)]
    assert access.kinds() == ["list", "list", "watch"]  # the two pages of the early list only
    lists = [kw for kind, kw in access.calls if kind == "list"]
    assert [(kw["namespace"], kw["limit"], kw["continue_token"]) for kw in lists] == [
        ("ml", 1000, None),
        ("ml", 1000, "t1"),
    ]
    watch = next(kw for kind, kw in access.calls if kind == "watch")
    assert watch["resource_version"] == "5"


def test_a_failed_early_list_is_listed_again_and_fails_as_a_list_would() -> None:
    refused = ForbiddenError("gryviaaijobs is forbidden")
    access = ScriptedAccess([page("8", {"c": 3})], [Stream(hold=True)])
    early: Future[tuple[list[dict[str, Any]], str]] = Future()
    early.set_exception(refused)
    rec = Recorder()
    watcher = rec.watcher(access, prelisted=early)
    thread = run_in_thread(watcher)
    rec.wait_for("the list", lambda: rec.listed)
    watcher.stop()
    thread.join(5)
    assert rec.listed == [([{"c": 3}], "8")]
    assert access.kinds()[:2] == ["list", "watch"]
    assert not any(s in ("reconnecting", "failed") for s, _ in rec.states)


def test_the_early_list_serves_only_the_first_list() -> None:
    """After a relist (here: the early list's version expired at once) the watcher lists."""
    from gryvia_cli.kube.errors import translate_api_exception
    from tests.unit.cli.test_kube_watch import gone

    expired = translate_api_exception(410, None, resource=r.AIJOB, verb="watch")
    access = ScriptedAccess([page("9", {"d": 4})], [Stream(line("ERROR", gone())), expired])
    early: Future[tuple[list[dict[str, Any]], str]] = Future()
    early.set_result(([{"a": 1}], "3"))
    rec = Recorder()
    watcher = rec.watcher(access, prelisted=early)
    thread = run_in_thread(watcher)
    rec.wait_for("two lists", lambda: len(rec.listed) == 2)
    watcher.stop()
    thread.join(5)
    assert rec.listed[:2] == [([{"a": 1}], "3"), ([{"d": 4}], "9")]
    assert access.kinds()[:3] == ["watch", "list", "watch"]
