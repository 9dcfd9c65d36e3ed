"""The one transport's watch and log streams: requests KubeAccess sends, list-then-watch with
pages, bookmarks, 410 relists and back-off, and log following stopped from another thread
(no cluster: a scripted API client and scripted access)."""

from __future__ import annotations

import json
import threading
from collections import deque
from typing import Any

import pytest

from gryvia_cli.core.watching import WatchEvent
from gryvia_cli.errors import ApiError, ClusterUnreachableError, ForbiddenError, GryviaError
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.access import KubeAccess
from gryvia_cli.kube.config import ContextInfo
from gryvia_cli.kube.errors import ExpiredError, translate_api_exception, translate_transport_error
from gryvia_cli.kube.logfollow import LineFollower
from gryvia_cli.kube.watch import Backoff, ListWatcher, describe_error

SERVER = "https://fake:6443"
OBJ = {"metadata": {"name": "a", "namespace": "n", "resourceVersion": "7"}}


def line(event_type: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": event_type, "object": obj}).encode() + b"\n"


def gone() -> dict[str, Any]:
    return {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}


class Stream:
    """A streaming response: its chunks, then (with `hold`) a read that blocks until shut."""

    def __init__(self, *chunks: bytes, hold: bool = False, fail: Exception | None = None):
        self.chunks = chunks
        self.hold = hold
        self.fail = fail
        self.shut = threading.Event()
        self.released = False

    def stream(self, amt: Any = None, decode_content: bool = True) -> Any:
        yield from self.chunks
        if self.fail is not None:
            raise self.fail
        if self.hold:
            assert self.shut.wait(5), "nobody shut the stream down"
            from urllib3.exceptions import ProtocolError

            raise ProtocolError("Connection broken: the socket was shut down")

    def shutdown(self) -> None:
        self.shut.set()

    def release_conn(self) -> None:
        self.released = True


class ScriptedAccess:
    """A WatchAPI answering each call with the next scripted reply (an exception is raised)."""

    server = SERVER
    connect_timeout = 5.0  # KubeAccess's (the console's source lengthens it)

    def __init__(self, lists: list[Any], watches: list[Any]) -> None:
        self.lists, self.watches = deque(lists), deque(watches)
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def _next(self, queue: deque[Any]) -> Any:
        reply = queue.popleft() if queue else Stream(hold=True)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def list_objects(self, res: r.Resource, namespace: str | None = None, **kw: Any) -> Any:
        self.calls.append(("list", {"res": res, "namespace": namespace, **kw}))
        return self._next(self.lists)

    def watch_objects(self, res: r.Resource, namespace: str | None = None, **kw: Any) -> Any:
        self.calls.append(("watch", {"res": res, "namespace": namespace, **kw}))
        return self._next(self.watches)

    def kinds(self) -> list[str]:
        return [c[0] for c in self.calls]


def page(version: str, *items: dict[str, Any], token: str = "") -> dict[str, Any]:
    meta = {"resourceVersion": version, **({"continue": token} if token else {})}
    return {"items": list(items), "metadata": meta}


class Recorder:
    def __init__(self) -> None:
        self.states: list[tuple[str, str]] = []
        self.events: list[WatchEvent] = []
        self.listed: list[tuple[list[dict[str, Any]], str]] = []
        self.changed = threading.Event()

    def watcher(self, access: ScriptedAccess, **kw: Any) -> ListWatcher:
        def listed(items: list[dict[str, Any]], version: str) -> None:
            self.listed.append((items, version))
            self.changed.set()

        def event(ev: WatchEvent) -> None:
            self.events.append(ev)
            self.changed.set()

        return ListWatcher(
            access,  # type: ignore[arg-type]
            r.AIJOB,
            "ml",
            on_listed=listed,
            on_event=event,
            on_state=lambda s, d: self.states.append((s, d)),
            backoff=Backoff(initial=0.01, maximum=0.02),
            **kw,
        )

    def wait_for(self, what: str, test: Any) -> None:
        for _ in range(500):
            if test():
                return
            self.changed.wait(0.01)
            self.changed.clear()
        raise AssertionError(f"timed out waiting for {what}")


def run_in_thread(watcher: Any) -> threading.Thread:
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    return thread


def test_backoff_grows_to_the_cap_with_jitter() -> None:
    b = Backoff(initial=0.5, maximum=8, factor=2, jitter=0.2)
    assert b.delay(0, rand=lambda: 0.5) == 0.5
    assert b.delay(3, rand=lambda: 0.5) == 4.0
    assert b.delay(10, rand=lambda: 1.0) == pytest.approx(8 * 1.2)
    assert b.delay(10, rand=lambda: 0.0) == pytest.approx(8 * 0.8)


def test_reconnects_with_back_off_then_lists_in_pages_and_watches_from_the_version() -> None:
    from urllib3.exceptions import MaxRetryError, NewConnectionError

    refused = translate_transport_error(
        MaxRetryError(None, "/", NewConnectionError(None, "[Errno 111] Connection refused")),  # type: ignore[arg-type]
        SERVER,
    )
    held = Stream(line("ADDED", OBJ), hold=True)
    access = ScriptedAccess([refused, page("4", {"a": 1}, token="t1"), page("5", {"b": 2})], [held])
    rec = Recorder()
    watcher = rec.watcher(access, label_selector="x=y", page_size=2)
    thread = run_in_thread(watcher)
    rec.wait_for("the ADDED event", lambda: rec.events)
    watcher.stop()
    thread.join(5)
    assert not thread.is_alive() and held.shut.is_set() and held.released
    states = [s for s, _ in rec.states]
    assert states == ["reconnecting", "live", "stopped"]
    assert rec.states[0][1].startswith("[Errno 111] Connection refused; retry in 0.0")
    assert rec.listed == [([{"a": 1}, {"b": 2}], "5")]
    assert rec.events == [WatchEvent("ADDED", OBJ)] and watcher.resource_version == "7"
    lists = [kw for kind, kw in access.calls if kind == "list"]
    assert [(kw["limit"], kw["continue_token"]) for kw in lists] == [
        (2, None),
        (2, None),
        (2, "t1"),
    ]
    assert all(kw["label_selector"] == "x=y" and kw["namespace"] == "ml" for kw in lists)
    # as client-go's informers: the first list may come from the API server's watch cache
    assert [kw["resource_version"] for kw in lists] == ["0", "0", "0"]
    watch = next(kw for kind, kw in access.calls if kind == "watch")
    assert (watch["resource_version"], watch["label_selector"]) == ("5", "x=y")


def test_an_expired_version_relists_at_once_without_reconnecting() -> None:
    """410 as an ERROR event in the stream, then as a refused watch request: relist both times."""
    expired = translate_api_exception(410, json.dumps(gone()), resource=r.AIJOB, verb="watch")
    assert isinstance(expired, ExpiredError) and isinstance(expired, ApiError)
    access = ScriptedAccess(
        [page("9"), page("10"), page("11")],
        [Stream(line("ERROR", gone())), expired],
    )
    rec = Recorder()
    watcher = rec.watcher(access)
    thread = run_in_thread(watcher)
    rec.wait_for("three lists", lambda: len(rec.listed) == 3)
    watcher.stop()
    thread.join(5)
    assert access.kinds()[:6] == ["list", "watch", "list", "watch", "list", "watch"]
    assert [v for _, v in rec.listed] == ["9", "10", "11"]
    lists = [kw for kind, kw in access.calls if kind == "list"]
    # after 410 Gone the cache may be as old as the version that expired: read the latest
    assert [kw["resource_version"] for kw in lists[:3]] == ["0", None, None]
    assert not any(s in ("reconnecting", "failed") for s, _ in rec.states)


def test_bookmarks_move_the_version_and_a_finished_watch_resumes_without_a_relist() -> None:
    bookmark = {"kind": "GryviaAIJob", "metadata": {"resourceVersion": "12"}}
    access = ScriptedAccess([page("5")], [Stream(line("BOOKMARK", bookmark)), Stream(hold=True)])
    rec = Recorder()
    watcher = rec.watcher(access)
    thread = run_in_thread(watcher)
    rec.wait_for("the second watch", lambda: access.kinds().count("watch") == 2)
    watcher.stop()
    thread.join(5)
    assert access.kinds() == ["list", "watch", "watch"] and rec.events == []
    assert [kw["resource_version"] for k, kw in access.calls if k == "watch"] == ["5", "12"]


def test_a_refusal_is_failed_and_other_errors_reconnect() -> None:
    forbidden = ForbiddenError("forbidden: cannot list gryviaaijobs")
    from urllib3.exceptions import ProtocolError

    broken = Stream(line("MODIFIED", OBJ), fail=ProtocolError("Connection broken: reset"))
    access = ScriptedAccess([forbidden, page("1"), page("2")], [broken])
    rec = Recorder()
    watcher = rec.watcher(access)
    thread = run_in_thread(watcher)
    rec.wait_for("live again", lambda: [s for s, _ in rec.states].count("live") == 2)
    watcher.stop()
    thread.join(5)
    states = [s for s, _ in rec.states]
    assert states[:4] == ["failed", "live", "reconnecting", "live"]
    assert rec.states[0][1].startswith("forbidden: cannot list gryviaaijobs; retry in")
    assert rec.states[2][1].startswith("reset; retry in")
    # the broken stream resumes from the last version seen, without a relist
    assert access.kinds()[:4] == ["list", "list", "watch", "watch"] and len(rec.listed) == 1
    assert [kw["resource_version"] for k, kw in access.calls if k == "watch"] == ["1", "7"]


def test_an_error_event_other_than_410_is_an_api_error() -> None:
    status = {"kind": "Status", "code": 500, "message": "etcd down"}
    access = ScriptedAccess([page("1")], [Stream(line("ERROR", status))])
    rec = Recorder()
    watcher = rec.watcher(access)
    thread = run_in_thread(watcher)
    rec.wait_for("reconnecting", lambda: any(s == "reconnecting" for s, _ in rec.states))
    watcher.stop()
    thread.join(5)
    detail = next(d for s, d in rec.states if s == "reconnecting")
    assert "etcd down" in detail
    assert describe_error(ApiError("boom")) == "boom"


# -- the requests KubeAccess sends -------------------------------------------------------------


class RestResponse:
    def __init__(self, status: int, data: bytes = b"", stream: Any = None) -> None:
        self.status, self.data, self.response = status, data, stream

    def read(self) -> bytes:
        return self.data


class ScriptedClient:
    """The two calls KubeAccess makes of the official ApiClient."""

    class configuration:
        host = SERVER

    def __init__(self, *replies: RestResponse) -> None:
        self.replies = deque(replies)
        self.sent: list[dict[str, Any]] = []

    def param_serialize(self, **kw: Any) -> tuple[Any, ...]:
        self.sent.append(kw)
        return (kw["method"], kw["resource_path"])

    def call_api(self, method: str, path: str, _request_timeout: Any = None) -> RestResponse:
        self.sent[-1]["timeout"] = _request_timeout
        return self.replies.popleft()


def access_with(*replies: RestResponse) -> tuple[KubeAccess, ScriptedClient]:
    client = ScriptedClient(*replies)
    ctx = ContextInfo("test", "test", SERVER, "admin", None, ())
    return KubeAccess(client, ctx, timeout=30), client


def test_watch_and_page_requests() -> None:
    held = Stream()
    access, client = access_with(
        RestResponse(200, b'{"items": [], "metadata": {"continue": "c2"}}'),
        RestResponse(200, stream=held),
    )
    access.list_objects(
        r.AIJOB, "a b", field_selector="f=1", limit=500, continue_token="c1", resource_version="0"
    )
    assert access.watch_objects(r.POD, "ml", resource_version="42", timeout_seconds=60) is held
    listing, watching = client.sent
    assert listing["header_params"]["Accept-Encoding"] == "gzip"  # lists may come compressed
    assert "Accept-Encoding" not in watching["header_params"]
    assert listing["resource_path"] == "/apis/gryvia.io/v1alpha1/namespaces/a%20b/gryviaaijobs"
    assert listing["query_params"] == [("fieldSelector", "f=1"), ("limit", 500), ("continue", "c1")]
    assert watching["resource_path"] == "/api/v1/namespaces/ml/pods"
    assert watching["query_params"] == [
        ("watch", "true"),
        ("allowWatchBookmarks", "true"),
        ("timeoutSeconds", 60),
        ("resourceVersion", "42"),
    ]
    assert watching["timeout"] == (5.0, 90)


def test_a_refused_watch_request_is_translated() -> None:
    access, _ = access_with(RestResponse(410, json.dumps(gone()).encode()))
    with pytest.raises(ExpiredError):
        access.watch_objects(r.AIJOB, None, resource_version="1")
    access, _ = access_with(RestResponse(403, b'{"message": "nope"}'))
    with pytest.raises(ForbiddenError):
        access.watch_objects(r.AIJOB, None)


# -- log following -----------------------------------------------------------------------------


class LogAccess:
    server = SERVER

    def __init__(self, response: Stream) -> None:
        self.response = response
        self.asked: dict[str, Any] = {}

    def pod_log(self, pod: str, namespace: str, **kw: Any) -> Stream:
        self.asked = {"pod": pod, "namespace": namespace, **kw}
        return self.response


def test_a_followed_log_yields_lines_and_ends_when_stopped_from_another_thread() -> None:
    stream = Stream(b"2026-11-20T10:00:00Z one\n2026-11-20T10:00:01Z tw", b"o\n", hold=True)
    access = LogAccess(stream)
    follower = LineFollower(access, "p-0", "ml", container="trainer", timestamps=True)
    got: list[str] = []

    def read() -> None:
        for text in follower.lines():
            got.append(text)
            if len(got) == 2:
                threading.Thread(target=follower.stop).start()

    thread = threading.Thread(target=read)
    thread.start()
    thread.join(5)
    assert not thread.is_alive() and stream.shut.is_set() and stream.released
    assert got == ["2026-11-20T10:00:00Z one", "2026-11-20T10:00:01Z two"]
    assert access.asked == {
        "pod": "p-0",
        "namespace": "ml",
        "follow": True,
        "container": "trainer",
        "timestamps": True,
    }


def test_a_broken_log_stream_raises_cluster_unreachable() -> None:
    from urllib3.exceptions import ProtocolError

    follower = LineFollower(LogAccess(Stream(b"a\n", fail=ProtocolError("reset"))), "p", "ml")
    lines = follower.lines()
    assert next(lines) == "a"
    with pytest.raises(ClusterUnreachableError) as err:
        next(lines)
    assert isinstance(err.value, GryviaError) and SERVER in err.value.message


def test_stopping_a_stream_that_already_closed_is_harmless() -> None:
    from gryvia_cli.kube.stream import stop_stream

    class Closed:
        def shutdown(self) -> None:
            raise ValueError("Cannot shutdown socket as self._sock_shutdown is not set")

    class Released:
        def shutdown(self) -> None:
            raise RuntimeError("Cannot shutdown as connection has already been released")

    class Socket:
        def __init__(self) -> None:
            self.how: list[int] = []

        def shutdown(self, how: int) -> None:
            self.how.append(how)

    class Old:
        def __init__(self) -> None:
            self.connection = type("Conn", (), {"sock": Socket()})()

    stop_stream(Closed())
    stop_stream(Released())
    old = Old()
    stop_stream(old)
    stop_stream(object())
    import socket

    assert old.connection.sock.how == [socket.SHUT_RDWR]
