"""GryviaWorkspace: an interactive development pod with a persistent home directory."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StrictBool, StringConstraints

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    Conditions,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeInt32,
    Percent,
    PositiveInt32,
    PrinterColumn,
    Str63,
    Str253,
    Str1024,
)
from gryvia_operator.api.quantity import Quantity

WorkspacePhase = Literal["Pending", "Running", "Stopped"]
StopReason = Literal["User", "Idle", "MaxLifetime"]

ANNOTATION_SESSION_AT = "gryvia.io/workspace-session-at"
"""RFC 3339 UTC time `gryvia workspace shell` last refreshed while a session was open (its
heartbeat, every `SESSION_HEARTBEAT_SECONDS`)."""
SESSION_HEARTBEAT_SECONDS = 20
"""How often an open `gryvia workspace shell` refreshes ANNOTATION_SESSION_AT."""
LABEL_WORKSPACE = "gryvia.io/workspace"
"""Label on a workspace's pod and PVC: the workspace's name."""
DEFAULT_HOME = "/home/gryvia"
DEFAULT_COMMAND = ("sleep", "infinity")
DEFAULT_IDLE_GPU_PERCENT = 5.0
"""`idleGPUActivityPercent` when unset."""


class WorkspaceStorage(GryviaModel):
    """The home directory's PersistentVolumeClaim `<name>-home` (ReadWriteOnce)."""

    size: Quantity = "10Gi"
    """Requested size."""
    storage_class_name: Str253 | None = None
    """StorageClass (unset: the cluster's default class)."""


class GryviaWorkspaceSpec(GryviaModel):
    """What the workspace pod runs, what it holds, and when it stops by itself."""

    image: Annotated[str, StringConstraints(min_length=1, max_length=1024)]
    """Container image."""
    command: list[Str1024] | None = None
    """Container command (unset: `sleep infinity`, so the pod waits for shells)."""
    gpus: NonNegativeInt32 = 0
    """`nvidia.com/gpu` units of the pod (0: a CPU-only workspace)."""
    gpu_type: Str63 | None = None
    """GPU type (node label gryvia.io/gpu), when gpus > 0."""
    cpu: Quantity | None = None
    """CPU request and limit (e.g. 2, 500m)."""
    memory: Quantity | None = None
    """Memory request and limit (e.g. 8Gi)."""
    home: Annotated[str, StringConstraints(pattern=r"^/.*", max_length=1024)] = DEFAULT_HOME
    """Where the home PVC is mounted; also the container's HOME and working directory."""
    storage: WorkspaceStorage | None = None
    """The home PVC (unset: 10Gi of the default class). It is kept while the workspace is
    stopped and deleted with the workspace."""
    stopped: StrictBool = False
    """Desired state: true deletes the pod (the PVC stays); false (re)creates it. The operator
    sets it to true when the idle timeout or the maximum lifetime passes."""
    idle_timeout_minutes: PositiveInt32 | None = None
    """Stop after this many minutes idle: no shell session heartbeat and, for a workspace with
    GPUs that the operator samples, no GPU activity above `idleGPUActivityPercent`, else no
    CPU use above `idleCPUMillicores` (docs/workspaces.md). Unset: never for idleness."""
    idle_cpu_millicores: NonNegativeInt32 = Field(default=100, alias="idleCPUMillicores")
    """CPU use (millicores, from metrics.k8s.io) at or below which the pod counts as idle
    (used when there are no GPU readings of it)."""
    idle_gpu_activity_percent: Percent = Field(
        default=DEFAULT_IDLE_GPU_PERCENT, alias="idleGPUActivityPercent"
    )
    """GPU activity (mean over its GPUs, percent, from dcgm-exporter as the operator samples it
    with `--enable-gpu-metrics`) at or below which a workspace with GPUs counts as idle; while
    there are such readings its CPU use does not count."""
    max_lifetime_hours: Annotated[float, Field(gt=0)] | None = None
    """Stop this many hours after the current run started, busy or not. Unset: no limit."""


class GryviaWorkspaceStatus(GryviaModel):
    """Phase, pod and the times the stop decisions use."""

    phase: WorkspacePhase | None = None
    """Pending (pod not running yet), Running, or Stopped."""
    pod_name: Str253 | None = None
    """The workspace pod, `<name>-0`."""
    pvc_name: Str253 | None = Field(default=None, alias="pvcName")
    """The home PVC, `<name>-home`."""
    started_at: datetime | None = None
    """When the current (or last) run's pod started running."""
    stopped_at: datetime | None = None
    """When the workspace last stopped."""
    last_activity_at: datetime | None = None
    """Latest sign of use: run start, session heartbeat, or CPU above the threshold."""
    stop_reason: StopReason | None = None
    """Why it stopped: User, Idle or MaxLifetime."""
    runs: NonNegativeInt32 = 0
    """How many times the pod started (each run is metered as one GryviaUsageRecord)."""
    message: str | None = None
    """Detail of the phase."""
    conditions: Conditions | None = None
    """Standard conditions."""


class GryviaWorkspace(GryviaResource):
    """An interactive development pod whose home directory survives stop and start."""

    kind: Literal["GryviaWorkspace"] = "GryviaWorkspace"
    spec: GryviaWorkspaceSpec
    status: GryviaWorkspaceStatus | None = None


WORKSPACE_KIND = KindInfo(
    resource=resources.WORKSPACE,
    model=GryviaWorkspace,
    description=GryviaWorkspace.__doc__ or "",
    printer_columns=(
        PrinterColumn("Phase", ".status.phase"),
        PrinterColumn("GPUs", ".spec.gpus", "integer"),
        PrinterColumn("Image", ".spec.image", priority=1),
        PrinterColumn("Reason", ".status.stopReason"),
        PrinterColumn("Started", ".status.startedAt", "date"),
        AGE_COLUMN,
    ),
    omitted=(
        "spec.ports, spec.ide (web IDE proxy): use `gryvia port-forward` and `gryvia workspace "
        "shell`",
    ),
)
GryviaWorkspace.kind_info = WORKSPACE_KIND


def pod_name(workspace: str) -> str:
    """The workspace's pod: `<workspace>-0` (one pod, like a StatefulSet of one)."""
    return f"{workspace}-0"


def pvc_name(workspace: str) -> str:
    """The workspace's home PVC: `<workspace>-home`."""
    return f"{workspace}-home"
