"""GryviaWorkspace, pure: the home PVC and the pod it wants, and each pass's decision (create,
delete, stop for idleness or lifetime, status).

Rules (docs/workspaces.md):
- one pod `<name>-0` (restartPolicy Always) and one PVC `<name>-home` mounted at `spec.home`,
  which is also the container's HOME and working directory; both carry the owner reference,
  so deleting the workspace deletes them. Stopping deletes the pod only.
- the current run starts when the pod is first seen Running after a stop (or ever); `runs`
  counts the starts.
- last activity = the latest of: the run's start, the session heartbeat (annotation
  `gryvia.io/workspace-session-at`, refreshed by `gryvia workspace shell` while a session is
  open), and, for a workspace with GPUs that the GPU sampler reads (`Observed.gpu`), the last
  reading of its GPUs above `idleGPUActivityPercent` (its CPU does not count then), else the
  last pass that saw the pod's CPU above `idleCPUMillicores` (metrics.k8s.io; without a
  metrics API only sessions count).
- idle stop: `idleTimeoutMinutes` set and now - last activity >= it; lifetime stop:
  `maxLifetimeHours` set and now - run start >= it. Both only while Running; the operator then
  sets `spec.stopped: true` (stopped, not deleted) with `status.stopReason` Idle/MaxLifetime.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gryvia_operator.api.controlled import owner_reference
from gryvia_operator.api.gputype import gpu_selector
from gryvia_operator.api.names import LABEL_MANAGED_BY, MANAGED_BY
from gryvia_operator.api.workspace import (
    ANNOTATION_SESSION_AT,
    DEFAULT_COMMAND,
    LABEL_WORKSPACE,
    GryviaWorkspace,
    StopReason,
    pod_name,
    pvc_name,
)
from gryvia_operator.reconcile.placement import cpu_only_affinity
from gryvia_operator.reconcile.workspace_gpu import WorkspaceGpu

CONTAINER = "workspace"
HOME_VOLUME = "home"


def _metadata(ws: GryviaWorkspace, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": ws.namespace,
        "labels": {LABEL_WORKSPACE: ws.name, LABEL_MANAGED_BY: MANAGED_BY},
        "ownerReferences": [owner_reference(ws)],
    }


def build_pvc(ws: GryviaWorkspace) -> dict[str, Any]:
    """The home PVC `<name>-home`: ReadWriteOnce, `spec.storage.size` (default 10Gi), the
    storage class when one is named."""
    storage = ws.spec.storage
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": str(storage.size if storage else "10Gi")}},
    }
    if storage and storage.storage_class_name:
        spec["storageClassName"] = storage.storage_class_name
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": _metadata(ws, pvc_name(ws.name)),
        "spec": spec,
    }


def build_pod(ws: GryviaWorkspace) -> dict[str, Any]:
    """The workspace pod `<name>-0`: one container `workspace` running `spec.command` (default
    `sleep infinity`) in `spec.home` with HOME there, the home PVC mounted there, CPU/memory
    as request and limit, `nvidia.com/gpu` and the gryvia.io/gpu selector when GPUs are asked
    for, else the CPU-node preference jobs get."""
    spec = ws.spec
    limits: dict[str, str] = {}
    if spec.cpu is not None:
        limits["cpu"] = str(spec.cpu)
    if spec.memory is not None:
        limits["memory"] = str(spec.memory)
    if spec.gpus:
        limits["nvidia.com/gpu"] = str(spec.gpus)
    container: dict[str, Any] = {
        "name": CONTAINER,
        "image": spec.image,
        "command": list(spec.command or DEFAULT_COMMAND),
        "workingDir": spec.home,
        "env": [{"name": "HOME", "value": spec.home}],
        "volumeMounts": [{"name": HOME_VOLUME, "mountPath": spec.home}],
        "stdin": True,
        "tty": True,
    }
    if limits:
        container["resources"] = {"limits": limits, "requests": dict(limits)}
    pod: dict[str, Any] = {
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 5,
        "containers": [container],
        "volumes": [
            {"name": HOME_VOLUME, "persistentVolumeClaim": {"claimName": pvc_name(ws.name)}}
        ],
    }
    if spec.gpus and gpu_selector(spec.gpu_type):
        pod["nodeSelector"] = gpu_selector(spec.gpu_type)
    if not spec.gpus:
        pod["affinity"] = cpu_only_affinity(None)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _metadata(ws, pod_name(ws.name)),
        "spec": pod,
    }


def parse_time(text: object) -> dt.datetime | None:
    """An RFC 3339 timestamp as an aware datetime; None when empty or malformed."""
    if isinstance(text, dt.datetime):
        return text if text.tzinfo else text.replace(tzinfo=dt.UTC)
    if not isinstance(text, str) or not text:
        return None
    try:
        out = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return out if out.tzinfo else out.replace(tzinfo=dt.UTC)


def rfc3339(value: dt.datetime) -> str:
    """`value` in UTC as `YYYY-MM-DDTHH:MM:SSZ`."""
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Observed:
    """What one pass sees: the pod (None: absent), whether the PVC exists, the pod's CPU use
    in millicores (None: no metrics API, or no sample yet), and the GPU sampler's recent
    reading of its GPUs (None: none, or not a GPU workspace)."""

    pod: Mapping[str, Any] | None = None
    pvc: bool = False
    cpu_millicores: float | None = None
    gpu: WorkspaceGpu | None = None


@dataclass
class Decision:
    """What the handler does this pass: create the PVC/pod, delete the pod, set
    `spec.stopped: true` (`stop`: why), and the status to write."""

    create_pvc: bool = False
    create_pod: bool = False
    delete_pod: bool = False
    stop: StopReason | None = None
    status: dict[str, Any] = field(default_factory=dict)


def _pod_phase(pod: Mapping[str, Any] | None) -> str:
    if pod is None:
        return ""
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    return str((pod.get("status") or {}).get("phase") or "Pending")


def stop_due(
    ws: GryviaWorkspace, started: dt.datetime, last_activity: dt.datetime, now: dt.datetime
) -> StopReason | None:
    """MaxLifetime when `maxLifetimeHours` have passed since `started`, else Idle when
    `idleTimeoutMinutes` have passed since `last_activity`, else None."""
    spec = ws.spec
    hours, minutes = spec.max_lifetime_hours, spec.idle_timeout_minutes
    if hours is not None and now - started >= dt.timedelta(hours=hours):
        return "MaxLifetime"
    if minutes is not None and now - last_activity >= dt.timedelta(minutes=minutes):
        return "Idle"
    return None


def next_check(ws: GryviaWorkspace, status: Mapping[str, Any], now: dt.datetime) -> float | None:
    """Seconds until the earliest stop could fall due for a Running workspace (None: never)."""
    if status.get("phase") != "Running":
        return None
    started = parse_time(status.get("startedAt")) or now
    last = parse_time(status.get("lastActivityAt")) or started
    due: list[dt.datetime] = []
    if ws.spec.max_lifetime_hours is not None:
        due.append(started + dt.timedelta(hours=ws.spec.max_lifetime_hours))
    if ws.spec.idle_timeout_minutes is not None:
        due.append(last + dt.timedelta(minutes=ws.spec.idle_timeout_minutes))
    return max(0.0, (min(due) - now).total_seconds()) if due else None


def decide(ws: GryviaWorkspace, observed: Observed, now: dt.datetime) -> Decision:
    """One pass over workspace `ws` at `now` (aware, UTC): see the module's rules.

    The status keeps `startedAt`, `runs` and `lastActivityAt` across passes from `ws.status`;
    the decision never reads a clock.
    """
    before = ws.status.model_dump(mode="json", by_alias=True) if ws.status else {}
    was_running = before.get("phase") == "Running"
    status: dict[str, Any] = {
        "podName": pod_name(ws.name),
        "pvcName": pvc_name(ws.name),
        "runs": int(before.get("runs") or 0),
        "startedAt": before.get("startedAt"),
        "stoppedAt": before.get("stoppedAt"),
        "lastActivityAt": before.get("lastActivityAt"),
        "stopReason": before.get("stopReason"),
    }
    out = Decision(status=status)
    pod_phase = _pod_phase(observed.pod)
    if ws.spec.stopped:
        out.delete_pod = pod_phase not in ("", "Terminating")
        if before.get("phase") != "Stopped":
            status["stoppedAt"] = rfc3339(now)
            status["stopReason"] = before.get("stopReason") if not was_running else None
            status["stopReason"] = status["stopReason"] or "User"
        status["phase"] = "Stopped"
        status["message"] = _stopped_message(status["stopReason"], ws)
        return out
    if before.get("phase") == "Stopped" or (before.get("stopReason") and not was_running):
        status["stopReason"] = None
    out.create_pvc = not observed.pvc
    if pod_phase == "Running":
        started = parse_time(before.get("startedAt")) if was_running else None
        if started is None:
            started = now
            status["runs"] += 1
            status["startedAt"] = rfc3339(now)
            status["stopReason"] = None
        last = max(started, parse_time(before.get("lastActivityAt")) or started)
        session = parse_time((ws.metadata.annotations or {}).get(ANNOTATION_SESSION_AT))
        if session is not None and session > last:
            last = min(session, now)
        gpu, cpu = observed.gpu, observed.cpu_millicores
        if ws.spec.gpus and gpu is not None:  # GPU readings: only GPU activity counts
            if gpu.active_at is not None and gpu.active_at > last:
                last = min(gpu.active_at, now)
        elif cpu is not None and cpu > ws.spec.idle_cpu_millicores:
            last = now
        status["lastActivityAt"] = rfc3339(last)
        reason = stop_due(ws, started, last, now)
        if reason is not None:
            out.stop, out.delete_pod = reason, True
            status.update(phase="Stopped", stopReason=reason, stoppedAt=rfc3339(now))
            status["message"] = _stopped_message(reason, ws)
            return out
        status["phase"] = "Running"
        status["message"] = f"pod {pod_name(ws.name)} is running"
        return out
    if pod_phase in ("Succeeded", "Failed"):
        out.delete_pod = True  # recreated on the next pass
        status["message"] = f"pod {pod_name(ws.name)} ended ({pod_phase}); starting it again"
    elif pod_phase == "":
        out.create_pod = True
        status["message"] = f"creating pod {pod_name(ws.name)}"
    else:
        status["message"] = f"pod {pod_name(ws.name)} is {pod_phase}"
    if was_running:
        status["stoppedAt"] = rfc3339(now)
    status["phase"] = "Pending"
    return out


def _stopped_message(reason: str | None, ws: GryviaWorkspace) -> str:
    if reason == "Idle":
        return (
            f"stopped: idle for {ws.spec.idle_timeout_minutes} minute(s); "
            f"'gryvia workspace start {ws.name}' starts it again"
        )
    if reason == "MaxLifetime":
        return (
            f"stopped: ran for its maximum lifetime of {ws.spec.max_lifetime_hours:g} hour(s); "
            f"'gryvia workspace start {ws.name}' starts it again"
        )
    return f"stopped; 'gryvia workspace start {ws.name}' starts it again"
