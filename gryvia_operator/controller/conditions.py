"""Conditions written into another controller's object status (a job's `Stalled`, an idle
policy's `IdleGPUs`): read fresh, changed, and merge-patched through the status subresource
guarded by the resourceVersion read, so a condition another writer added meanwhile is never
dropped (conditions are one list: a merge patch replaces it whole)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gryvia_operator.controller.kubeapi import Conflict, KubeError, NotFound
from gryvia_operator.controller.runtime import Runtime

TRIES = 8
"""Guarded writes tried before giving up (each after a 409)."""

Change = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
"""The conditions as they should be, from the conditions as they are."""


async def update_conditions(
    rt: Runtime, kind: str, name: str, namespace: str, change: Change
) -> bool:
    """Apply `change` to the object's `status.conditions`; True when a write was made, False
    when nothing changed or the object is gone. Raises KubeError when it kept changing."""
    for _ in range(TRIES):
        try:
            fresh = await rt.api.get(kind, name, namespace)
        except NotFound:
            return False
        current = [dict(c) for c in (fresh.get("status") or {}).get("conditions") or []]
        wanted = change(current)
        if wanted == current:
            return False
        patch = {
            "metadata": {"resourceVersion": (fresh.get("metadata") or {}).get("resourceVersion")},
            "status": {"conditions": wanted},
        }
        try:
            await rt.api.patch(kind, name, patch, namespace, subresource="status")
        except Conflict:
            continue
        except NotFound:
            return False
        rt.metrics.writes.labels(kind=kind, verb="status").inc()
        return True
    raise KubeError(409, "Conflict", f"{kind} {namespace}/{name} kept changing: conditions")
