"""Resuming a followed log: timestamps, the replay after `sinceTime`, cuts under the pump."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from urllib3.exceptions import ProtocolError

from gryvia_cli.core.logresume import NANOS, LogCursor, format_second, parse_stamp, split_stamp
from gryvia_cli.kube.retry import Link
from gryvia_cli.kube.watch import Backoff
from gryvia_cli.views import streams
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import make_job, make_pod

BASE = 1_796_119_200 * NANOS  # 2026-12-01T10:00:00Z


def stamp(nanos: int) -> str:
    """kwok's format: RFC3339 with nine fraction digits, UTC."""
    return format_second(nanos).replace("Z", f".{nanos % NANOS:09d}Z")


def test_stamps_parse_to_nanoseconds_whatever_their_digits() -> None:
    assert parse_stamp("2026-12-01T10:00:00Z") == BASE
    assert parse_stamp("2026-12-01T10:00:01.5Z") == BASE + NANOS + 500_000_000
    assert parse_stamp("2026-12-01T10:00:01.123456789Z") == BASE + NANOS + 123_456_789
    assert parse_stamp("2026-12-01T11:00:01.25+01:00") == BASE + NANOS + 250_000_000
    for bad in ("", "line 1", "2026-12-01", "2026-12-01T10:00:01.x5Z", "2026-13-01T10:00:00Z"):
        assert parse_stamp(bad) is None, bad
    assert format_second(BASE + 999_999_999) == "2026-12-01T10:00:00Z"
    assert split_stamp("2026-12-01T10:00:00.1Z rank 0: loss 1.5") == (
        BASE + 100_000_000,
        "rank 0: loss 1.5",
    )
    assert split_stamp("2026-12-01T10:00:00Z ") == (BASE, "")
    assert split_stamp("no time here") == (None, "no time here")


def test_the_replay_after_a_cut_is_dropped_up_to_where_it_was() -> None:
    cursor = LogCursor()
    log = [f"{stamp(BASE + n * 300_000_000)} line {n}" for n in range(10)]  # 0.3 s apart
    assert [cursor.accept(line) for line in log[:5]] == [f"line {n}" for n in range(5)]
    # line 4 is at 1.2 s: resume from second 1, where lines 4 (and 5, 6) are
    assert cursor.resume() == "2026-12-01T10:00:01Z"
    replay = [line for line in log if parse_stamp(line.split()[0]) >= BASE + NANOS]  # type: ignore[operator]
    assert [cursor.accept(line) for line in replay] == [None] + [f"line {n}" for n in range(5, 10)]


def test_a_server_ignoring_since_time_and_lines_without_time() -> None:
    cursor = LogCursor(keep_timestamps=True)
    log = [f"{stamp(BASE + n * NANOS // 4)} line {n}" for n in range(8)]
    assert [cursor.accept(line) for line in log[:6]] == log[:6]
    cursor.resume()
    assert [cursor.accept(line) for line in log] == [None] * 6 + log[6:]
    assert LogCursor().accept("plain") == "plain"
    assert LogCursor().resume() is None, "nothing printed: reopen as first opened"


@settings(max_examples=300, deadline=None)
@given(
    gaps=st.lists(st.integers(0, 2 * NANOS), min_size=1, max_size=60),
    cuts=st.lists(st.integers(0, 60), max_size=6),
)
def test_every_line_exactly_once_whatever_the_cuts(gaps: list[int], cuts: list[int]) -> None:
    """Lines (several may share a time) delivered by a server that honours sinceTime at
    second precision, cut after any number of lines, any number of times."""
    times, now = [], BASE
    for gap in gaps:
        now += gap
        times.append(now)
    log = [(t, f"{stamp(t)} line {n}") for n, t in enumerate(times)]
    cursor, shown = LogCursor(), []
    since: int | None = None
    for cut in [*cuts, len(log)]:
        replay = [line for t, line in log if since is None or t >= since]
        for line in replay[:cut]:
            text = cursor.accept(line)
            if text is not None:
                shown.append(text)
        resumed = cursor.resume()
        since = None if resumed is None else parse_stamp(resumed)
    assert shown == [f"line {n}" for n in range(len(log))]


class LogServer:
    """kwok-like logs: `sinceTime` at second precision, a follow stays open; the first
    `cuts` opens break (a reset) after `every` lines."""

    def __init__(self, lines: int, cuts: int, every: int) -> None:
        self.log = [(BASE + n * 400_000_000, f"line {n}") for n in range(lines)]
        self.cuts, self.every = cuts, every
        self.opens: list[dict[str, Any]] = []

    def pod_log(self, pod: str, namespace: str, **kw: Any) -> Any:
        self.opens.append(kw)
        since = parse_stamp(kw["since_time"]) if kw.get("since_time") else None
        lines = [f"{stamp(t)} {text}" for t, text in self.log if since is None or t >= since]
        cut = len(self.opens) <= self.cuts
        return Stream(lines[: self.every] if cut else lines, cut)


