"""GryviaUsageRecord: metered GPU time and estimated cost of one job run."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StrictBool, StringConstraints

from gryvia_operator.api import messages as msg
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
    cel_rules,
)

_IMMUTABLE_WHEN_FINAL = {
    "rule": "!has(oldSelf.final) || !oldSelf.final || self == oldSelf",
    "message": msg.USAGE_RECORD_FINAL,
}


class GryviaUsageRecordSpec(GryviaModel):
    """One run of a job: who, what, how long, at which rate. Sealed once `final` is true."""

    model_config = ConfigDict(json_schema_extra=cel_rules([_IMMUTABLE_WHEN_FINAL]))

    tenant: Annotated[str, StringConstraints(min_length=1, max_length=253)]
    """Tenant the usage is attributed to."""
    job: Str253
    """Name of the GryviaAIJob."""
    job_uid: Str63 = Field(alias="jobUID")
    """UID of the GryviaAIJob (the record is named `usage-<jobUID>`)."""
    sku: Str253 | None = None
    """GryviaGpuSku whose rate was used (empty: default price table or no match)."""
    gpu_type: Str63 | None = None
    """GPU type of the job."""
    gpus: NonNegativeInt32
    """Total `nvidia.com/gpu` units of the job (pods x GPUs per pod)."""
    physical_gpus: NonNegativeFloat | None = Field(default=None, alias="physicalGPUs")
    """Physical GPUs billed when the job's pods held time-sliced units: units / the node's
    `nvidia.com/gpu.replicas` (1 unit with replicas 4: 0.25), 6 places. Unset: `gpus` are
    whole GPUs and are billed."""
    rate: NonNegativeFloat
    """Price per GPU-hour."""
    currency: Annotated[str, StringConstraints(min_length=1, max_length=8)] = "USD"
    """ISO currency code of rate and cost."""
    start: datetime
    """When billing starts: the first app container's start (docs/billing.md)."""
    end: datetime | None = None
    """When billing ends: the last app container's finish; unset while the job runs."""
    gpu_hours: NonNegativeFloat
    """(end or now - start) in hours x billed GPUs (`physicalGPUs` when set, else `gpus`)."""
    cost: NonNegativeFloat
    """gpuHours x rate (an estimate, not an invoice)."""
    final: StrictBool
    """The run has ended; the spec can no longer change."""


class GryviaUsageRecord(GryviaResource):
    """Usage of one job run, refreshed every minute while it runs and frozen when it ends."""

    kind: Literal["GryviaUsageRecord"] = "GryviaUsageRecord"
    spec: GryviaUsageRecordSpec


USAGE_RECORD_KIND = KindInfo(
    resource=resources.USAGE_RECORD,
    model=GryviaUsageRecord,
    description=GryviaUsageRecord.__doc__ or "",
    printer_columns=(
        PrinterColumn("Tenant", ".spec.tenant"),
        PrinterColumn("Job", ".spec.job"),
        PrinterColumn("GPU-Hours", ".spec.gpuHours", "number"),
        PrinterColumn("Cost", ".spec.cost", "number"),
        PrinterColumn("Final", ".spec.final", "boolean"),
        AGE_COLUMN,
    ),
    omitted=(
        "spec.kind, spec.model, spec.inputTokens, spec.outputTokens: token (LLM gateway) and "
        "Slurm metering are not built; every record is GPU usage",
    ),
)
GryviaUsageRecord.kind_info = USAGE_RECORD_KIND
