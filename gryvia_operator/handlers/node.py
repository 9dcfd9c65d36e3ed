"""Node handlers: index nodes, register GPU nodes, retry waiting jobs when a node changes.

Registration writes the GryviaGpuNode and the node's gryvia.io/ labels.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import kopf

from gryvia_operator.controller.kubeapi import AlreadyExists, KubeError
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import GPUNODES, NODES, PODS_BY_NODE
from gryvia_operator.reconcile.registration import GpuNodeView, registration_for_node

log = logging.getLogger("gryvia.operator.node")
LOOK_AGAIN_SECONDS = 0.5
"""Delay before registering a node again whose GryviaGpuNode appeared while creating it."""


async def reconcile_node(rt: Runtime, name: str) -> None:
    """Register one node by name (the node work queue's handler).

    Raises `kopf.TemporaryError`: with `delay=LOOK_AGAIN_SECONDS` when a GryviaGpuNode of the
    name appeared while it was being created, with `delay=None` (the queue's backoff) when an
    API call or the connection failed.
    """
    started = time.perf_counter()
    result = "ok"
    try:
        await _register(rt, name)
        rt.nodes.forget(name)
    except (KubeError, OSError) as exc:
        result = "error"
        rt.metrics.errors.labels(controller="node").inc()
        raise kopf.TemporaryError(f"node {name}: {exc}", delay=None) from exc
    finally:
        rt.metrics.reconciles.labels(controller="node", result=result).inc()
        rt.metrics.latency.labels(controller="node").observe(time.perf_counter() - started)


async def _register(rt: Runtime, name: str) -> None:
    node = rt.indices.first(NODES, name)
    existing: GpuNodeView | None = rt.recent_gpunodes.get(name) or rt.indices.first(GPUNODES, name)
    if node is None:
        if existing is not None and existing.auto_registered:
            await rt.api.delete("GryviaGpuNode", existing.name)
        return
    held = sum(p.gpus for p in rt.indices.values(PODS_BY_NODE, name) if not p.terminal)
    plan = registration_for_node(node, existing, held)
    if plan.node_labels:
        rt.metrics.writes.labels(kind="Node", verb="patch").inc()
        await rt.api.patch("Node", name, {"metadata": {"labels": plan.node_labels}})
    target = name
    if plan.create is not None:
        rt.metrics.writes.labels(kind="GryviaGpuNode", verb="create").inc()
        try:
            created = await rt.api.create(plan.create)
        except AlreadyExists as exc:
            raise kopf.TemporaryError(
                f"node {name}: a GryviaGpuNode appeared meanwhile", delay=LOOK_AGAIN_SECONDS
            ) from exc
        view = GpuNodeView.from_object(created)
        rt.recent_gpunodes.note(name, created["metadata"]["resourceVersion"], view)
    if plan.spec_patch is not None:
        rt.metrics.writes.labels(kind="GryviaGpuNode", verb="patch").inc()
        await rt.api.patch("GryviaGpuNode", target, plan.spec_patch)
    if plan.status:
        rt.metrics.writes.labels(kind="GryviaGpuNode", verb="status").inc()
        written = await rt.api.patch(
            "GryviaGpuNode", target, {"status": plan.status}, subresource="status"
        )
        view = GpuNodeView.from_object(written)
        rt.recent_gpunodes.note(name, written["metadata"]["resourceVersion"], view)
    if plan.delete and existing is not None:
        rt.metrics.writes.labels(kind="GryviaGpuNode", verb="delete").inc()
        await rt.api.delete("GryviaGpuNode", existing.name)


def register(registry: kopf.OperatorRegistry, rt: Runtime) -> None:
    """Register the node index and event handler."""
    from gryvia_operator.reconcile.views import NodeView

    @kopf.index("v1", "nodes", id=NODES, registry=registry)
    async def node_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Index the node's view."""
        return {name: NodeView.from_node(body)}

    @kopf.on.event("v1", "nodes", id="gryvia_node_events", registry=registry)
    async def node_event(type: str, body: kopf.Body, name: str, **_: Any) -> None:
        """On a real change, retry waiting jobs and queue the registration."""
        rt.mark_synced()
        view = None if type == "DELETED" else NodeView.from_node(body)
        if rt.node_views.get(name) == view:
            return  # a heartbeat: nothing placement or registration reads has changed
        if view is None:
            rt.node_views.pop(name, None)
        else:
            rt.node_views[name] = view
        rt.kick_waiting()
        rt.nodes.add(name)
