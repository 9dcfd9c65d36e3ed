"""The real ClusterSource, built on the CLI's Kubernetes access layer (`gryvia_cli.kube`).

The only module of the console that imports `gryvia_cli.kube` (an import-linter contract says
so): every read, write, watch and log stream goes through one `KubeAccess`, the same REST
transport the CLI uses; the rest of the console sees only the `ClusterSource` protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from gryvia_cli.core.events import sort_events
from gryvia_cli.core.health import DEAD_SECONDS, Health
from gryvia_cli.core.paging import PAGE_SIZE, PageBuffer
from gryvia_cli.core.serverclock import ServerClock
from gryvia_cli.kube import resources as r
from gryvia_cli.kube.access import KubeAccess
from gryvia_cli.kube.connect import connect
from gryvia_cli.kube.health import HealthProbe
from gryvia_cli.kube.logfollow import LineFollower
from gryvia_cli.kube.pagedwatch import PagedListWatcher, start_pages
from gryvia_cli.kube.replies import reply_date
from gryvia_cli.kube.watch import ListWatcher
from gryvia_cli.tui.kindnames import CONSOLE_KINDS, KINDS
from gryvia_cli.tui.source import (
    LogStream,
    ObjectKind,
    Runner,
    Target,
    WatchCallbacks,
    Watcher,
    WatchKind,
)
from gryvia_operator.api.names import ANNOTATION_CANCEL
from gryvia_operator.api.savedlogs import SavedLog

_OBJECTS: dict[ObjectKind, r.Resource] = {row.name: row.resource for row in CONSOLE_KINDS}
"""The API resource of every kind the console reads (`kindnames.CONSOLE_KINDS`)."""
_RESOURCES: dict[WatchKind, r.Resource] = {kind: _OBJECTS[kind] for kind in KINDS}
"""The API resource of every kind the console watches."""


class KubeSource:
    """Reads and writes through one KubeAccess; watches through ListWatcher.

    Its access waits `DEAD_SECONDS` for a connection and its TLS handshake (the CLI's 5 s
    would end a handshake with a server 5 s away as "Read timed out", and the top bar would
    say reconnecting where the server is only slow), as long as the prober's deadline."""

    def __init__(
        self,
        access: KubeAccess,
        kubeconfig: Path | None,
        namespace: str | None,
        *,
        timeout: float = 30.0,
        saved_namespaces: dict[str, str] | None = None,
    ) -> None:
        self.access = access
        access.connect_timeout = max(access.connect_timeout, DEAD_SECONDS)
        self.kubeconfig = kubeconfig
        self.timeout = timeout
        self.saved_namespaces = dict(saved_namespaces or {})
        self._target = Target(access.context.name, namespace, access.server)
        self._prefetched: dict[tuple[WatchKind, str | None], PageBuffer] = {}
        self.page_size = PAGE_SIZE
        """Objects per page of the lists shown page by page (kubectl's chunk size)."""
        clock = self.server_clock = ServerClock()
        access.on_reply = lambda reply: clock.note(reply_date(reply))  # no request of its own

    @classmethod
    def open(
        cls,
        kubeconfig: Path | None,
        context: str | None,
        namespace: str | None,
        *,
        all_namespaces: bool,
        saved_namespaces: dict[str, str] | None = None,
        timeout: float = 30.0,
    ) -> KubeSource:
        """Connect to `context` (None = current); namespace from the flag, the saved default,
        the context, else `default`; all namespaces with `all_namespaces`.

        Raises KubeconfigError when the kubeconfig or its credentials do not load.
        """
        from gryvia_cli.kube.config import effective_namespace

        access = connect(kubeconfig, context, timeout=timeout, interactive=False)
        ns = None
        if not all_namespaces:
            ns, _ = effective_namespace(namespace, saved_namespaces or {}, access.context)
        return cls(access, kubeconfig, ns, timeout=timeout, saved_namespaces=saved_namespaces)

    @property
    def target(self) -> Target:
        """Current context and namespace."""
        return self._target

    def now(self) -> datetime:
        """The API server's time (UTC): the local clock corrected by the `Date` header of the
        replies this source already gets (probes, lists, watches; `core.serverclock`)."""
        return self.server_clock.now()

    def contexts(self) -> list[str]:
        """Context names of the kubeconfig (empty inside a pod)."""
        from gryvia_cli.kube.config import context_names

        return context_names(self.kubeconfig)

    def retarget(self, *, context: str | None, namespace: str | None) -> KubeSource:
        """A source for another context (None keeps this one) and namespace (None = all)."""
        saved = self.saved_namespaces
        if context is None or context == self._target.context:
            return KubeSource(
                self.access,
                self.kubeconfig,
                namespace,
                timeout=self.timeout,
                saved_namespaces=saved,
            )
        access = connect(self.kubeconfig, context, timeout=self.timeout, interactive=False)
        return KubeSource(
            access, self.kubeconfig, namespace, timeout=self.timeout, saved_namespaces=saved
        )

    def switch_context(self, context: str) -> KubeSource:
        """A source for `context` in its own namespace (saved default, kubeconfig, `default`);
        all namespaces stay all. Raises KubeconfigError when the context does not load."""
        from gryvia_cli.kube.config import effective_namespace

        access = connect(self.kubeconfig, context, timeout=self.timeout, interactive=False)
        namespace = None
        if self._target.namespace is not None:
            namespace, _ = effective_namespace(None, self.saved_namespaces, access.context)
        return KubeSource(
            access,
            self.kubeconfig,
            namespace,
            timeout=self.timeout,
            saved_namespaces=self.saved_namespaces,
        )

    def prefetch(self, kind: WatchKind, namespace: str | None) -> None:
        """Start listing `kind` in `namespace` (None: all) now, page by page on a daemon
        thread (`kube.pagedwatch.start_pages`): `gryvia tui` calls it before loading Textual,
        so the first view's pages are on the network while the UI starts. The first watcher
        of that kind and namespace without selectors takes its pages instead of listing
        again."""
        buffer = start_pages(self.access, _RESOURCES[kind], namespace, page_size=self.page_size)
        self._prefetched[(kind, namespace)] = buffer

    def namespaces(self) -> list[str]:
        """Namespace names, sorted."""
        items = self.access.items(r.NAMESPACE)
        return sorted(str((i.get("metadata") or {}).get("name")) for i in items)

    def watcher(
        self,
        kind: WatchKind,
        callbacks: WatchCallbacks,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watcher:
        """A ListWatcher of `kind` over this source's access; a PagedListWatcher (pages of
        500 to `callbacks.on_page` as they arrive) when `on_page` is given or `prefetch`
        started this kind and namespace (without selectors), whose pages it then takes."""
        prepaged = None
        if label_selector is None and field_selector is None:
            prepaged = self._prefetched.pop((kind, namespace), None)
        common: dict[str, Any] = {
            "on_listed": callbacks.on_listed,
            "on_event": callbacks.on_event,
            "on_state": callbacks.on_state,
            "label_selector": label_selector,
            "field_selector": field_selector,
        }
        if callbacks.on_page is None and prepaged is None:
            return ListWatcher(self.access, _RESOURCES[kind], namespace, **common)
        return PagedListWatcher(
            self.access,
            _RESOURCES[kind],
            namespace,
            on_page=callbacks.on_page or (lambda items, first, last: None),
            prepaged=prepaged,
            page_size=self.page_size,
            **common,
        )

    def prober(self, on_health: Callable[[Health], None]) -> Runner:
        """A HealthProbe of this source's API server (`/version` every few seconds, with a
        deadline of `DEAD_SECONDS`)."""
        return HealthProbe(self.access, on_health, deadline=DEAD_SECONDS)

    def events(self, namespace: str, names: Sequence[str]) -> list[dict[str, Any]]:
        """Events about `names` in `namespace`, oldest first."""
        out: list[dict[str, Any]] = []
        for name in names:
            out += self.access.items(
                r.EVENT, namespace, field_selector=f"involvedObject.name={name}"
            )

        return [dict(e) for e in sort_events(out)]

    def read_log(
        self, namespace: str, pod: str, container: str, *, previous: bool = False
    ) -> list[str]:
        """A container's whole log, lines with timestamps (`previous`: before its restart)."""
        response = self.access.pod_log(
            pod, namespace, container=container, timestamps=True, previous=previous
        )
        try:
            data = response.read()
        finally:
            response.release_conn()
        return bytes(data).decode("utf-8", "replace").splitlines()

    def list_events(self, namespace: str | None) -> list[dict[str, Any]]:
        """Every event in `namespace` (None = all), oldest first; read 500 at a time."""
        from gryvia_cli.kube.paging import list_all

        return [dict(e) for e in sort_events(list_all(self.access, r.EVENT, namespace))]

    def get_object(self, kind: ObjectKind, namespace: str | None, name: str) -> dict[str, Any]:
        """One object of `kind` (NotFoundError when missing)."""
        res = _OBJECTS[kind]
        return self.access.get(res, name, namespace if res.namespaced else None)

    def list_objects(self, kind: ObjectKind, namespace: str | None = None) -> list[dict[str, Any]]:
        """Every object of `kind` (in `namespace` for namespaced kinds, None = all), read 500
        at a time."""
        from gryvia_cli.kube.paging import list_all

        res = _OBJECTS[kind]
        return list_all(self.access, res, namespace if res.namespaced else None)

    def follow_log(self, namespace: str, pod: str, container: str) -> LogStream:
        """Follow a container's log with timestamps."""
        return LineFollower(self.access, pod, namespace, container=container, timestamps=True)

    def saved_logs(self, namespace: str, job: str) -> dict[int, SavedLog]:
        """The job's saved-logs ConfigMap, parsed (`views.savedlogs.fetch_saved_logs`)."""
        from gryvia_cli.views.savedlogs import fetch_saved_logs

        return fetch_saved_logs(self.access, namespace, job)

    def create_job(self, body: dict[str, Any]) -> str:
        """Create a GryviaAIJob in its namespace (or the target's, or `default`)."""
        meta = body.setdefault("metadata", {})
        ns = meta.get("namespace") or self._target.namespace or "default"
        meta["namespace"] = ns
        created = self.access.create(r.AIJOB, body, ns)
        return f"{ns}/{(created.get('metadata') or {}).get('name') or meta.get('name')}"

    def create_config_map(self, body: dict[str, Any]) -> str:
        """Server-side apply the ConfigMap in its namespace (or the target's, or `default`)."""
        meta = body.setdefault("metadata", {})
        ns = meta.get("namespace") or self._target.namespace or "default"
        meta["namespace"] = ns
        self.access.apply(r.CONFIG_MAP, body, ns)
        return f"{ns}/{meta.get('name')}"

    def own_config_map(self, ref: str, jobs: list[str]) -> None:
        """Read the jobs' uids and set them as the ConfigMap's ownerReferences."""
        from gryvia_cli.sbatch.launcher import runtime_owners

        ns, _, name = ref.partition("/")
        objects = [
            self.access.get(r.AIJOB, job.partition("/")[2], job.partition("/")[0]) for job in jobs
        ]
        self.access.merge_patch(r.CONFIG_MAP, name, ns, runtime_owners(objects))

    def cancel_job(self, namespace: str, name: str) -> None:
        """Merge-patch the annotation `gryvia.io/cancel: "true"` onto the job."""
        patch = {"metadata": {"annotations": {ANNOTATION_CANCEL: "true"}}}
        self.access.merge_patch(r.AIJOB, name, namespace, patch)

    def delete_job(self, namespace: str, name: str) -> None:
        """Delete the job (children are garbage-collected)."""
        self.access.delete(r.AIJOB, name, namespace)
