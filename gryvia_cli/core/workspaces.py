"""GryviaWorkspace for the CLI and the console, pure: the manifest `gryvia workspace create`
sends, table rows, the detail lines, and the session heartbeat patch."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gryvia_cli.core.manifests import new_object
from gryvia_cli.core.timefmt import age
from gryvia_operator.api.workspace import ANNOTATION_SESSION_AT, GryviaWorkspace

WORKSPACE_COLUMNS = ("NAME", "PHASE", "GPUS", "IDLE-TIMEOUT", "MAX-LIFETIME", "REASON", "AGE")
WORKSPACE_WIDE_COLUMNS = (*WORKSPACE_COLUMNS, "IMAGE", "POD", "RUNS", "LAST-ACTIVITY")


def build_workspace(
    name: str,
    namespace: str,
    *,
    image: str,
    command: list[str] | None = None,
    gpus: int = 0,
    gpu_type: str | None = None,
    cpu: str | None = None,
    memory: str | None = None,
    storage_size: str | None = None,
    storage_class: str | None = None,
    idle_timeout_minutes: int | None = None,
    max_lifetime_hours: float | None = None,
    stopped: bool = False,
    idle_gpu_percent: float | None = None,
) -> dict[str, Any]:
    """The GryviaWorkspace manifest, validated by the model. Raises ValueError naming the
    option and the fix (`--gpu-type` without `--gpus`, a bad quantity)."""
    from pydantic import ValidationError

    if gpu_type and not gpus:
        raise ValueError("--gpu-type needs --gpus N (N >= 1); drop --gpu-type for a CPU workspace")
    if idle_gpu_percent is not None and not gpus:
        raise ValueError("--idle-gpu-percent needs --gpus N (N >= 1): a CPU workspace has no GPUs")
    spec: dict[str, Any] = {"image": image, "gpus": gpus}
    optional = {
        "command": command or None,
        "gpuType": gpu_type,
        "cpu": cpu,
        "memory": memory,
        "idleTimeoutMinutes": idle_timeout_minutes,
        "maxLifetimeHours": max_lifetime_hours,
        "idleGPUActivityPercent": idle_gpu_percent,
    }
    spec |= {k: v for k, v in optional.items() if v is not None}
    if storage_size or storage_class:
        storage: dict[str, Any] = {"size": storage_size or "10Gi"}
        if storage_class:
            storage["storageClassName"] = storage_class
        spec["storage"] = storage
    if stopped:
        spec["stopped"] = True
    body = new_object("GryviaWorkspace", name, spec, namespace)
    try:
        GryviaWorkspace.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        option = {
            "spec.cpu": "--cpu",
            "spec.memory": "--memory",
            "spec.storage.size": "--storage",
            "spec.image": "--image",
        }.get(where, where)
        raise ValueError(f"{option}: {first['msg']}") from None
    return body


def _minutes(ws: GryviaWorkspace) -> str:
    value = ws.spec.idle_timeout_minutes
    return f"{value}m" if value else "-"


def _hours(ws: GryviaWorkspace) -> str:
    value = ws.spec.max_lifetime_hours
    return f"{value:g}h" if value else "-"


def phase_of(ws: GryviaWorkspace) -> str:
    """The phase the operator wrote; `Stopping`/`Starting` while it has not caught up with
    `spec.stopped`, `Pending` before it wrote anything."""
    phase = (ws.status.phase if ws.status else None) or "Pending"
    if ws.spec.stopped and phase != "Stopped":
        return "Stopping"
    if not ws.spec.stopped and phase == "Stopped":
        return "Starting"
    return phase


def workspace_row(ws: GryviaWorkspace, now: datetime) -> list[Any]:
    """NAME, PHASE, GPUS, IDLE-TIMEOUT, MAX-LIFETIME, REASON, AGE."""
    gpus = (
        f"{ws.spec.gpus} {ws.spec.gpu_type}" if ws.spec.gpus and ws.spec.gpu_type else ws.spec.gpus
    )
    reason = (ws.status.stop_reason if ws.status else None) or "-"
    if phase_of(ws) != "Stopped":
        reason = "-"
    created = ws.metadata.creation_timestamp
    return [ws.name, phase_of(ws), gpus, _minutes(ws), _hours(ws), reason, age(created, now)]


def workspace_wide_row(ws: GryviaWorkspace, now: datetime) -> list[Any]:
    """The row plus IMAGE, POD, RUNS, LAST-ACTIVITY (NAMESPACE first with `-A`)."""
    status = ws.status
    last = status.last_activity_at if status else None
    return [
        *workspace_row(ws, now),
        ws.spec.image,
        (status.pod_name if status else None) or "-",
        status.runs if status else 0,
        age(last, now) + " ago" if last else "-",
    ]


def workspace_details(ws: GryviaWorkspace, now: datetime) -> list[tuple[str, str]]:
    """(label, value) lines for `gryvia workspace get` and the console's detail view."""
    spec, status = ws.spec, ws.status
    size = spec.storage.size if spec.storage else "10Gi"
    klass = spec.storage.storage_class_name if spec.storage else None
    resources = ", ".join(
        part
        for part in (
            f"{spec.gpus} GPU(s)" + (f" {spec.gpu_type}" if spec.gpu_type else ""),
            f"cpu {spec.cpu}" if spec.cpu is not None else "",
            f"memory {spec.memory}" if spec.memory is not None else "",
        )
        if part
    )
    lines = [
        ("Name", f"{ws.namespace}/{ws.name}"),
        ("Phase", phase_of(ws)),
        ("Image", spec.image),
        ("Command", " ".join(spec.command) if spec.command else "sleep infinity"),
        ("Resources", resources),
        ("Home", f"{spec.home} on PVC {ws.name}-home ({size}, class {klass or 'default'})"),
        ("Idle timeout", f"{_minutes(ws)} ({idle_rule(ws)})" if spec.idle_timeout_minutes
                         else "none"),
        ("Max lifetime", _hours(ws) if spec.max_lifetime_hours else "none"),
    ]  # fmt: skip
    if status is not None:
        if status.pod_name:
            lines.append(("Pod", status.pod_name))
        if status.started_at:
            lines.append(("Started", f"{age(status.started_at, now)} ago"))
        if status.last_activity_at:
            lines.append(("Last activity", f"{age(status.last_activity_at, now)} ago"))
        if status.stop_reason and phase_of(ws) == "Stopped":
            lines.append(("Stopped by", status.stop_reason))
        lines.append(("Runs", str(status.runs)))
        if status.message:
            lines.append(("Message", status.message))
    return lines


def heartbeat_patch(now: datetime) -> dict[str, Any]:
    """The merge patch an open `gryvia workspace shell` sends every
    `SESSION_HEARTBEAT_SECONDS`: the session annotation set to `now` (aware) in UTC."""
    stamp = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"metadata": {"annotations": {ANNOTATION_SESSION_AT: stamp}}}


def idle_rule(ws: GryviaWorkspace) -> str:
    """What counts as idle for `ws`, in words: no shell session and, for a workspace with
    GPUs, its GPU activity where the operator samples it, else its CPU (docs/workspaces.md)."""
    spec = ws.spec
    cpu = f"CPU at most {spec.idle_cpu_millicores}m"
    if not spec.gpus:
        return f"no shell session, {cpu}"
    gpu = f"GPU activity at most {spec.idle_gpu_activity_percent:g} %"
    return f"no shell session, {gpu} where GPUs are sampled, else {cpu}"
