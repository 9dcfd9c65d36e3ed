"""Handlers of a GryviaAIJob's children: index them by owner, queue the owner on any change.

Children are batch Jobs, StatefulSets, Services and PVCs labelled gryvia.io/job. A namespace's
shared data claim (`gryvia-data-<backend>`, label gryvia.io/job empty, no owner) is indexed under
(namespace, its own name); a change to it queues the namespace's waiting jobs.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import kopf

from gryvia_operator.api.names import LABEL_JOB
from gryvia_operator.api.resources import by_kind
from gryvia_operator.api.storage import LABEL_STORAGE
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import CHILDREN
from gryvia_operator.reconcile.views import ChildView

WATCHED = ("Job", "StatefulSet", "Service", "PersistentVolumeClaim")
"""Every child kind (`api.resources` has their paths)."""


def register(registry: kopf.OperatorRegistry, rt: Runtime) -> None:
    """Keep an index and queue owners per child kind. Children are read by list-and-watch
    (`controller.informer`), not kopf: a cluster holds one or more per job (issue 42), and
    kopf's per-object start-up cost made the operator's restart grow with its history."""
    del registry  # nothing of kopf's: kept for the handler modules' one signature
    for kind in WATCHED:
        informer = rt.informer(by_kind(kind).path(), label_selector=LABEL_JOB)
        informer.add_index(CHILDREN[kind], partial(child_index, kind))
        informer.add_listener("children", partial(child_event, rt, kind))


def child_index(kind: str, body: Mapping[str, Any]) -> dict[tuple[str, str], ChildView]:
    """A child under its owner job (a shared claim under its own name; else nothing)."""
    view = ChildView.from_object(body, kind)
    if view.owner_name:
        return {(view.namespace, view.owner_name): view}
    return {(view.namespace, view.name): view} if _shared(body) else {}


def child_event(rt: Runtime, kind: str, type: str, body: Mapping[str, Any]) -> None:
    """Queue the owner job (a shared claim: the namespace's waiting jobs). A child of the
    first list queues its owner in the low lane: the owner's own event has already queued it
    in the normal lane if it needs work, and a cluster's thousands of finished jobs must not
    go ahead of the new ones when a replica starts or takes over."""
    view = ChildView.from_object(body, kind)
    key = (kind, view.namespace, view.name)
    if type == "DELETED":
        rt.recent_children.forget(key)
    else:
        rt.recent_children.seen(key, view.resource_version)
    if view.owner_name:
        rt.jobs.add((view.namespace, view.owner_name), low=type == "")
    elif _shared(body):  # jobs waiting for it (to bind, or to exist again)
        for waiting in [k for k in rt.waiting if k[0] == view.namespace]:
            rt.jobs.add(waiting)


def _shared(body: Any) -> bool:
    """Whether `body` is a namespace's shared data claim (`reconcile.children.
    shared_claim_metadata`): label gryvia.io/job empty, gryvia.io/storage set."""
    labels = (body.get("metadata") or {}).get("labels") or {}
    return labels.get(LABEL_JOB) == "" and bool(labels.get(LABEL_STORAGE))