class Stream:
    def __init__(self, lines: list[str], cut: bool) -> None:
        self.lines, self.cut, self.closed = lines, cut, threading.Event()

    def stream(self, amt: int = 4096, decode_content: bool = True) -> Iterator[bytes]:
        for line in self.lines:
            yield (line + "\n").encode()
        if self.cut:
            yield b"2026-12-01T10:00:59.1Z half a li"  # never completed: not printed
            raise ProtocolError("Connection broken: IncompleteRead(0 bytes read)")
        self.closed.wait(30)

    def release_conn(self) -> None:
        self.closed.set()

    def shutdown(self) -> None:
        self.closed.set()


@pytest.mark.parametrize("keep", [False, True])
def test_the_pump_reopens_cut_streams_from_where_they_were(
    monkeypatch: pytest.MonkeyPatch, keep: bool
) -> None:
    monkeypatch.setattr(streams, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(streams, "DRAIN_SECONDS", 0.2)
    pod = make_pod("a-0-x").job("a").obj()
    pod["spec"]["restartPolicy"] = "Never"
    pod["status"]["containerStatuses"] = [{"name": "c", "state": {"terminated": {}}}]
    fake = FakeAccess(make_job("a").phase("Succeeded").obj(), pod)
    server = LogServer(lines=30, cuts=4, every=7)
    fake.pod_log = server.pod_log  # type: ignore[method-assign]
    out: list[str] = []
    said: list[str] = []
    link = Link(said.append, backoff=Backoff(initial=0.01, maximum=0.05))
    streams.follow_logs(
        fake, "ml", [streams.LogTarget("a-0-x", "c")], out.append, timestamps=keep, link=link
    )
    texts = [line.split(" ", 1)[1] if keep else line for line in out]
    assert texts == [f"line {n}" for n in range(30)]
    assert len(server.opens) == 5 and all(o["timestamps"] for o in server.opens)
    assert [bool(o.get("since_time")) for o in server.opens] == [False] + [True] * 4
    assert said[0].startswith("reconnecting to the API server (attempt 1, last error: ")
    assert said[-1].startswith("reconnected to the API server")


def test_a_stalled_stream_is_reopened_once_the_api_server_answers_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gryvia_cli.kube.errors import ConnectionLostError

    monkeypatch.setattr(streams, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(streams, "DRAIN_SECONDS", 0.2)
    pod = make_pod("a-0-x").job("a").obj()
    pod["spec"]["restartPolicy"] = "Never"
    pod["status"]["containerStatuses"] = [{"name": "c", "state": {"terminated": {}}}]
    fake = FakeAccess(make_job("a").phase("Running").obj(), pod)
    log = [f"{stamp(BASE + n * 300_000_000)} line {n}" for n in range(12)]
    opens: list[dict[str, Any]] = []

    def pod_log(pod: str, namespace: str, **kw: Any) -> Stream:
        opens.append(kw)
        if len(opens) == 1:  # stalls after 5 lines and never wakes up
            return Stream(log[:5], cut=False)
        since = parse_stamp(kw["since_time"])
        return Stream([line for line in log if parse_stamp(line.split()[0]) >= since], False)  # type: ignore[operator]

    real_get, failures = fake.get, [ConnectionLostError("cannot reach", causes=("timed out",))] * 2

    def get(*args: Any, **kw: Any) -> Any:
        if failures:
            raise failures.pop()
        return real_get(*args, **kw)

    fake.pod_log = pod_log  # type: ignore[method-assign]
    fake.get = get  # type: ignore[method-assign]
    out: list[str] = []
    said: list[str] = []
    link = Link(said.append, backoff=Backoff(initial=0.01, maximum=0.05))
    streams.follow_logs(fake, "ml", [streams.LogTarget("a-0-x", "c")], out.append, link=link)
    assert out == [f"line {n}" for n in range(12)]
    assert len(opens) == 2 and opens[1]["since_time"] == "2026-12-01T10:00:01Z"
    assert said == [
        "reconnecting to the API server (attempt 1, last error: timed out)",
        "reconnecting to the API server (attempt 2, last error: timed out)",
        "reconnected to the API server after 2 failed attempt(s)",
    ]


def test_a_reopen_left_unanswered_after_the_container_ended_is_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gryvia_cli.views import logfollow

    monkeypatch.setattr(streams, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(streams, "DRAIN_SECONDS", 0.05)
    monkeypatch.setattr(logfollow, "OPEN_GRACE", 0.3)
    pod = make_pod("a-0-x").job("a").obj()
    pod["spec"]["restartPolicy"] = "Never"
    pod["status"]["containerStatuses"] = [{"name": "c", "state": {"terminated": {}}}]
    fake = FakeAccess(make_job("a").phase("Succeeded").obj(), pod)
    opens: list[dict[str, Any]] = []
    never = threading.Event()

    def pod_log(pod: str, namespace: str, **kw: Any) -> Stream:
        opens.append(kw)
        if len(opens) == 1:
            return Stream([], cut=True)  # an empty log, cut
        never.wait(30)  # a server holding back the headers of an empty log
        return Stream([], cut=False)

    fake.pod_log = pod_log  # type: ignore[method-assign]
    link = Link(lambda _: None, backoff=Backoff(initial=0.01, maximum=0.05))
    streams.follow_logs(fake, "ml", [streams.LogTarget("a-0-x", "c")], lambda _: None, link=link)
    never.set()
    assert len(opens) == 2
