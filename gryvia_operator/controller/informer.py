"""List-and-watch of one resource into indexes, without kopf's per-object machinery.

kopf gives every object a worker (an asyncio task, a queue, handler state, a diff base) and
holds all handlers until each object of each indexed kind has passed through one. For the
kinds a cluster holds by the ten thousand (usage records, the children of every job) that is
~1.5 ms an object at start-up (issue 42: 29 s to ready at 20,000 objects). An `Informer` does
what client-go's informer does: one paged LIST (500 a page, as kubectl and client-go page),
then one WATCH from the list's resourceVersion with bookmarks, each event applied to its
indexes in place; a watch that ends is resumed from the last version seen, and a 410 Gone
(the version compacted away) lists again, reporting what changed meanwhile as events.

Indexes follow kopf's `@kopf.index` rule, so `Indices` serves them the same way: each indexer
maps an object's body to {key: value} ({} when it has nothing to keep), and an index maps a
key to the values of every object that gave that key. The watch stream is read on a thread
(the official client is blocking); its events are applied on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any

from gryvia_operator.controller.kubeapi import KubeApi, KubeError

log = logging.getLogger("gryvia.operator")

Indexer = Callable[[Mapping[str, Any]], Mapping[Any, Any]]
"""An object's body -> {key: value} it contributes to one index."""
OnEvent = Callable[[str, Mapping[str, Any]], Awaitable[Any] | None]
"""Called on the event loop with ("ADDED" | "MODIFIED" | "DELETED", body) for each change, and
with ("", body) for each object of the first list (kopf's event type None); an awaitable it
returns runs as a task of its own (its failure is logged)."""
PAGE = 500
WATCH_SECONDS = 300
"""Server-side length of one watch request (`timeoutSeconds`); it is resumed after."""


class IndexView(Mapping[Any, list[Any]]):
    """One index read-only: key -> the values every object gave that key."""

    def __init__(self, data: dict[Any, dict[str, Any]]) -> None:
        self._data = data

    def __getitem__(self, key: Any) -> list[Any]:
        return list(self._data[key].values())

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._data))

    def __len__(self) -> int:
        return len(self._data)


