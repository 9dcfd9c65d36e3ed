"""GryviaGpuNode handlers: index them by node name, re-register the node when one changes.

A hand-made object takes over the node's labels; a deleted auto-registered one comes back.
"""

from __future__ import annotations

from typing import Any

import kopf

from gryvia_operator.api import GROUP, VERSION
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import GPUNODES
from gryvia_operator.reconcile.registration import GpuNodeView

PLURAL = "gryviagpunodes"


def _node_name(body: Any) -> str:
    spec = body.get("spec") or {}
    return str(spec.get("nodeName") or body["metadata"]["name"])


def register(registry: kopf.OperatorRegistry, rt: Runtime) -> None:
    """Register the GryviaGpuNode index and event handler."""

    @kopf.index(GROUP, VERSION, PLURAL, id=GPUNODES, registry=registry)
    async def gpunode_index(body: kopf.Body, **_: Any) -> Any:
        """Index the object under its node name."""
        return {_node_name(body): GpuNodeView.from_object(body)}

    @kopf.on.event(GROUP, VERSION, PLURAL, id="gryvia_gpunode_events", registry=registry)
    async def gpunode_event(type: str, body: kopf.Body, **_: Any) -> None:
        """Queue the node's registration."""
        rt.mark_synced()
        node = _node_name(body)
        rv = str(body.get("metadata", {}).get("resourceVersion", ""))
        if type == "DELETED":
            rt.recent_gpunodes.forget(node)
        else:
            rt.recent_gpunodes.seen(node, rv)
        rt.nodes.add(node)
