"""Handlers of a GryviaAIJob's children: index them by owner, queue the owner on any change.

Children are batch Jobs, StatefulSets, Services and PVCs labelled gryvia.io/job.
"""

from __future__ import annotations

from typing import Any

import kopf

from gryvia_operator.api.names import LABEL_JOB
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
        """Index a child under its owner job."""
        view = ChildView.from_object(body, kind)
        return {(view.namespace, view.owner_name): view} if view.owner_name else {}

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
