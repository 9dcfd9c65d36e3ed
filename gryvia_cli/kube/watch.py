"""List-then-watch and log following on the official client's Watch, with reconnect back-off.

Both run on a worker thread and block until stopped; `stop()` may be called from any thread
and unblocks a pending read at once (Watch.stop shuts the socket down). Objects are plain
dicts as the API server sends them: callers parse what they keep.

`ListWatcher` lists a collection (in pages), reports it, then watches from the list's
resourceVersion. A watch that ends normally resumes from the last version seen; `410 Gone`
relists at once; connection failures report `reconnecting` and retry with exponential
back-off, relisting when the server answers again.
"""

from __future__ import annotations

import json
import logging
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

log = logging.getLogger("gryvia.kube.watch")

WatchState = Literal["connecting", "live", "reconnecting", "failed", "stopped"]
EventType = Literal["ADDED", "MODIFIED", "DELETED"]
_GONE = 410
_FATAL = frozenset({401, 403, 404})


@dataclass(frozen=True)
class WatchEvent:
    """One change of one object."""

    type: EventType
    object: dict[str, Any]


@dataclass(frozen=True)
class Backoff:
    """Exponential back-off with jitter: initial * factor**attempt, capped at `maximum`."""

    initial: float = 0.5
    maximum: float = 30.0
    factor: float = 2.0
    jitter: float = 0.2

    def delay(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait before retry number `attempt` (0-based)."""
        base = min(self.maximum, self.initial * self.factor ** max(attempt, 0))
        return base * (1 - self.jitter + 2 * self.jitter * rand())


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) and status > 0 else None


def describe_error(exc: BaseException) -> str:
    """A one-line reason for a failed request, worded as the CLI words API errors."""
    from gryvia_cli.kube.errors import translate_api_exception, translate_transport_error

    status = _status_of(exc)
    if status is not None:
        return translate_api_exception(status, getattr(exc, "body", None), resource=None).message
    return translate_transport_error(exc, "the API server").causes[0][:200] or type(exc).__name__


def _noop_state(state: WatchState, detail: str) -> None:
    return None


class ListWatcher:
    """List a collection, then watch it; call back from the thread that runs `run()`.

    `func` is a list function of the kubernetes client (e.g. `CustomObjectsApi.
    list_cluster_custom_object`), `args`/`kwargs` its arguments (selectors included).
    `on_listed(items, resource_version)` gets the whole collection after each (re)list;
    `on_event(event)` each change after it; `on_state(state, detail)` every state change.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *args: Any,
        on_listed: Callable[[list[dict[str, Any]], str], None],
        on_event: Callable[[WatchEvent], None],
        on_state: Callable[[WatchState, str], None] = _noop_state,
        backoff: Backoff | None = None,
        page_size: int = 1000,
        watch_seconds: int = 240,
        request_timeout: tuple[float, float] = (5.0, 60.0),
        **kwargs: Any,
    ) -> None:
        self.func = func
        self.args = args
        self.kwargs = kwargs
        self.on_listed = on_listed
        self.on_event = on_event
        self.on_state = on_state
        self.backoff = backoff or Backoff()
        self.page_size = page_size
        self.watch_seconds = watch_seconds
        self.request_timeout = request_timeout
        self.resource_version = ""
        self.state: WatchState = "connecting"
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._watch: Any = None

    @property
    def stopped(self) -> bool:
        """True once `stop()` was called."""
        return self._stop.is_set()

    def stop(self) -> None:
        """Stop the loop and unblock a pending read; safe from any thread, idempotent."""
        self._stop.set()
        with self._lock:
            watch = self._watch
        if watch is not None:
            watch.stop()

    def _set_state(self, state: WatchState, detail: str = "") -> None:
        if state != self.state or state in ("reconnecting", "failed"):
            self.state = state
            self.on_state(state, detail)

    def list_once(self) -> tuple[list[dict[str, Any]], str]:
        """List the whole collection in pages; return (items, resourceVersion)."""
        items: list[dict[str, Any]] = []
        token = ""
        while True:
            extra: dict[str, Any] = {"limit": self.page_size}
            if token:
                extra["_continue"] = token
            resp = self.func(
                *self.args,
                **self.kwargs,
                **extra,
                _preload_content=False,
                _request_timeout=self.request_timeout,
            )
            try:
                body = json.loads(resp.data)
            finally:
                resp.release_conn()
            items.extend(body.get("items") or [])
            meta = body.get("metadata") or {}
            token = meta.get("continue") or ""
            if not token:
                return items, str(meta.get("resourceVersion") or "")

    def _watch_once(self) -> None:
        from kubernetes import watch

        w = watch.Watch()
        with self._lock:
            if self._stop.is_set():
                return
            self._watch = w
        try:
            stream = w.stream(
                self.func,
                *self.args,
                **self.kwargs,
                resource_version=self.resource_version,
                allow_watch_bookmarks=True,
                timeout_seconds=self.watch_seconds,
                deserialize=False,
                _request_timeout=(self.request_timeout[0], self.watch_seconds + 30),
            )
            for raw in stream:
                self._handle(raw)
                if self._stop.is_set():
                    break
        finally:
            with self._lock:
                self._watch = None

    def _handle(self, raw: dict[str, Any]) -> None:
        kind = raw.get("type")
        obj = raw.get("object") or {}
        version = (obj.get("metadata") or {}).get("resourceVersion")
        if version:
            self.resource_version = str(version)
        if kind in ("ADDED", "MODIFIED", "DELETED"):
            self.on_event(WatchEvent(kind, obj))

    def run(self) -> None:
        """List, then watch until `stop()`; never raises for API or connection failures."""
        failures = 0
        need_list = True
        while not self._stop.is_set():
            try:
                if need_list:
                    items, version = self.list_once()
                    if self._stop.is_set():
                        break
                    self.resource_version = version
                    self.on_listed(items, version)
                    need_list = False
                self._set_state("live")
                failures = 0
                self._watch_once()
            except Exception as exc:
                if self._stop.is_set():
                    break
                status = _status_of(exc)
                if status == _GONE:
                    log.debug("watch expired, relisting: %s", exc)
                    need_list = True
                    continue
                need_list = True
                delay = self.backoff.delay(failures)
                failures += 1
                state: WatchState = "failed" if status in _FATAL else "reconnecting"
                self._set_state(state, f"{describe_error(exc)}; retry in {delay:.1f}s")
                self._stop.wait(delay)
        self._set_state("stopped")


