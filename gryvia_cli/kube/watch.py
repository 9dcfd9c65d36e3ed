"""List-then-watch over the access layer's REST calls, with reconnect back-off (log following
is `kube.logfollow`).

It runs on a worker thread and blocks until stopped; `stop()` may be called from any thread
and unblocks a pending read at once (`stream.stop_stream` shuts the socket down). Objects are
plain dicts as the API server sends them: callers parse what they keep. Every request goes
through `KubeAccess` (one transport for the CLI and the console), so failures arrive as
GryviaError subclasses.

`ListWatcher` lists a collection (in pages), reports it, then watches from the list's
resourceVersion. A watch that ends or breaks resumes from the last version seen (bookmarks
included); `410 Gone` (an ERROR event or a refused request) relists once; other failures
report `reconnecting` (or `failed` when the server refuses: 401, 403, 404, relisting when it
answers again) and retry with exponential back-off and jitter. A 403 on a cluster-wide
collection is final (`forbidden`). Each request runs with a deadline on its own daemon thread
(`kube.deadline`), so `stop()` and `kick()` (reconnect now, from a connection prober) never
wait for a stalled network.
"""

from __future__ import annotations

import json
import logging
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from gryvia_cli.core.watching import WatchEvent, WatchState
from gryvia_cli.errors import (
    ClusterUnreachableError,
    ForbiddenError,
    GryviaError,
    NotFoundError,
    NotInstalledError,
)
from gryvia_cli.kube.deadline import Abandoned, call_with_deadline
from gryvia_cli.kube.errors import ExpiredError, translate_api_exception, translate_transport_error
from gryvia_cli.kube.paging import PageAPI
from gryvia_cli.kube.resources import Resource
from gryvia_cli.kube.stream import HeldStream as _Stream
from gryvia_cli.kube.stream import drop as _drop

log = logging.getLogger("gryvia.kube.watch")

T = TypeVar("T")
_EVENT_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED"})


