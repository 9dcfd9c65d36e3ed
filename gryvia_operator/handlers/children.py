"""Handlers of a GryviaAIJob's children: index them by owner, queue the owner on any change.

Children are batch Jobs, StatefulSets, Services and PVCs labelled gryvia.io/job. A namespace's
shared data claim (`gryvia-data-<backend>`, label gryvia.io/job empty, no owner) is indexed under
(namespace, its own name); a change to it queues the namespace's waiting jobs.
"""

from __future__ import annotations

from typing import Any

import kopf

from gryvia_operator.api.names import LABEL_JOB
from gryvia_operator.api.storage import LABEL_STORAGE
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import CHILDREN
from gryvia_operator.reconcile.views import ChildView

WATCHED = (
    ("batch", "v1", "jobs", "Job"),
    ("apps", "v1", "statefulsets", "StatefulSet"),
    ("", "v1", "services", "Service"),
    ("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim"),
)
"""(group, version, plural, kind) of every child kind."""


def configure(settings: kopf.OperatorSettings) -> None:
    """Watch only children carrying the gryvia.io/job label (server-side selector)."""
    for group, _version, plural, _kind in WATCHED:
        selector = (group, plural) if group else plural
        settings.watching.label_selectors[selector] = LABEL_JOB


def register(registry: kopf.OperatorRegistry, rt: Runtime) -> None:
    """Register an index and an event handler per child kind."""
    for group, version, plural, kind in WATCHED:
        _register_kind(registry, rt, group, version, plural, kind)


def _register_kind(
    registry: kopf.OperatorRegistry, rt: Runtime, group: str, version: str, plural: str, kind: str
) -> None:
    index_id = CHILDREN[kind]
    api = (group, version, plural) if group else (version, plural)

    @kopf.index(*api, id=index_id, labels={LABEL_JOB: kopf.PRESENT}, registry=registry)
    async def child_index(body: kopf.Body, **_: Any) -> Any:
        """Index a child under its owner job (a shared claim under its own name)."""
        view = ChildView.from_object(body, kind)
        if view.owner_name:
            return {(view.namespace, view.owner_name): view}
        return {(view.namespace, view.name): view} if _shared(body) else {}

    @kopf.on.event(
        *api, id=f"{index_id}_events", labels={LABEL_JOB: kopf.PRESENT}, registry=registry
    )
    async def child_event(type: str, body: kopf.Body, **_: Any) -> None:
        """Queue the owner job."""
        rt.mark_synced()
        view = ChildView.from_object(body, kind)
        key = (kind, view.namespace, view.name)
        if type == "DELETED":
            rt.recent_children.forget(key)
        else:
            rt.recent_children.seen(key, view.resource_version)
        if view.owner_name:
            rt.jobs.add((view.namespace, view.owner_name))
        elif _shared(body):  # jobs waiting for it (to bind, or to exist again)
            for waiting in [k for k in rt.waiting if k[0] == view.namespace]:
                rt.jobs.add(waiting)


def _shared(body: Any) -> bool:
    """Whether `body` is a namespace's shared data claim (`reconcile.children.
    shared_claim_metadata`): label gryvia.io/job empty, gryvia.io/storage set."""
    labels = (body.get("metadata") or {}).get("labels") or {}
    return labels.get(LABEL_JOB) == "" and bool(labels.get(LABEL_STORAGE))
