"""The documents of `gryvia queue`: the waiting jobs (Queue) and, with --running, the running
ones (RunningJobs)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import PlainSerializer

from gryvia_cli.schemas.base import CliModel, Document
from gryvia_operator.api.pending import EstimatedStart, PendingStatus


def _as_stored(model: PendingStatus | EstimatedStart | None) -> dict[str, Any] | None:
    """The operator's status.pending / status.estimatedStart as stored: camelCase, no nulls."""
    if model is None:
        return None
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


Blocker = Annotated[PendingStatus | None, PlainSerializer(_as_stored)]
"""The job's `status.pending` as the operator wrote it (docs/pending.md); null without one."""
Estimate = Annotated[EstimatedStart | None, PlainSerializer(_as_stored)]
"""The job's `status.estimatedStart` as the operator wrote it (docs/pending.md)."""


class QueueItem(CliModel):
    """One waiting job."""

    position: int
    """1-based place among the waiting jobs of the same GPU type, oldest first; for a job in a
    Kueue queue, its place in that LocalQueue (higher priority first, then oldest)."""
    namespace: str
    name: str
    user: str | None
    """Who submitted the job (annotation gryvia.io/submitted-by); null when not recorded."""
    tenant: str | None
    """The tenant the operator meters the job to; null when not attributed."""
    gpuType: str
    """The GPU type the job asks for ("" for any type)."""
    gpus: int
    """GPUs of the whole job."""
    gpusPerPod: int
    pods: int
    phase: str
    """The job's status.phase (Pending, Queued or Scheduling)."""
    createdAt: str | None
    """When the job was created (RFC 3339)."""
    waitingSeconds: int | None
    """Whole seconds since the job was created."""
    reason: str
    """Why the job waits, in one line (the first of: suspended, quota or Kueue hold, no node
    of the type, pods larger than any node, the operator's SchedulingFailed message, the pods'
    FailedScheduling event, too few free GPUs)."""
    blocker: Blocker
    """The job's status.pending as the operator wrote it (docs/pending.md); null without."""
    estimatedStart: Estimate
    """The job's status.estimatedStart as the operator wrote it (docs/pending.md)."""
    start: str | None
    """The START column: `14:20-15:05` (earliest-likely, UTC), `unknown` or `never`."""
    kueueQueue: str | None
    """The Kueue LocalQueue of the job (docs/kueue.md); null without Kueue."""
    flavor: str | None
    """The Kueue ResourceFlavor of its GPUs once admitted."""
    borrowedGPUs: int | None
    """GPUs over its team's nominal quota borrowed from the Kueue cohort."""


class Queue(Document):
    """`gryvia queue -o json`: the waiting jobs, oldest first."""

    kind: Literal["Queue"]
    items: list[QueueItem]


class RunningJob(CliModel):
    """One running job and its GPU activity as the operator sampled it (docs/gpu-metrics.md);
    the activity fields are null where never sampled."""

    namespace: str
    name: str
    user: str | None
    """Who submitted the job; null when not recorded."""
    gpuType: str | None
    gpus: int
    runningSeconds: float | None
    """Seconds since the job started running."""
    gpuActivityPercent: float | None
    """The last sample of the job's GPU activity, 0..100."""
    meanGpuActivityPercent: float | None
    """The mean GPU activity over the run, 0..100."""
    tensorActivityPercent: float | None
    """The last sample of tensor-core activity, 0..100."""
    samples: int
    """How many samples the mean is over (0: not sampled)."""
    field: str | None
    """The DCGM field sampled."""
    lastSampleTime: str | None
    """When the last sample was taken (RFC 3339)."""
    idle: bool
    """True when sampled and the last sample is under 10 %."""


class RunningJobs(Document):
    """`gryvia queue --running -o json`: the running jobs, idlest first."""

    kind: Literal["RunningJobs"]
    items: list[RunningJob]