@dataclass(frozen=True)
class Backoff:
    """Exponential back-off with jitter: initial * factor**attempt, capped at `maximum`
    (seconds), then spread by +-`jitter` (a fraction)."""

    initial: float = 0.5
    maximum: float = 30.0
    factor: float = 2.0
    jitter: float = 0.2

    def delay(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait before retry number `attempt` (0-based)."""
        base = min(self.maximum, self.initial * self.factor ** max(attempt, 0))
        return base * (1 - self.jitter + 2 * self.jitter * rand())


class WatchAPI(PageAPI, Protocol):
    """The calls of `KubeAccess` a ListWatcher makes (tests pass a fake): the pages of a list,
    and the watch."""

    server: str

    def watch_objects(
        self,
        res: Resource,
        namespace: str | None = None,
        *,
        resource_version: str = "",
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int = 240,
    ) -> Any:
        """An open watch stream (see `KubeAccess.watch_objects`)."""
        ...


def describe_error(exc: BaseException) -> str:
    """A one-line reason for a failed request, worded as the CLI words API errors: the
    cause of an unreachable server (`Connection refused`), else the error's message."""
    if isinstance(exc, GryviaError):
        causes = exc.causes if isinstance(exc, ClusterUnreachableError) else ()
        return _plain(causes[0] if causes else exc.message)[:200]
    text = translate_transport_error(exc, "the API server").causes[0]
    return _plain(text)[:200] or type(exc).__name__


def _plain(reason: str) -> str:
    """urllib3's `(<HTTPSConnection(...) at 0x...>, 'Connection ... timed out')` without the
    connection object: just the quoted reason."""
    match = re.fullmatch(r"\(<[^>]*>, ['\"](.*)['\"]\)", reason.strip(), re.DOTALL)
    return match.group(1) if match else reason


def watch_events(response: Any, server: str) -> Iterator[dict[str, Any]]:
    """Parse a watch stream: yield each event (`{"type", "object"}`) as the server sends it,
    bookmarks included. An ERROR event raises its translated GryviaError (ExpiredError for
    410); a broken connection raises ClusterUnreachableError."""
    from urllib3.exceptions import HTTPError

    from gryvia_cli.kube.stream import stream_lines

    try:
        for line in stream_lines(response):
            if not line.strip():
                continue
            event = json.loads(line)
            if event.get("type") == "ERROR":
                status = event.get("object") or {}
                raise translate_api_exception(
                    int(status.get("code") or 0), json.dumps(status), resource=None, verb="watch"
                )
            yield event
    except HTTPError as exc:
        raise translate_transport_error(exc, server) from None
    except ValueError as exc:
        raise GryviaError(f"the API server sent a watch event that is not JSON: {exc}") from None


def _noop_state(state: WatchState, detail: str) -> None:
    return None


class ListWatcher:
    """List a collection, then watch it; call back from the thread that runs `run()`.

    `access` is a KubeAccess (or any WatchAPI), `res`/`namespace` the collection (namespace
    None: all namespaces, or cluster-scoped), selectors as the API takes them.
    `on_listed(items, resource_version)` gets the whole collection after each (re)list;
    `on_event(event)` each change after it; `on_state(state, detail)` every state change.
    Pages hold `page_size` items; a watch request lasts `watch_seconds`. Each request (a page,
    opening a watch) runs with a deadline of `request_seconds` on its own daemon thread, so
    `stop()` and `kick()` never wait for the network.

    After a broken connection the watch resumes from the last resourceVersion seen; only a
    410 (or a refusal) lists again. A 403 on a cluster-wide collection (namespace None) is
    final: state `forbidden`, reported once, no more retries.
    """

    def __init__(
        self,
        access: WatchAPI,
        res: Resource,
        namespace: str | None = None,
        *,
        on_listed: Callable[[list[dict[str, Any]], str], None],
        on_event: Callable[[WatchEvent], None],
        on_state: Callable[[WatchState, str], None] = _noop_state,
        label_selector: str | None = None,
        field_selector: str | None = None,
        backoff: Backoff | None = None,
        page_size: int = 1000,
        watch_seconds: int = 240,
        request_seconds: float = 60.0,
    ) -> None:
        self.access = access
        self.res = res
        self.namespace = namespace
        self.selectors: dict[str, str | None] = {
            "label_selector": label_selector,
            "field_selector": field_selector,
        }
        self.on_listed = on_listed
        self.on_event = on_event
        self.on_state = on_state
        self.backoff = backoff or Backoff()
        self.page_size = page_size
        self.watch_seconds = watch_seconds
        self.request_seconds = request_seconds
        self.resource_version = ""
        self.state: WatchState = "connecting"
        self._stream = _Stream()
        self._expired = False

    @property
    def stopped(self) -> bool:
        """True once `stop()` was called."""
        return self._stream.stop_event.is_set()

    def stop(self) -> None:
        """Stop the loop and unblock a pending read; safe from any thread, idempotent."""
        self._stream.stop()

    def kick(self) -> None:
        """Drop the open watch or pending request and reconnect now, skipping a back-off
        wait (the prober saw the server fail or come back); safe from any thread."""
        self._stream.interrupt()

    def _set_state(self, state: WatchState, detail: str = "") -> None:
        if state != self.state or state in ("reconnecting", "failed"):
            self.state = state
            self.on_state(state, detail)

    def _request(self, call: Callable[[], T], on_late: Callable[[T], None] | None = None) -> T:
        cancel = (self._stream.stop_event, self._stream.wake)
        return call_with_deadline(call, self.request_seconds, cancel=cancel, on_late=on_late)

    def list_once(self) -> tuple[list[dict[str, Any]], str]:
        """List the whole collection in pages; return (items, resourceVersion). Raises
        DeadlineExceeded for a page slower than `request_seconds`, Abandoned on stop/kick.

        As client-go's reflector: the first list asks for resourceVersion 0, which the API
        server answers from its watch cache in one go (the watch then catches up from the
        version it returns); a list after 410 Gone asks for the latest version."""
        items: list[dict[str, Any]] = []
        token = ""
        version = None if self._expired else "0"
        while True:
            body = self._request(
                lambda t=token: self.access.list_objects(  # type: ignore[misc]
                    self.res,
                    self.namespace,
                    limit=self.page_size,
                    continue_token=t or None,
                    resource_version=version,
                    **self.selectors,
                )
            )
            items.extend(body.get("items") or [])
            meta = body.get("metadata") or {}
            token = meta.get("continue") or ""
            if not token:
                return items, str(meta.get("resourceVersion") or "")

    def _watch_once(self) -> None:
        def open_watch() -> Any:
            return self.access.watch_objects(
                self.res,
                self.namespace,
                resource_version=self.resource_version,
                timeout_seconds=self.watch_seconds,
                **self.selectors,
            )

        response = self._request(open_watch, on_late=_drop)
        if not self._stream.open(response):
            return
        self._set_state("live")
        try:
            for raw in watch_events(response, self.access.server):
                self._handle(raw)
                if self.stopped:
                    break
        finally:
            self._stream.close()

    def _handle(self, raw: dict[str, Any]) -> None:
        obj = raw.get("object") or {}
        version = (obj.get("metadata") or {}).get("resourceVersion")
        if version:
            self.resource_version = str(version)
        if raw.get("type") in _EVENT_TYPES:
            self.on_event(WatchEvent(raw["type"], obj))

    def _relist(self) -> None:
        items, version = self.list_once()
        if not self.stopped:
            self.resource_version = version
            self.on_listed(items, version)

    def run(self) -> None:
        """List, then watch until `stop()`; never raises for API or connection failures."""
        failures = 0
        need_list = True
        while not self.stopped:
            try:
                if need_list:
                    self._relist()
                    need_list = False
                failures = 0
                self._watch_once()
            except ExpiredError as exc:
                log.debug("watch expired, relisting: %s", exc.message)
                need_list = self._expired = True
            except Abandoned:
                self._stream.wake.clear()  # kicked: try again at once
            except Exception as exc:
                if self.stopped:
                    break
                kicked = self._stream.wake.is_set()
                self._stream.wake.clear()
                if isinstance(exc, ForbiddenError) and self.namespace is None:
                    self._set_state("forbidden", describe_error(exc))
                    return
                fatal = isinstance(exc, ForbiddenError | NotFoundError | NotInstalledError)
                need_list = need_list or fatal
                delay = 0.0 if kicked else self.backoff.delay(failures)
                failures += 1
                state: WatchState = "failed" if fatal else "reconnecting"
                self._set_state(state, f"{describe_error(exc)}; retry in {delay:.1f}s")
                if self._stream.wake.wait(delay):
                    self._stream.wake.clear()
        self._set_state("stopped")