class Informer:
    """The objects at `path` (a collection path of every namespace) kept in indexes.

    `add_index` names an index and its indexer; each listener (`add_listener`) sees each change
    after the indexes took it; `label_selector` narrows the list and the watch as the API
    server does. `synced` is set after each run's first complete list. Raises nothing from
    `run`: failures are logged and retried with back-off (1 s doubling to 30 s)."""

    def __init__(self, api: KubeApi, path: str, *, label_selector: str = "") -> None:
        self.api, self.path, self.label_selector = api, path, label_selector
        self.indexers: dict[str, Indexer] = {}
        self.listeners: dict[str, OnEvent] = {}
        self._data: dict[str, dict[Any, dict[str, Any]]] = {}
        self._given: dict[str, dict[str, list[Any]]] = {}
        """object id (namespace/name) -> index id -> the keys it gave."""
        self._versions: dict[str, str] = {}
        self.synced = asyncio.Event()
        self.version = ""
        self.task: asyncio.Task[None] | None = None
        self._listed = False
        self._running: set[asyncio.Future[Any]] = set()

    def add_index(self, index_id: str, indexer: Indexer) -> None:
        """Keep index `index_id` by `indexer` (again with the same id: the new indexer; add
        every index before `run`, the objects already held are not indexed again)."""
        self.indexers[index_id] = indexer
        self._data.setdefault(index_id, {})

    def add_listener(self, name: str, listener: OnEvent) -> None:
        """Call `listener` with each change (again with the same name: replaced)."""
        self.listeners[name] = listener

    def index(self, index_id: str) -> IndexView:
        """The live index `index_id` (one of `indexers`)."""
        return IndexView(self._data[index_id])

    def __len__(self) -> int:
        return len(self._versions)

    # the pure part: applying bodies to the indexes

    def apply(self, kind: str, body: Mapping[str, Any]) -> None:
        """Apply one event ("ADDED", "MODIFIED", "DELETED") to the indexes."""
        meta = body.get("metadata") or {}
        oid = _object_id(meta)
        for index_id, keys in self._given.pop(oid, {}).items():
            for key in keys:
                values = self._data[index_id].get(key)
                if values is not None:
                    values.pop(oid, None)
                    if not values:
                        del self._data[index_id][key]
        if kind == "DELETED":
            self._versions.pop(oid, None)
            return
        self._versions[oid] = str(meta.get("resourceVersion") or "")
        given: dict[str, list[Any]] = {}
        for index_id, indexer in self.indexers.items():
            found = indexer(body)
            for key, value in found.items():
                self._data[index_id].setdefault(key, {})[oid] = value
            if found:
                given[index_id] = list(found)
        if given:
            self._given[oid] = given

    def replace(self, items: Sequence[Mapping[str, Any]]) -> list[tuple[str, Mapping[str, Any]]]:
        """Take a complete list in place of what is held; returns the changes it implies
        (objects new or of another resourceVersion, and those gone) as events."""
        seen: set[str] = set()
        changes = [change for body in items for change in self.take(body, seen)]
        return changes + self.drop_unseen(seen)

    def take(
        self, body: Mapping[str, Any], seen: set[str], *, every: bool = False
    ) -> list[tuple[str, Mapping[str, Any]]]:
        """One object of a list (its id added to `seen`): applied when new or of another
        resourceVersion; the change as a one-event list, else [] (`every`: an unchanged
        object too, as "MODIFIED")."""
        meta = body.get("metadata") or {}
        oid = _object_id(meta)
        seen.add(oid)
        before = self._versions.get(oid)
        if before == str(meta.get("resourceVersion") or ""):
            return [("MODIFIED", body)] if every else []
        self.apply("ADDED", body)
        return [("ADDED" if before is None else "MODIFIED", body)]

    def drop_unseen(self, seen: set[str]) -> list[tuple[str, Mapping[str, Any]]]:
        """After a complete list: drop the objects it did not have, as DELETED events."""
        changes: list[tuple[str, Mapping[str, Any]]] = []
        for oid in [o for o in self._versions if o not in seen]:
            namespace, _, name = oid.partition("/")
            gone = {"metadata": {"namespace": namespace or None, "name": name}}
            self.apply("DELETED", gone)
            changes.append(("DELETED", gone))
        return changes

    # the edges: LIST, WATCH

    async def _list(self) -> None:
        """A complete paged LIST applied page by page (a page's objects are dropped once
        applied: the whole list is never held at once); its changes are reported as each
        page comes. The first list of a run reports every object, changed or not, with type
        "" (kopf's None): each run's listeners are new (a standby's registry, then the
        leader's) and see the whole list, as kopf's handlers do at each start."""
        seen: set[str] = set()
        token = ""
        first = not self._listed
        while True:
            query = {"limit": str(PAGE)}
            if token:
                query["continue"] = token
            if self.label_selector:
                query["labelSelector"] = self.label_selector
            reply = await self.api.get_path(self.path, query)
            items = reply.get("items") or []
            changes = [c for body in items for c in self.take(body, seen, every=first)]
            del reply["items"]
            self._report([("", b) for _, b in changes] if first else changes)
            meta = reply.get("metadata") or {}
            token = meta.get("continue") or ""
            if not token:
                break
        self._report(self.drop_unseen(seen))
        self.version = str(meta.get("resourceVersion") or "")
        self._listed = True

    async def run(self) -> None:
        """List (every object reported, as the first list of this run), then watch for ever
        (until cancelled)."""
        delay = 1.0
        relist = True
        self._listed = False
        while True:
            try:
                if relist:
                    await self._list()
                    self.synced.set()
                    relist = False
                relist = await self._watch()
                delay = 1.0
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any failure: back off, then go on
                log.warning("watch of %s failed (%s); again in %.0f s", self.path, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)

    def _report(self, changes: list[tuple[str, Mapping[str, Any]]]) -> None:
        for listener in list(self.listeners.values()):
            for kind, body in changes:
                result = listener(kind, body)
                if inspect.isawaitable(result):  # an async listener: run beside the watch
                    task = asyncio.ensure_future(result)
                    self._running.add(task)
                    task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Future[Any]) -> None:
        self._running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a listener of %s failed: %s", self.path, task.exception())

    def _event(self, event: dict[str, Any]) -> bool:
        """Apply one watch event on the loop; True when the watch must list again."""
        kind, body = event.get("type"), event.get("object") or {}
        if kind == "ERROR":  # 410 Gone: list again; anything else: back off, then resume
            code = int(body.get("code") or 0)
            if code == 410:
                return True
            raise KubeError(code, str(body.get("reason") or ""), str(body.get("message") or ""))
        version = (body.get("metadata") or {}).get("resourceVersion")
        if version:
            self.version = str(version)
        if kind in ("ADDED", "MODIFIED", "DELETED"):
            self.apply(str(kind), body)
            self._report([(str(kind), body)])
        return False

    async def _watch(self) -> bool:
        """One watch request from `self.version`; True when a relist is needed (410 Gone)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bool] = loop.create_future()
        query = {
            "watch": "1",
            "resourceVersion": self.version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(WATCH_SECONDS),
        }
        if self.label_selector:
            query["labelSelector"] = self.label_selector
        stop = threading.Event()

        def deliver(lines: list[bytes]) -> None:
            for line in lines:
                if done.done():
                    return
                try:
                    if self._event(json.loads(line)):
                        done.set_result(True)
                except Exception as exc:  # ends this watch; run() backs off
                    done.set_exception(exc)

        def finish(result: bool | BaseException) -> None:
            if done.done():
                return
            if isinstance(result, BaseException):
                done.set_exception(result)
            else:
                done.set_result(result)

        def read() -> None:
            try:
                for lines in self._stream(query, stop):
                    loop.call_soon_threadsafe(deliver, lines)
                loop.call_soon_threadsafe(finish, False)
            except Exception as exc:  # handed to the loop
                loop.call_soon_threadsafe(finish, exc)

        threading.Thread(target=read, name=f"watch {self.path}", daemon=True).start()
        try:
            return await done
        except KubeError as exc:
            if exc.status == 410:
                return True
            raise
        finally:
            stop.set()

    def _stream(self, query: Mapping[str, str], stop: threading.Event) -> Iterator[list[bytes]]:
        """The watch's lines as they come, a batch per chunk read (blocking; on a thread)."""
        buffer = b""
        with contextlib.closing(self.api.stream(self.path, query, WATCH_SECONDS + 30)) as chunks:
            for chunk in chunks:
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                if lines:
                    yield [line for line in lines if line.strip()]
                if stop.is_set():
                    return


def _object_id(meta: Mapping[str, Any]) -> str:
    """`namespace/name` of an object's metadata (`/name` for a cluster-scoped one)."""
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
