"""The state the handlers share while the operator runs.

API access, indexes, work queues, recent writes, metrics, readiness, and the clock.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from gryvia_operator.api.resources import by_kind
from gryvia_operator.controller.informer import Informer
from gryvia_operator.controller.kubeapi import KubeApi
from gryvia_operator.controller.metrics import Metrics
from gryvia_operator.controller.store import Indices, Recent
from gryvia_operator.controller.stripeapi import StripeGateway
from gryvia_operator.controller.watchprobe import WatchHealth
from gryvia_operator.controller.workqueue import WorkQueue
from gryvia_operator.reconcile.config import ReconcileConfig
from gryvia_operator.reconcile.registration import GpuNodeView
from gryvia_operator.reconcile.status import JobEvent
from gryvia_operator.reconcile.views import ChildView, NodeView
from gryvia_operator.reconcile.workspace_gpu import WorkspaceGpu, WorkspaceKey

log = logging.getLogger("gryvia.operator")


def _report_end(task: asyncio.Task[None]) -> None:
    """Log a background loop that ended with an exception (its work has stopped)."""
    if task.cancelled() or task.exception() is None:
        return
    log.error(
        "background loop %s stopped: %s",
        task.get_name(),
        task.exception(),
        exc_info=task.exception(),
    )


JobKey = tuple[str, str]
"""(namespace, name) of a GryviaAIJob."""
ChildKey = tuple[str, str, str]
"""(kind, namespace, name) of a child object."""


def utc_now() -> datetime:
    """The wall clock, in UTC."""
    return datetime.now(UTC)


def post_with_kopf(obj: Mapping[str, Any], event: JobEvent) -> None:
    """Post a Kubernetes Event through kopf's background poster (never blocks)."""
    import kopf

    try:
        kopf.event(
            cast(Any, dict(obj)), type=event.type, reason=event.reason, message=event.message
        )
    except LookupError:  # outside kopf's context (tests): log instead
        log.info("event %s %s: %s", event.type, event.reason, event.message)


@dataclass
class Runtime:
    """Shared state of one operator process."""

    api: KubeApi
    config: ReconcileConfig = field(default_factory=ReconcileConfig)
    metrics: Metrics = field(default_factory=Metrics)
    job_workers: int = 16
    node_workers: int = 2
    clock: Callable[[], datetime] = utc_now
    post_event: Callable[[Mapping[str, Any], JobEvent], None] = post_with_kopf
    indices: Indices = field(default_factory=Indices)
    jobs: WorkQueue[JobKey] = field(default_factory=lambda: WorkQueue("aijob"))
    nodes: WorkQueue[str] = field(default_factory=lambda: WorkQueue("node"))
    recent_jobs: Recent[JobKey, dict[str, Any]] = field(default_factory=Recent)
    recent_children: Recent[ChildKey, ChildView] = field(default_factory=Recent)
    recent_gpunodes: Recent[str, GpuNodeView] = field(default_factory=Recent)
    waiting: set[JobKey] = field(default_factory=set)
    """Jobs no node fits yet: retried on any node or GPU pod change."""
    node_views: dict[str, NodeView] = field(default_factory=dict)
    """Last seen view of every node, to tell real changes from heartbeats."""
    workspace_gpus: dict[WorkspaceKey, WorkspaceGpu] = field(default_factory=dict)
    """The GPU sampler's last reading of each GPU workspace (`--enable-gpu-metrics`), which
    the workspace controller judges idleness by (`reconcile.workspace_gpu`)."""
    stripe: StripeGateway | None = None
    """The Stripe seam (`--stripe`): pushes of Finalized invoices and webhook events."""
    synced: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once every watched kind has been listed (the first gated kopf handler ran)."""
    webhook_ready: bool = True
    watch_health: WatchHealth | None = None
    """When the API server last answered this replica's watch probe (None: no probe)."""
    """False until the webhook server listens (True when there is none)."""
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    informers: dict[tuple[str, str], Informer] = field(default_factory=dict)
    """The kinds read by list-and-watch instead of kopf, by (collection path, label selector)."""
    optional_informers: set[tuple[str, str]] = field(default_factory=set)
    """The keys of `informers` whose first list start-up does not wait for."""
    acting: bool = False
    """True once this replica reconciles (its caches synced with workers to start): a
    standby's listeners write nothing."""
    on_synced: Callable[[], None] | None = None
    """Called once when caches are synced, inside a kopf handler's context (workers started
    there inherit kopf's event-posting context)."""

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        """Run a background loop for the operator's lifetime (cancelled at shutdown); one that
        ends with an exception is logged by `name` at once, not lost with its task. Returns
        the task."""
        task = asyncio.create_task(coro, name=name)
        task.add_done_callback(_report_end)
        self.tasks.append(task)
        return task

    def informer(self, path: str, label_selector: str = "", *, awaited: bool = True) -> Informer:
        """The one informer of `path` (every namespace) and `label_selector`, made on the
        first ask; `start_informers` runs it. `awaited=False`: start-up does not wait for its
        first list (a kind of another project, such as Kueue's Workloads, whose CRD may be
        missing: its readers fall back to a LIST until `synced` is set)."""
        key = (path, label_selector)
        if key not in self.informers:
            self.informers[key] = Informer(self.api, path, label_selector=label_selector)
        if not awaited:
            self.optional_informers.add(key)
        return self.informers[key]

    def job_informer(self) -> Informer:
        """The one list-and-watch of GryviaAIJobs in every namespace (the job index and each
        reader of job events add theirs to it)."""
        return self.informer(by_kind("GryviaAIJob").path())

    async def start_informers(self) -> None:
        """Run every informer not running yet (as a task of `spawn`), give their indexes to
        `indices`, and return once each has listed: called from kopf's startup, before kopf
        watches anything, so no handler sees an index before its first list is complete."""
        for informer in self.informers.values():
            for index_id in informer.indexers:
                self.indices.attach({index_id: informer.index(index_id)})
            if informer.task is None or informer.task.done():
                informer.synced.clear()
                informer.task = self.spawn(informer.run(), f"informer {informer.path}")
        awaited = [i for k, i in self.informers.items() if k not in self.optional_informers]
        await asyncio.gather(*(i.synced.wait() for i in awaited))

    def mark_synced(self) -> None:
        """Record that kopf released its handlers: every index is populated."""
        if not self.synced.is_set():
            self.synced.set()
            self.acting = self.on_synced is not None
            log.info("caches synced; %s", "reconciling" if self.on_synced else "standing by")
            if self.on_synced is not None:
                self.on_synced()

    @property
    def ready(self) -> bool:
        """True when caches are synced and the webhook (if any) is serving."""
        return self.synced.is_set() and self.webhook_ready

    def kick_waiting(self) -> None:
        """Retry placement of every job waiting for nodes, now."""
        for key in list(self.waiting):
            self.jobs.add(key)

    def update_gauges(self) -> None:
        """Refresh gauges read at scrape time."""
        self.metrics.queue_depth.labels(queue="aijob").set(len(self.jobs))
        self.metrics.queue_depth.labels(queue="node").set(len(self.nodes))
        self.metrics.queue_depth.labels(queue="waiting_for_nodes").set(len(self.waiting))
