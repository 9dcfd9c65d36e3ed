"""GryviaStorage on the kind controller (always on): each pass reads the StorageClasses, the
claims of all namespaces and the backends' probe claims and quotas once (`before_pass`: a
few LISTs per pass, not per backend), and `reconcile.storage.reconcile_storage` decides.
A pass comes when a backend changes, every second while a probe runs (claims are watched
only with the server-side selector `gryvia.io/job` of job children, `handlers.children`, so
a probe claim's own events reach no handler), when a probe falls due, and at least every
PASS_SECONDS. Probe claims live in the probe namespace: `GRYVIA_STORAGE_PROBE_NAMESPACE`,
else the pod's (`POD_NAMESPACE`, which the chart sets), else `default`.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gryvia_operator.api.attribution import tenant_of
from gryvia_operator.api.storage import LABEL_STORAGE, STORAGE_KIND, GryviaStorage
from gryvia_operator.controller import policies
from gryvia_operator.controller.kindcontroller import KindController, KindSpec, Outcome
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import NAMESPACE_LABELS, NODES, STORAGES
from gryvia_operator.reconcile.storage import (
    ClaimView,
    StorageObserved,
    quota_name,
    reconcile_storage,
)
from gryvia_operator.reconcile.views import NodeView

PASS_SECONDS = 30.0
"""Longest wait between two passes (used and free space follow the claims this often)."""


def probe_namespace() -> str:
    """Where probe claims are made: `GRYVIA_STORAGE_PROBE_NAMESPACE`, else the pod's
    namespace (`POD_NAMESPACE`), else `default`."""
    return os.environ.get("GRYVIA_STORAGE_PROBE_NAMESPACE") or os.environ.get(
        "POD_NAMESPACE", "default"
    )


@dataclass
class PassView:
    """What one pass read for every backend."""

    classes: dict[str, dict[str, Any]] = field(default_factory=dict)
    claims: dict[str, list[ClaimView]] = field(default_factory=lambda: defaultdict(list))
    probes: dict[str, list[ClaimView]] = field(default_factory=lambda: defaultdict(list))
    quotas: dict[str, dict[tuple[str, str], dict[str, str]]] = field(
        default_factory=lambda: defaultdict(dict)
    )


def _ready_node(rt: Runtime) -> str | None:
    """A Ready, schedulable node to pin probe claims to (by name, first)."""
    nodes = [n for n in rt.indices.all_values(NODES) if isinstance(n, NodeView)]
    good = sorted(n.name for n in nodes if n.ready and not n.unschedulable)
    return good[0] if good else None


def tenant_namespaces(rt: Runtime) -> dict[str, list[str]]:
    """The namespaces of each tenant, by the one attribution rule (`api.attribution`)."""
    names = list(policies.tenants(rt))
    out: dict[str, list[str]] = defaultdict(list)
    for ns in sorted(rt.indices.keys(NAMESPACE_LABELS)):
        tenant = tenant_of(str(ns), None, policies.namespace_labels(rt, str(ns)), names)
        if tenant in names:
            out[tenant].append(str(ns))
    return out


class StorageSpecKind(KindSpec[GryviaStorage, StorageObserved]):
    """A backend observes its class, the claims of it, its probe claims and its quotas."""

    info = STORAGE_KIND
    controller = "storage"
    index_id = STORAGES
    children = ()
    idle_seconds = PASS_SECONDS

    def __init__(self) -> None:
        self.view = PassView()
        self.namespace = probe_namespace()

    async def before_pass(self, rt: Runtime) -> None:
        """One LIST of classes, claims and the backends' quotas for the whole pass."""
        view = PassView()
        for sc in await rt.api.list("StorageClass"):
            view.classes[str((sc.get("metadata") or {}).get("name"))] = sc
        for raw in await rt.api.list("PersistentVolumeClaim"):
            owner = ((raw.get("metadata") or {}).get("labels") or {}).get(LABEL_STORAGE)
            claim = ClaimView.from_claim(raw)
            if owner is not None and claim.namespace == self.namespace:
                view.probes[str(owner)].append(claim)
            else:
                view.claims[claim.storage_class].append(claim)
        for quota in await rt.api.list("ResourceQuota", label_selector=LABEL_STORAGE):
            meta = quota.get("metadata") or {}
            hard = dict((quota.get("spec") or {}).get("hard") or {})
            key = (str(meta.get("namespace")), str(meta.get("name")))
            view.quotas[str((meta.get("labels") or {}).get(LABEL_STORAGE))][key] = hard
        self.view = view

    async def observe(self, rt: Runtime, obj: GryviaStorage) -> StorageObserved:
        """The pass's reads for this backend, and the running probe claim's last event."""
        view, cls = self.view, obj.class_name()
        probe = obj.status.probe if obj.status else None
        event = None
        if probe is not None and probe.finished_at is None:
            event = await _last_event(rt, self.namespace, probe.claim)
        quotas = {k: v for k, v in view.quotas.get(obj.name, {}).items() if k[1] == quota_name(obj)}
        return StorageObserved(
            storage_class=view.classes.get(cls),
            claims=tuple(view.claims.get(cls, ())),
            probes=tuple(view.probes.get(obj.name, ())),
            probe_event=event,
            node=_ready_node(rt),
            tenant_namespaces=tenant_namespaces(rt),
            quotas=quotas,
            probe_namespace=self.namespace,
        )

    def reconcile(self, obj: GryviaStorage, observed: StorageObserved, now: datetime) -> Outcome:
        """The plan as an outcome (the class is cluster-scoped, so everything goes by
        namespace)."""
        plan = reconcile_storage(obj, observed, now)
        return Outcome(
            status=plan.status,
            create=plan.create,
            patch_in=plan.patch,
            delete_in=plan.delete,
            requeue_after=plan.requeue_after,
        )


async def _last_event(rt: Runtime, namespace: str, claim: str) -> str | None:
    """The message of the newest event about `claim` (None: none)."""
    events = await rt.api.list(
        "Event",
        namespace,
        field_selector=f"involvedObject.kind=PersistentVolumeClaim,involvedObject.name={claim}",
    )
    if not events:
        return None
    newest = max(events, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
    return str(newest.get("message") or newest.get("reason") or "") or None


def controller(rt: Runtime) -> KindController[GryviaStorage, StorageObserved]:
    """The storage controller over `rt`."""
    return KindController(rt, StorageSpecKind())
