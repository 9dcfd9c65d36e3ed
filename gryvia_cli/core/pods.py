"""What a pod's container is doing, read from the raw Pod (shared by `gryvia logs`/`--wait`
and the console's log view)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from gryvia_operator.api.names import CONTAINER_NAME

ContainerState = Literal["waiting", "running", "terminated", "unknown"]
_ENDED_PHASES = ("Succeeded", "Failed")


def container_state(pod: Mapping[str, Any], container: str | None) -> tuple[ContainerState, str]:
    """(`waiting`|`running`|`terminated`|`unknown`, reason) of a pod's container: the one
    named `container`, else the first with a status. Without any container status the pod's
    phase decides (ended phases are `terminated`, others `waiting`) and is the reason."""
    status = pod.get("status") or {}
    statuses = status.get("containerStatuses") or []
    chosen = next((s for s in statuses if s.get("name") == container), None) if container else None
    chosen = chosen or (statuses[0] if statuses else None)
    if not chosen:
        phase = str(status.get("phase") or "Pending")
        return ("terminated" if phase in _ENDED_PHASES else "waiting", phase)
    state = chosen.get("state") or {}
    keys: tuple[ContainerState, ...] = ("terminated", "running", "waiting")
    for key in keys:
        if key in state:
            return key, str((state[key] or {}).get("reason") or key)
    return "unknown", ""


def restart_count(pod: Mapping[str, Any], container: str) -> int | None:
    """How often `container` of `pod` restarted (`status.containerStatuses[].restartCount`);
    None when the pod reports no status for it yet. 0 means there is no previous container,
    so no previous log (`kubectl logs --previous` fails then)."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if isinstance(status, Mapping) and status.get("name") == container:
            count = status.get("restartCount")
            return count if isinstance(count, int) else None
    return None


def first_container(pod: Mapping[str, Any]) -> str:
    """Name of the pod's first container; the operator's `trainer` when the spec has none."""
    containers = (pod.get("spec") or {}).get("containers") or []
    return str(containers[0].get("name")) if containers else CONTAINER_NAME
