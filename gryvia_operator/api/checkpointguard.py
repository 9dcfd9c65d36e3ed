"""GryviaCheckpointGuard: where and how often selected jobs save, and their resume after a loss.

The contract with the trainer (docs/checkpoints.md): env `GRYVIA_CHECKPOINT_DIR` (a folder on
the job's PVC), `GRYVIA_CHECKPOINT_INTERVAL_SECONDS`, and `GRYVIA_RESUME_STEP` (the last
committed step, empty on a first start); the trainer commits a step by printing the line
`GRYVIA_CHECKPOINT_COMMITTED step=<n>` once the checkpoint of step n is complete.
"""

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
    NonNegativeInt64,
    PrinterColumn,
    SchemaExtra,
    Str253,
    Str1024,
)
from gryvia_operator.api.core import LabelSelector

DEFAULT_INTERVAL_SECONDS = 600
DEFAULT_DIRECTORY = "checkpoints"
MAX_LISTED_STEPS = 20
"""Committed steps kept per job (the newest)."""
KEY_RESUME = "resumeStep"
KEY_STEPS = "committedSteps"
KEY_LAST_COMMIT = "lastCommitTime"
KEY_RESTORES = "restores"
"""Keys of a guarded job's ConfigMap `<job>-checkpoint` (`configmap_name`): the step a
replacement pod resumes from, the newest committed steps (comma-separated), the time the newest
was seen (RFC 3339, UTC) and how many pods were released with a resume step."""
KEY_DIRECTORY = "directory"
KEY_CLAIM = "claim"
KEY_STORAGE = "storage"
"""Where the checkpoints are: the trainer's folder, the claim mounted at /data, and the
GryviaStorage behind it (empty for a plain StorageClass); `gryvia status JOB` prints them."""


def configmap_name(job_name: str) -> str:
    """`<job>-checkpoint`: the job's committed steps, resume step and checkpoint folder."""
    return f"{job_name}-checkpoint"


_Int32 = SchemaExtra({"format": "int32"})
RestoreReason = Literal["PodDeleted", "PodEvicted", "NodeLost", "PodFailed"]


class CheckpointPolicy(GryviaModel):
    """Where and how often the trainer saves."""

    interval_seconds: Annotated[int, Field(ge=10, le=86400, strict=True), _Int32] = (
        DEFAULT_INTERVAL_SECONDS
    )
    """How often the trainer should save (`GRYVIA_CHECKPOINT_INTERVAL_SECONDS`), 10..86400."""
    directory: Annotated[
        str,
        StringConstraints(
            min_length=1,
            max_length=253,
            pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$",
        ),
    ] = DEFAULT_DIRECTORY
    """Folder relative to the job's own PVC mount `/data` (each segment starts with a letter
    or digit); the trainer gets `GRYVIA_CHECKPOINT_DIR=/data/<directory>`."""


class RestorePolicy(GryviaModel):
    """What happens when a pod of a guarded job is lost."""

    enabled: StrictBool = True
    """Replace lost pods so they resume from the last committed step."""
    whole_job: StrictBool = True
    """Evict the other pods of a non-elastic multi-pod job too, so every rank resumes from
    the same step (their eviction does not count against retryLimit)."""


class CheckpointGuardSpec(GryviaModel):
    """Which jobs are guarded, and how."""

    job_selector: LabelSelector
    """Jobs (GryviaAIJobs in the guard's namespace) by label; `{}` selects every job."""
    checkpoint_policy: CheckpointPolicy
    """Where and how often to save."""
    restore: RestorePolicy | None = None
    """Restore policy (defaults when unset)."""


class CommittedStep(GryviaModel):
    """A job's committed steps as the operator saw them."""

    job: Str253
    """GryviaAIJob name."""
    steps: Annotated[list[NonNegativeInt64], Field(max_length=MAX_LISTED_STEPS)]
    """Newest committed steps, ascending."""
    last_commit_time: datetime | None = None
    """When the newest step was seen."""
    restores: NonNegativeInt64 = 0
    """Pods started with a resume step."""


class LastRestore(GryviaModel):
    """The most recent resume of a guarded job."""

    job: Str253
    """GryviaAIJob name."""
    pod: Str253
    """The replacement pod that got `GRYVIA_RESUME_STEP`."""
    step: NonNegativeInt64
    """The step it resumed from."""
    reason: RestoreReason
    """Why the pod it replaces went away."""
    time: datetime
    """When the replacement was released to start."""


class CheckpointGuardStatus(GryviaModel):
    """What the operator saw of the guarded jobs."""

    conditions: Conditions | None = None
    """Ready (Valid)."""
    jobs: Annotated[list[CommittedStep], Field(max_length=256)] | None = None
    """Guarded jobs with their committed steps."""
    last_restore: LastRestore | None = None
    """The newest resume."""
    phase: Literal["Invalid"] | None = None
    """Invalid when the operator refused the spec (the problems in `message`); else unset."""
    message: Str1024 | None = None
    """Why the spec was refused."""


class GryviaCheckpointGuard(GryviaResource):
    """A checkpoint guard: selected jobs save on their PVC and resume from the last committed
    step when a pod or node is lost."""

    kind: Literal["GryviaCheckpointGuard"] = "GryviaCheckpointGuard"
    spec: CheckpointGuardSpec
    status: CheckpointGuardStatus | None = None


CHECKPOINT_GUARD_KIND = KindInfo(
    resource=resources.CHECKPOINT_GUARD,
    model=GryviaCheckpointGuard,
    description=GryviaCheckpointGuard.__doc__ or "",
    printer_columns=(
        PrinterColumn("Interval", ".spec.checkpointPolicy.intervalSeconds", "integer"),
        PrinterColumn("Last-Restore", ".status.lastRestore.step", "integer"),
        AGE_COLUMN,
    ),
    omitted=("spec.monitoring, spec.validation: the trainer's commit line is the only signal",),
)
GryviaCheckpointGuard.kind_info = CHECKPOINT_GUARD_KIND
