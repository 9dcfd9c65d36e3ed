"""The TUI's data seam: what the console asks of a cluster, as a Protocol.

`KubeSource` (kubesource.py, the console's only importer of `gryvia_cli.kube`) implements it
over the CLI's access layer; tests inject a fake with fixed objects. Every method may block
and is called only from thread workers; write methods raise GryviaError with a message fit
for a notification.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from gryvia_cli.core.health import Health
from gryvia_cli.core.watching import WatchEvent, WatchState
from gryvia_cli.tui.kindnames import Kind
from gryvia_cli.tui.kindnames import ObjectKind as ObjectKind
from gryvia_operator.api.savedlogs import SavedLog

WatchKind = Kind
"""The kinds the console watches: the store's kinds (`kindnames.Kind`), written once.

`ObjectKind`, the kinds it reads on demand, is `kindnames.ObjectKind` (re-exported here)."""


@dataclass(frozen=True)
class Target:
    """Where the console looks: kubeconfig context, namespace (None = all) and server."""

    context: str
    namespace: str | None
    server: str = ""

    @property
    def namespace_label(self) -> str:
        """The namespace, or `all` for every namespace."""
        return self.namespace or "all"


@dataclass(frozen=True)
class WatchCallbacks:
    """What a watcher calls, from its own thread."""

    on_listed: Callable[[list[dict[str, Any]], str], None]
    on_event: Callable[[WatchEvent], None]
    on_state: Callable[[WatchState, str], None]
    on_page: Callable[[list[dict[str, Any]], bool, bool], None] | None = None
    """When given, the list arrives page by page too (`kube.pagedwatch`): `on_page(items,
    first, last)` per page as it is read (`first` starts a list, forgetting an earlier try's
    pages), then `on_listed` with the whole list."""


class Stoppable(Protocol):
    """Something blocking in a worker thread that another thread can end."""

    def stop(self) -> None:
        """End the blocking call soon; safe from any thread."""


class Runner(Stoppable, Protocol):
    """Something a thread worker runs until another thread stops it."""

    def run(self) -> None:
        """Block until stopped."""


class Watcher(Runner, Protocol):
    """A list-then-watch: a Runner that can also be told to reconnect at once."""

    def kick(self) -> None:
        """Drop the open watch (or pending request) and reconnect now, skipping a back-off
        wait; safe from any thread."""


class LogStream(Protocol):
    """A followed container log."""

    def lines(self) -> Iterator[str]:
        """Yield lines (with RFC 3339 timestamps) until the stream ends or is stopped; raises
        GryviaError when the API refuses or the connection breaks."""
        ...

    def stop(self) -> None:
        """End `lines()` soon; safe from any thread."""


class ClusterSource(Protocol):
    """Everything the console reads and writes."""

    @property
    def target(self) -> Target:
        """Current context and namespace."""
        ...

    def now(self) -> datetime:
        """The cluster's time (UTC) for ages: the local clock, corrected by the API server's
        where they differ (`core.serverclock`)."""
        ...

    def contexts(self) -> list[str]:
        """Context names of the kubeconfig."""
        ...

    def retarget(self, *, context: str | None, namespace: str | None) -> ClusterSource:
        """A source for another context (None keeps it) and namespace (None = all)."""
        ...

    def switch_context(self, context: str) -> ClusterSource:
        """A source for `context` in that context's own namespace (the one saved for it, its
        kubeconfig namespace, else `default`); a source on all namespaces stays on all."""
        ...

    def namespaces(self) -> list[str]:
        """Namespace names of the cluster, sorted."""
        ...

    def watcher(
        self,
        kind: WatchKind,
        callbacks: WatchCallbacks,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watcher:
        """A list-then-watch of `kind` (namespaced kinds: `namespace`, None = all; `nodes` are
        Kubernetes Nodes, `gpunodes` GryviaGpuNodes). A cluster-wide watch that RBAC refuses
        reports `forbidden` once and ends."""
        ...

    def prober(self, on_health: Callable[[Health], None]) -> Runner:
        """A connection prober: how the API server answers (`core.health`), reported to
        `on_health` from its thread whenever it changes."""
        ...

    def events(self, namespace: str, names: Sequence[str]) -> list[dict[str, Any]]:
        """Events about the objects `names` in `namespace`, oldest first."""
        ...

    def read_log(
        self, namespace: str, pod: str, container: str, *, previous: bool = False
    ) -> list[str]:
        """The whole log of a container, each line with its timestamp; `previous`: the log
        of the container's instance before its last restart (GryviaError when none)."""
        ...

    def list_events(self, namespace: str | None) -> list[dict[str, Any]]:
        """Every event in `namespace` (None = all namespaces), oldest first."""
        ...

    def get_object(self, kind: ObjectKind, namespace: str | None, name: str) -> dict[str, Any]:
        """One object as the API server stores it (`namespace` None for cluster-scoped
        kinds); NotFoundError when it does not exist."""
        ...

    def list_objects(self, kind: ObjectKind, namespace: str | None = None) -> list[dict[str, Any]]:
        """Every object of `kind` (namespaced kinds: in `namespace`, None = all); raises
        GryviaError (NotInstalledError when the kind's CRD is not installed)."""
        ...

    def follow_log(self, namespace: str, pod: str, container: str) -> LogStream:
        """Follow a container's log (timestamped lines) from its start."""
        ...

    def saved_logs(self, namespace: str, job: str) -> dict[int, SavedLog]:
        """Replica -> the last lines the operator saved from the job's deleted pods (its
        `<job>-logs` ConfigMap); {} when there is none. Raises GryviaError when it cannot
        be read (ForbiddenError without the right to read ConfigMaps)."""
        ...

    def create_job(self, body: dict[str, Any]) -> str:
        """Create a GryviaAIJob; return `namespace/name`."""
        ...

    def create_config_map(self, body: dict[str, Any]) -> str:
        """Create or update a ConfigMap (an imported script's runtime); return `ns/name`."""
        ...

    def own_config_map(self, ref: str, jobs: list[str]) -> None:
        """Make the jobs (`ns/name` each) the owners of ConfigMap `ref` (`ns/name`)."""
        ...

    def cancel_job(self, namespace: str, name: str) -> None:
        """Ask the operator to cancel a job (annotation `gryvia.io/cancel: "true"`)."""
        ...

    def delete_job(self, namespace: str, name: str) -> None:
        """Delete a job (its children are garbage-collected)."""
        ...
