"""GryviaIdlePolicy: what happens to running jobs whose GPUs sit idle (docs/idle-policies.md).

A GPU is idle while its activity (`status.metrics` of the job, `api.jobmetrics`) is below the
policy's threshold. A covered job idle for the whole window is warned (an Event on the job and
the policy); with action `suspend` or `cancel` it is suspended (`spec.suspend`) or cancelled
(annotation `gryvia.io/cancel`) once it stays idle for the grace after the warning. What was
done to a job is recorded on the job itself (annotation `gryvia.io/idle`), in the same write
as the action, so an operator restart neither repeats a warning nor loses an action.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final, Literal

from pydantic import Field, StringConstraints

from gryvia_operator.api import resources
from gryvia_operator.api.aijob import JobType
from gryvia_operator.api.base import (
    AGE_COLUMN,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeInt32,
    Percent,
    PrinterColumn,
    SchemaExtra,
    Str253,
    Str1024,
)

IdleAction = Literal["warn", "suspend", "cancel"]
"""What a policy does to a job idle for its window: warn only, or warn then act."""
IdleScope = Literal["Namespace", "Tenant"]
"""Which jobs a policy covers: its own namespace's, or every namespace of its tenant."""

ANNOTATION_IDLE_EXEMPT: Final = "gryvia.io/idle-exempt"
"""On a GryviaAIJob, `"true"`: no idle policy warns or acts on it."""
ANNOTATION_IDLE: Final = "gryvia.io/idle"
"""On a GryviaAIJob: what an idle policy did to it, as JSON
`{"policy", "warnedAt", "activityPercent", "action", "actedAt"}` (times RFC 3339 UTC)."""

DEFAULT_THRESHOLD_PERCENT = 5.0
DEFAULT_WINDOW_SECONDS = 1800
DEFAULT_GRACE_SECONDS = 600
MAX_LISTED_JOBS = 256
"""Idle jobs a policy's status lists (the ones idle longest)."""

_Int32 = SchemaExtra({"format": "int32"})


class IdlePolicySpec(GryviaModel):
    """Which jobs count as idle, for how long, and what is done about them."""

    threshold_percent: Percent = DEFAULT_THRESHOLD_PERCENT
    """A job is idle while the mean activity of its GPUs is below this, 0..100."""
    window_seconds: Annotated[int, Field(ge=60, le=604800, strict=True), _Int32] = (
        DEFAULT_WINDOW_SECONDS
    )
    """How long a job must stay idle before it is warned, 60..604800 s."""
    grace_seconds: Annotated[int, Field(ge=0, le=604800, strict=True), _Int32] = (
        DEFAULT_GRACE_SECONDS
    )
    """How long after the warning a job still idle is suspended or cancelled, 0..604800 s."""
    action: IdleAction = "warn"
    """`warn` (an Event only), `suspend` (`spec.suspend: true`) or `cancel`."""
    job_types: Annotated[list[JobType], Field(max_length=4)] | None = None
    """Job types covered (training, fine-tuning, evaluation, inference); unset: all."""
    scope: IdleScope = "Namespace"
    """`Namespace`: the jobs of the policy's namespace; `Tenant`: the jobs of every namespace
    of the same tenant as the policy's (the attribution rule: `tenant-<x>` of tenant x, else
    the namespace's `gryvia.io/tenant` label)."""


class IdleJob(GryviaModel):
    """A covered job the policy sees idle."""

    job: Str253
    """GryviaAIJob name."""
    namespace: Annotated[str, StringConstraints(max_length=63)]
    """Its namespace."""
    idle_since: datetime
    """The first idle sample after its last active one (UTC)."""
    activity_percent: Percent
    """The highest activity sampled since `idleSince`, 0..100."""
    warned_at: datetime | None = None
    """When it was warned."""
    action: IdleAction | None = None
    """What was done after the warning (`suspend` or `cancel`), once done."""
    acted_at: datetime | None = None
    """When that was done."""
    message: Str1024
    """What the policy measured and did, for people."""


class IdlePolicyStatus(GryviaModel):
    """What the policy sees: the covered running jobs and the idle ones."""

    phase: Literal["Active", "Invalid"] | None = None
    """Active, or Invalid with the problems in `message`."""
    message: Str1024 | None = None
    """Why the spec is invalid, or a summary."""
    covered_jobs: NonNegativeInt32 | None = None
    """Running jobs the policy covers now (exempt ones excluded)."""
    jobs: Annotated[list[IdleJob], Field(max_length=MAX_LISTED_JOBS)] | None = None
    """Covered jobs that are idle now, idle longest first."""


class GryviaIdlePolicy(GryviaResource):
    """An idle policy: warn about, suspend or cancel running jobs whose GPUs stay idle."""

    kind: Literal["GryviaIdlePolicy"] = "GryviaIdlePolicy"
    spec: IdlePolicySpec
    status: IdlePolicyStatus | None = None


IDLE_POLICY_KIND = KindInfo(
    resource=resources.IDLE_POLICY,
    model=GryviaIdlePolicy,
    description=GryviaIdlePolicy.__doc__ or "",
    printer_columns=(
        PrinterColumn("Action", ".spec.action"),
        PrinterColumn("Threshold", ".spec.thresholdPercent", "number"),
        PrinterColumn("Window", ".spec.windowSeconds", "integer"),
        PrinterColumn("Covered", ".status.coveredJobs", "integer"),
        AGE_COLUMN,
        PrinterColumn("Grace", ".spec.graceSeconds", "integer", priority=1),
        PrinterColumn("Scope", ".spec.scope", priority=1),
    ),
)
GryviaIdlePolicy.kind_info = IDLE_POLICY_KIND
