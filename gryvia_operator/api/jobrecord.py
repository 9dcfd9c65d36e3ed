"""GryviaJobRecord: what `gryvia sacct` remembers of a job after the GryviaAIJob is gone.

Two shapes of one kind (docs/slurm.md, "sacct history"):

* a job record, `job-<job uid>` in the job's namespace, written once by the operator when the
  job reaches a terminal phase (Succeeded, Failed, Rejected, Preempted, Cancelled) or is
  deleted before it got there (then `Cancelled`, ended at the deletion): `spec.job` set;
* a roll-up, `rollup-<tenant>-<YYYY-MM>` in the same namespace, the per-tenant, per-month sum
  of the job records that ended before the retention cut (`--job-record-retention-days`,
  default 90) and were then deleted: `spec.rollup` set.

Compact on purpose (bytes per job: docs/slurm.md): only what sacct shows and cannot derive,
no defaults written (`exclude_none`), no managedFields (created with `managedFields: [{}]`).
Amounts: `cost` a decimal string with 4 places (Decimal, never float), GPU-hours 4 places.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeFloat,
    NonNegativeInt32,
    PrinterColumn,
    Str63,
    Str253,
)

JOB_RECORD_PREFIX = "job-"
ROLLUP_PREFIX = "rollup-"
DEFAULT_RETENTION_DAYS = 90
"""Days a job record is kept before it is rolled up (operator `--job-record-retention-days`,
chart value `jobRecords.retentionDays`)."""

Amount = Annotated[str, StringConstraints(pattern=r"^[0-9]+(\.[0-9]{1,6})?$", max_length=32)]
"""A non-negative decimal string, e.g. `12.5000`."""
Month = Annotated[str, StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}$")]


ROLLUP_FOLD_LIMIT = 1000
"""Records one roll-up takes per pass (its `folded` list); more wait for the next pass."""


class JobRollup(GryviaModel):
    """The jobs of one tenant that ended in one month, summed once their records went."""

    month: Month
    """The month the jobs ended in, `YYYY-MM` (UTC)."""
    jobs: NonNegativeInt32
    """Job records folded in."""
    states: dict[str, NonNegativeInt32] = Field(default_factory=dict, max_length=16)
    """Jobs per final phase (`Succeeded`: 12, ...)."""
    through: datetime
    """The latest end time folded in (`gryvia sacct` names it)."""
    folded: list[str] = Field(default_factory=list, max_length=ROLLUP_FOLD_LIMIT)
    """The jobUIDs of the records the latest passes folded in whose deletion is not yet seen:
    such a record, still listed, is already counted and only deleted again (a roll-up pass
    that stopped between writing this and deleting its records is safe to repeat); a record
    that ended earlier but was written later is still folded in."""


class GryviaJobRecordSpec(GryviaModel):
    """One ended job (`job` set) or one tenant-month roll-up (`rollup` set)."""

    tenant: Annotated[str, StringConstraints(min_length=1, max_length=253)]
    """Tenant (sacct's Account) the job ran for."""
    job: Str253 | None = None
    """Name of the GryviaAIJob (sacct's JobID)."""
    job_uid: Str63 | None = Field(default=None, alias="jobUID")
    """UID of the GryviaAIJob (the record is named `job-<jobUID>`)."""
    job_name: Str253 | None = None
    """Slurm job name (annotation gryvia.io/sbatch-job-name) when it differs from `job`."""
    user: Str253 | None = None
    """Who submitted it (annotation gryvia.io/submitted-by); unset when unknown."""
    phase: Str63 | None = None
    """Final phase: Succeeded, Failed, Rejected, Preempted or Cancelled (a job deleted before
    it ended is Cancelled)."""
    timed_out: bool | None = None
    """True when its time limit ended it (sacct's TIMEOUT)."""
    exit_code: int | None = None
    """The batch step's (replica 0's) container exit code; unset when none was seen."""
    submitted: datetime | None = None
    """When the job was created (sacct's Submit and Eligible)."""
    started: datetime | None = None
    """When it started running; unset when it never ran."""
    ended: datetime | None = None
    """When it ended (completion, or deletion)."""
    gpu_type: Str63 | None = None
    """GPU type asked for (sacct's Partition); unset for `any`."""
    gpus: NonNegativeInt32 | None = None
    """Total GPUs (pods x GPUs per pod); unset: 0."""
    pods: NonNegativeInt32 | None = None
    """Pods (sacct's NNodes); unset: 1."""
    cpus: NonNegativeInt32 | None = None
    """CPUs asked for over all pods (sacct's AllocCPUS); unset: one per pod."""
    nodes: list[Str253] | None = Field(default=None, max_length=64)
    """Nodes its pods ran on (the first 64)."""
    limit_seconds: NonNegativeInt32 | None = None
    """Its time limit (sacct's Timelimit); unset: none."""
    gpu_hours: NonNegativeFloat | None = None
    """Metered GPU-hours (its usage records), else GPUs x elapsed; a roll-up's sum."""
    cost: Amount | None = None
    """Metered cost (its usage records); a roll-up's sum. Unset: not metered."""
    currency: Annotated[str, StringConstraints(max_length=8)] | None = None
    """ISO currency of `cost`."""
    gpu_eff: NonNegativeFloat | None = None
    """Mean GPU activity in percent the operator sampled (docs/gpu-metrics.md)."""
    rollup: JobRollup | None = None
    """Set on a roll-up: the month's counts; the job fields are then unset."""


class GryviaJobRecord(GryviaResource):
    """A finished job as accounting remembers it (or a tenant-month roll-up of such records);
    written by the operator, read by `gryvia sacct`."""

    kind: Literal["GryviaJobRecord"] = "GryviaJobRecord"
    spec: GryviaJobRecordSpec


JOB_RECORD_KIND = KindInfo(
    resource=resources.JOB_RECORD,
    model=GryviaJobRecord,
    description=GryviaJobRecord.__doc__ or "",
    printer_columns=(
        PrinterColumn("Tenant", ".spec.tenant"),
        PrinterColumn("Job", ".spec.job"),
        PrinterColumn("Phase", ".spec.phase"),
        PrinterColumn("Ended", ".spec.ended", "date"),
        PrinterColumn("Month", ".spec.rollup.month"),
        AGE_COLUMN,
    ),
)
GryviaJobRecord.kind_info = JOB_RECORD_KIND


def job_record_name(job_uid: str) -> str:
    """`job-<uid>`: the record of the job with that UID (one per job, whatever its name)."""
    return f"{JOB_RECORD_PREFIX}{job_uid}"


def rollup_name(tenant: str, month: str) -> str:
    """`rollup-<tenant>-<YYYY-MM>`, cut to 253 characters."""
    return f"{ROLLUP_PREFIX}{tenant}-{month}"[-253:]
