"""Deadlines and abandonment for blocking calls, the prober's health states, and what a
ListWatcher does when its requests block, are kicked, or are refused cluster-wide (no
cluster: scripted access; the sandbox tests in tests/tui cover the real network)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from gryvia_cli.core.health import Health, after_probe
from gryvia_cli.errors import ForbiddenError
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.deadline import Abandoned, DeadlineExceeded, call_with_deadline
from gryvia_cli.kube.health import HealthProbe
from gryvia_cli.kube.watch import Backoff, ListWatcher
from tests.unit.cli.test_kube_watch import SERVER, Recorder, ScriptedAccess, page, run_in_thread


def test_a_call_within_its_deadline_returns_its_result_or_raises_its_error() -> None:
    assert call_with_deadline(lambda: 42, 1.0) == 42
    with pytest.raises(ZeroDivisionError):
        call_with_deadline(lambda: 1 / 0, 1.0)


def test_a_slow_call_is_abandoned_at_its_deadline_and_its_late_result_handed_over() -> None:
    release, late = threading.Event(), []
    start = time.monotonic()
    with pytest.raises(DeadlineExceeded, match=r"did not answer within 0\.2s"):
        call_with_deadline(lambda: release.wait(5) and "late", 0.2, on_late=late.append)
    assert time.monotonic() - start < 2.5  # the call itself takes 5 s
    release.set()
    for _ in range(100):
        if late:
            break
        time.sleep(0.01)
    assert late == ["late"]


def test_a_cancel_event_abandons_the_call_at_once() -> None:
    cancel, release = threading.Event(), threading.Event()
    threading.Timer(0.1, cancel.set).start()
    start = time.monotonic()
    with pytest.raises(Abandoned):
        call_with_deadline(lambda: release.wait(5), 30, cancel=(cancel,))
    assert time.monotonic() - start < 2.5  # the call itself takes 5 s
    release.set()


def test_health_goes_slow_reconnecting_unreachable_and_back() -> None:
    h = after_probe(Health(), answered=True, seconds=0.1, error="", now=0)
    assert (h.state, h.label()) == ("live", "live")
    h = after_probe(h, answered=True, seconds=3.2, error="", now=5)
    assert (h.state, h.label()) == ("slow", "slow 3.2s")
    h = after_probe(h, answered=False, seconds=12, error="Read timed out", now=17)
    assert h.label() == "reconnecting (attempt 1, Read timed out)" and h.failing
    h = after_probe(h, answered=False, seconds=12, error="Read timed out", now=60)
    assert (h.state, h.attempt) == ("reconnecting", 2)
    h = after_probe(h, answered=False, seconds=5, error="Connection refused", now=77)
    assert h.label() == "unreachable (attempt 3, Connection refused)"
    h = after_probe(h, answered=True, seconds=0.2, error="", now=80)
    assert (h.state, h.attempt, h.failing_since) == ("live", 0, None)


class Version:
    """A `/version` that answers, blocks past the deadline, or fails, as scripted."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.release = threading.Event()

    def server_version(self) -> dict[str, Any]:
        reply = self.replies.pop(0) if self.replies else "block"
        if reply == "block":
            self.release.wait(5)
        elif reply == "fail":
            raise ForbiddenError("nope")
        return {"gitVersion": "v1"}


def test_the_prober_reports_a_stall_within_its_deadline_and_the_recovery() -> None:
    seen: list[Health] = []
    access = Version("ok", "block", "ok")
    probe = HealthProbe(access, seen.append, interval=0.01, failing_interval=0.01, deadline=0.2)
    assert probe.probe().state == "live"
    stalled = probe.probe()
    assert stalled.state == "reconnecting" and "did not answer within 0.2s" in stalled.error
    assert probe.probe().state == "live"
    access.release.set()


def test_stop_returns_at_once_while_a_list_blocks_on_a_stalled_network() -> None:
    release, listing = threading.Event(), threading.Event()

    class Stalled(ScriptedAccess):
        def list_objects(self, res: r.Resource, namespace: str | None = None, **kw: Any) -> Any:
            listing.set()
            release.wait(10)
            return page("1")

    rec = Recorder()
    watcher = rec.watcher(Stalled([], []))
    thread = run_in_thread(watcher)
    assert listing.wait(2)
    start = time.monotonic()
    watcher.stop()
    thread.join(2)
    assert not thread.is_alive() and time.monotonic() - start < 2.5  # the list takes 10 s
    release.set()


def test_a_kick_drops_the_stream_and_resumes_from_the_version_without_a_back_off() -> None:
    from tests.unit.cli.test_kube_watch import OBJ, Stream, line

    held = Stream(line("ADDED", OBJ), hold=True)
    access = ScriptedAccess([page("3")], [held])
    rec = Recorder()
    watcher = rec.watcher(access)
    watcher.backoff = Backoff(initial=30, maximum=30)  # a back-off wait would fail the test
    thread = run_in_thread(watcher)
    rec.wait_for("the event", lambda: rec.events)
    watcher.kick()
    rec.wait_for("the second watch", lambda: access.kinds().count("watch") == 2)
    watcher.stop()
    thread.join(2)
    assert not thread.is_alive() and held.shut.is_set()
    assert access.kinds()[:3] == ["list", "watch", "watch"]
    assert [kw["resource_version"] for k, kw in access.calls if k == "watch"] == ["3", "7"]


def test_a_cluster_wide_403_is_reported_once_as_forbidden_and_not_retried() -> None:
    refused = ForbiddenError('gryvianodes is forbidden: User "dev" cannot list at cluster scope')
    access = ScriptedAccess([refused, page("1")], [])
    states: list[tuple[str, str]] = []
    watcher = ListWatcher(
        access,  # type: ignore[arg-type]
        r.GPUNODE,
        None,
        on_listed=lambda items, v: None,
        on_event=lambda ev: None,
        on_state=lambda s, d: states.append((s, d)),
        backoff=Backoff(initial=0.01, maximum=0.01),
    )
    thread = run_in_thread(watcher)
    thread.join(2)
    assert not thread.is_alive()
    assert [s for s, _ in states] == ["forbidden"] and "cannot list" in states[0][1]
    assert access.kinds() == ["list"] and SERVER