class LineFollower:
    """Stream the lines of a pod container's log; `stop()` ends it from any thread.

    `func` is `CoreV1Api.read_namespaced_pod_log`; with `follow=True` lines arrive as the
    container writes them, until the stream ends or `stop()` is called.
    """

    def __init__(self, func: Callable[..., Any], name: str, namespace: str, **kwargs: Any):
        self.func = func
        self.name = name
        self.namespace = namespace
        self.kwargs = kwargs
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._watch: Any = None

    def stop(self) -> None:
        """Stop streaming; safe from any thread, idempotent."""
        self._stop.set()
        with self._lock:
            watch = self._watch
        if watch is not None:
            watch.stop()

    @property
    def stopped(self) -> bool:
        """True once `stop()` was called."""
        return self._stop.is_set()

    def lines(self) -> Iterator[str]:
        """Yield log lines until the stream ends or `stop()`; API and connection errors
        propagate unless `stop()` caused them."""
        from kubernetes import watch

        w = watch.Watch()
        with self._lock:
            if self._stop.is_set():
                return
            self._watch = w
        try:
            for line in w.stream(self.func, self.name, self.namespace, **self.kwargs):
                if self._stop.is_set():
                    break
                yield line
        except Exception:
            if not self._stop.is_set():
                raise
            # stop() shut the socket under the read: that is how a follow ends
        finally:
            with self._lock:
                self._watch = None
