"""FakeSource: a ClusterSource over fixed in-memory objects, for rendering and pilot tests.

Watchers list once and then deliver the events that writes (cancel, delete, create) or the
test (`emit`) cause. It never replaces the integration tests against the sandbox.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from gryvia_cli.core.events import sort_events
from gryvia_cli.core.health import Health
from gryvia_cli.core.watching import WatchEvent
from gryvia_cli.errors import GryviaError, NotFoundError
from gryvia_cli.tui.source import LogStream, Runner, Target, WatchCallbacks, WatchKind
from gryvia_operator.api.savedlogs import SavedLog


class _Watcher:
    def __init__(
        self,
        source: FakeSource,
        kind: str,
        callbacks: WatchCallbacks,
        namespace: str | None,
        label_selector: str | None,
    ) -> None:
        self.source, self.kind, self.callbacks = source, kind, callbacks
        self.namespace, self.label_selector = namespace, label_selector
        self._stop = threading.Event()

    def wants(self, obj: dict[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        if self.namespace and meta.get("namespace") != self.namespace:
            return False
        if self.label_selector:
            key, _, value = self.label_selector.partition("=")
            return (meta.get("labels") or {}).get(key) == value
        return True

    def run(self) -> None:
        if self.kind in self.source.forbidden:
            self.callbacks.on_state("forbidden", f"cannot list {self.kind} cluster-wide")
            return
        if self.kind in self.source.failing:
            self.callbacks.on_state("failed", self.source.failing[self.kind])
            self._stop.wait()
            return
        items = [copy.deepcopy(o) for o in self.source.objects.get(self.kind, []) if self.wants(o)]
        if not self._pages(items):
            return
        self.callbacks.on_listed(items, "1")
        self.callbacks.on_state("live", "")
        with self.source.lock:
            self.source.watchers.append(self)
        self._stop.wait()
        with self.source.lock:
            self.source.watchers.remove(self)
        self.callbacks.on_state("stopped", "")

    def _pages(self, items: list[dict[str, Any]]) -> bool:
        """Hand `items` to `on_page` in pages of `source.page_size` when both are set, each
        page after the first once `source.page_gate` opens; False when stopped meanwhile."""
        size, on_page = self.source.page_size, self.callbacks.on_page
        if not size or on_page is None:
            return True
        starts = range(0, len(items), size) if items else range(1)
        for index, start in enumerate(starts):
            while index and not self.source.page_gate.wait(0.05):
                if self._stop.is_set():
                    return False
            on_page(items[start : start + size], index == 0, start + size >= len(items))
        return True

    def stop(self) -> None:
        self._stop.set()

    def kick(self) -> None:
        with self.source.lock:
            self.source.kicks += 1


class _Prober:
    """Reports what the test sets with `FakeSource.set_health`."""

    def __init__(self, source: FakeSource, on_health: Callable[[Health], None]) -> None:
        self.source, self.on_health = source, on_health
        self._stop = threading.Event()

    def run(self) -> None:
        with self.source.lock:
            self.source.probers.append(self)
        self._stop.wait()

    def stop(self) -> None:
        self._stop.set()


class _Lines:
    def __init__(self, lines: list[str]) -> None:
        self._lines = lines
        self._stop = threading.Event()

    def lines(self) -> Iterator[str]:
        yield from self._lines
        self._stop.wait()

    def stop(self) -> None:
        self._stop.set()


class FakeSource:
    """Objects by kind (raw dicts); writes change them and notify watchers."""

    def __init__(
        self,
        objects: dict[str, list[dict[str, Any]]],
        *,
        namespace: str | None = None,
        logs: dict[str, list[str]] | None = None,
        context: str = "fake-cluster",
        context_namespaces: dict[str, str] | None = None,
        previous_logs: dict[str, list[str]] | None = None,
    ) -> None:
        self.context_namespaces = dict(context_namespaces or {})
        """Each context's own namespace (its kubeconfig namespace); `default` when absent."""
        self.objects = {k: [copy.deepcopy(o) for o in v] for k, v in objects.items()}
        self.logs = {pod: list(lines) for pod, lines in (logs or {}).items()}
        self.previous_logs = {pod: list(lines) for pod, lines in (previous_logs or {}).items()}
        """Logs of the containers' instances before their last restart, by pod."""
        self.lock = threading.Lock()
        self.watchers: list[_Watcher] = []
        self.writes: list[tuple[str, str]] = []
        self.forbidden: set[str] = set()
        """Kinds whose watchers report `forbidden` (a user without cluster-wide rights)."""
        self.failing: dict[str, str] = {}
        """Kind -> the error its watcher reports as `failed` (e.g. its CRD not installed)."""
        self.kicks = 0
        self.probers: list[_Prober] = []
        self.saved: dict[tuple[str, str], dict[int, SavedLog]] = {}
        """(namespace, job) -> the saved-logs ConfigMap's entries `saved_logs` returns."""
        self.more_events: list[dict[str, Any]] = []
        """Events `events` returns for the objects they name, besides llama-pretrain's."""
        self._target = Target(context, namespace, "https://fake:6443")
        self.page_size = 0
        """With a size, watchers given `on_page` hand over their lists in pages that size."""
        self.page_gate = threading.Event()
        """Pages after the first wait until this is set (a list held after its first page)."""

    @property
    def target(self) -> Target:
        """Where the fake pretends to point."""
        return self._target

    def now(self) -> datetime:
        """The local clock (the fake's server agrees with it)."""
        return datetime.now(UTC)

    def contexts(self) -> list[str]:
        """Two contexts."""
        return ["fake-cluster", "other-cluster"]

    def retarget(self, *, context: str | None, namespace: str | None) -> FakeSource:
        """Same objects, other target."""
        clone = FakeSource(
            self.objects,
            namespace=namespace,
            logs=self.logs,
            context=context or self._target.context,
            context_namespaces=self.context_namespaces,
            previous_logs=self.previous_logs,
        )
        clone.writes = self.writes
        clone.forbidden = self.forbidden
        clone.failing = self.failing
        clone.saved, clone.more_events = self.saved, self.more_events
        return clone

    def switch_context(self, context: str) -> FakeSource:
        """Same objects, `context` in its own namespace (all namespaces stay all)."""
        own = self.context_namespaces.get(context, "default")
        return self.retarget(
            context=context, namespace=None if self._target.namespace is None else own
        )

    def namespaces(self) -> list[str]:
        """Namespaces of the jobs."""
        return sorted({o["metadata"]["namespace"] for o in self.objects.get("jobs", [])})

    def watcher(
        self,
        kind: WatchKind,
        callbacks: WatchCallbacks,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> _Watcher:
        """A watcher of `kind`."""
        return _Watcher(self, kind, callbacks, namespace, label_selector)

    def prober(self, on_health: Callable[[Health], None]) -> Runner:
        """A prober that reports what `set_health` says."""
        return _Prober(self, on_health)

    def set_health(self, health: Health) -> None:
        """Make every running prober report `health` (from any thread)."""
        with self.lock:
            probers = list(self.probers)
        for prober in probers:
            prober.on_health(health)

    def emit(self, kind: str, event_type: str, obj: dict[str, Any]) -> None:
        """Change an object and tell the watchers (tests call this from any thread)."""
        items = self.objects.setdefault(kind, [])
        key = (obj["metadata"].get("namespace"), obj["metadata"]["name"])
        items[:] = [
            o for o in items if (o["metadata"].get("namespace"), o["metadata"]["name"]) != key
        ]
        if event_type != "DELETED":
            items.append(copy.deepcopy(obj))
        with self.lock:
            watchers = [w for w in self.watchers if w.kind == kind and w.wants(obj)]
        for w in watchers:
            w.callbacks.on_event(WatchEvent(event_type, copy.deepcopy(obj)))  # type: ignore[arg-type]

    def find(self, kind: str, namespace: str, name: str) -> dict[str, Any]:
        """The stored object; NotFoundError when missing."""
        for obj in self.objects.get(kind, []):
            if obj["metadata"]["name"] == name and obj["metadata"].get("namespace") == namespace:
                return obj
        raise NotFoundError(f'job "{name}" not found')

    def events(self, namespace: str, names: Sequence[str]) -> list[dict[str, Any]]:
        """Events of the fake: llama-pretrain's, and `more_events` about `names`; for other
        names the `events` objects about them in `namespace`."""
        more = [e for e in self.more_events if e["involvedObject"]["name"] in names]
        if "llama-pretrain" not in names:
            return more + [
                e
                for e in self.list_events(namespace)
                if (e.get("involvedObject") or {}).get("name") in names
            ]
        return [
            {
                "type": "Normal",
                "reason": "Scheduled",
                "message": "Job scheduled on gpu-h100-0, gpu-h100-1",
                "lastTimestamp": "2026-11-20T09:00:00Z",
                "involvedObject": {"kind": "GryviaAIJob", "name": "llama-pretrain"},
            },
            {
                "type": "Warning",
                "reason": "BackOff",
                "message": "Back-off restarting failed container trainer",
                "lastTimestamp": "2026-11-20T10:15:00Z",
                "involvedObject": {"kind": "Pod", "name": "llama-pretrain-1"},
            },
            *more,
        ]

    def saved_logs(self, namespace: str, job: str) -> dict[int, SavedLog]:
        """What the test put in `saved` for the job ({} when nothing)."""
        with self.lock:
            return dict(self.saved.get((namespace, job), {}))

    def read_log(
        self, namespace: str, pod: str, container: str, *, previous: bool = False
    ) -> list[str]:
        """A whole fake log; the previous one raises like the API server when there is none."""
        if previous:
            if pod not in self.previous_logs:
                raise GryviaError(
                    f'previous terminated container "{container}" in pod "{pod}" not found'
                )
            return list(self.previous_logs[pod])
        return list(self.logs.get(pod, []))

    def list_events(self, namespace: str | None) -> list[dict[str, Any]]:
        """The `events` objects in `namespace` (None = all), oldest first."""
        items = [
            copy.deepcopy(e)
            for e in self.objects.get("events", [])
            if namespace is None or e["metadata"].get("namespace") == namespace
        ]
        return [dict(e) for e in sort_events(items)]

    def get_object(self, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        """A stored object (NotFoundError when missing)."""
        for obj in self.objects.get(kind, []):
            meta = obj["metadata"]
            if meta["name"] == name and (namespace is None or meta.get("namespace") == namespace):
                return copy.deepcopy(obj)
        raise NotFoundError(f'{kind} "{name}" not found')

    def list_objects(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        """The stored objects of `kind` (in `namespace`, None = all)."""
        return [
            copy.deepcopy(o)
            for o in self.objects.get(kind, [])
            if namespace is None or o["metadata"].get("namespace") in (None, namespace)
        ]

    def follow_log(self, namespace: str, pod: str, container: str) -> LogStream:
        """A fake log that stays open until stopped."""
        return _Lines(list(self.logs.get(pod, [])))

    def create_job(self, body: dict[str, Any]) -> str:
        """Store a new job."""
        obj = copy.deepcopy(body)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("namespace", self._target.namespace or "default")
        if "generateName" in meta and "name" not in meta:
            meta["name"] = meta.pop("generateName") + "x1"
        meta.setdefault("creationTimestamp", "2026-11-20T12:00:00Z")
        self.writes.append(("create", f"{meta['namespace']}/{meta['name']}"))
        self.emit("jobs", "ADDED", obj)
        return f"{meta['namespace']}/{meta['name']}"

    def create_config_map(self, body: dict[str, Any]) -> str:
        """Record a ConfigMap write."""
        meta = body.get("metadata") or {}
        ref = f"{meta.get('namespace') or self._target.namespace or 'default'}/{meta.get('name')}"
        self.writes.append(("configmap", ref))
        return ref

    def own_config_map(self, ref: str, jobs: list[str]) -> None:
        """Record the owners set on a ConfigMap."""
        self.writes.append(("own", f"{ref}<-{','.join(jobs)}"))

    def cancel_job(self, namespace: str, name: str) -> None:
        """Set the cancel annotation."""
        obj = copy.deepcopy(self.find("jobs", namespace, name))
        obj["metadata"].setdefault("annotations", {})["gryvia.io/cancel"] = "true"
        self.writes.append(("cancel", f"{namespace}/{name}"))
        self.emit("jobs", "MODIFIED", obj)

    def delete_job(self, namespace: str, name: str) -> None:
        """Remove a job."""
        obj = self.find("jobs", namespace, name)
        self.writes.append(("delete", f"{namespace}/{name}"))
        self.emit("jobs", "DELETED", obj)
