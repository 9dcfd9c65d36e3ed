"""`KubeSource.prefetch`: the first watcher of the same kind and namespace (no selectors) gets
the early list's pages and watches from it; any other watcher lists as usual."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from gryvia_cli.tui.kubesource import KubeSource
from gryvia_cli.tui.source import WatchCallbacks
from tests.unit.cli.test_kube_watch import Recorder, ScriptedAccess, Stream, page, run_in_thread


def source_over(access: ScriptedAccess, namespace: str | None) -> KubeSource:
    access.context = SimpleNamespace(name="ctx")  # type: ignore[attr-defined]
    return KubeSource(access, None, namespace)  # type: ignore[arg-type]


def early(watcher: Any) -> Any:
    """The early list's pages a watcher took (None: it lists for itself)."""
    return getattr(watcher, "_prepaged", None)


def callbacks(rec: Recorder) -> WatchCallbacks:
    def listed(items: list[dict[str, Any]], version: str) -> None:
        rec.listed.append((items, version))
        rec.changed.set()

    return WatchCallbacks(listed, rec.events.append, lambda s, d: rec.states.append((s, d)))


def test_the_first_jobs_watcher_takes_the_early_list() -> None:
    access = ScriptedAccess([page("4", {"a": 1})], [Stream(hold=True)])
    source = source_over(access, None)
    source.prefetch("jobs", None)
    rec = Recorder()
    watcher = source.watcher("jobs", callbacks(rec), namespace=None)
    thread = run_in_thread(watcher)
    rec.wait_for("the list", lambda: rec.listed)
    rec.wait_for("the watch", lambda: "watch" in access.kinds())
    watcher.stop()
    thread.join(5)
    assert rec.listed == [([{"a": 1}], "4")]
    assert access.kinds() == ["list", "watch"]  # listed once, early
    again = source.watcher("jobs", callbacks(Recorder()), namespace=None)
    assert early(again) is None  # the early list serves one watcher only


def test_other_namespaces_and_selectors_list_for_themselves() -> None:
    access = ScriptedAccess([page("4", {"a": 1})], [])
    source = source_over(access, "ml")
    source.prefetch("jobs", "ml")
    assert early(source.watcher("jobs", callbacks(Recorder()), namespace="other")) is None
    selected = source.watcher("jobs", callbacks(Recorder()), namespace="ml", label_selector="a=b")
    assert early(selected) is None
    assert early(source.watcher("jobs", callbacks(Recorder()), namespace="ml")) is not None
