"""GryviaUsageRecord: metered GPU time and estimated cost of one job run."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal

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
    """GryviaGpuSku whose rate was used (empty: no SKU priced the run, see `unpriced`)."""
    gpu_type: Str63 | None = None
    """GPU type of the job."""
    user: Str253 | None = None
    """Who submitted the job (its `gryvia.io/submitted-by` annotation, stamped by the
    admission webhook); unset when unknown."""
    project: Str63 | None = None
    """The job's project (its `gryvia.io/project` label); unset when it has none."""
    reservation: Str253 | None = None
    """The GryviaReservation the job opted into (its `gryvia.io/reservation` annotation);
    unset when none. Its GPU-hours count as used, not idle, in the chargeback."""
    job_labels: dict[str, Str63] | None = Field(default=None, alias="jobLabels", max_length=64)
    """The job's labels when it was metered (`gryvia usage --group-by label:KEY`); at most
    64, as label values at most 63 characters (Kubernetes' own bound)."""
    gpus: NonNegativeInt32
    """Total `nvidia.com/gpu` units of the job (pods x GPUs per pod)."""
    physical_gpus: NonNegativeFloat | None = Field(default=None, alias="physicalGPUs")
    """Physical GPUs billed when the job's pods held time-sliced units: units / the node's
    `nvidia.com/gpu.replicas` (1 unit with replicas 4: 0.25), 6 places. Unset: `gpus` are
    whole GPUs and are billed."""
    rate: NonNegativeFloat
    """Price per GPU-hour (0 with `unpriced`: no price, not free)."""
    currency: Annotated[str, StringConstraints(min_length=1, max_length=8)] = "USD"
    """ISO currency code of rate and cost."""
    start: datetime
    """When billing starts: the first app container's start (docs/billing.md)."""
    end: datetime | None = None
    """When billing ends: the last app container's finish; unset while the job runs."""
    gpu_hours: NonNegativeFloat
    """(end or now - start) in hours x billed GPUs (`physicalGPUs` when set, else `gpus`)."""
    cost: NonNegativeFloat
    """gpuHours x rate (an estimate, not an invoice); 0 with `unpriced`: no price, not free."""
    active_gpu_hours: NonNegativeFloat | None = Field(default=None, alias="activeGPUHours")
    """gpuHours x the job's mean GPU activity (`status.metrics.meanActivityPercent`), written
    when the record is sealed; unset when its GPUs were never sampled (docs/gpu-metrics.md)."""
    final: StrictBool
    """The run has ended; the spec can no longer change."""
    unpriced: StrictBool | None = None
    """True when no enabled GryviaGpuSku (that the tenant may use) priced the run's GPU type
    at metering time: `rate` and `cost` are then 0 and mean no price, not free. Reports show
    `unpriced` and a month with such usage is finalized only with `--allow-unpriced`
    (docs/billing.md, "Unpriced usage"). Unset: priced."""


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
        PrinterColumn("Unpriced", ".spec.unpriced", "boolean"),
        PrinterColumn("Final", ".spec.final", "boolean"),
        AGE_COLUMN,
    ),
    omitted=(
        "spec.kind, spec.model, spec.inputTokens, spec.outputTokens: token (LLM gateway) and "
        "Slurm metering are not built; every record is GPU usage",
    ),
)
GryviaUsageRecord.kind_info = USAGE_RECORD_KIND


def is_unpriced(spec: GryviaUsageRecordSpec | Mapping[str, Any]) -> bool:
    """True when a usage record's run has no price (docs/billing.md, "Unpriced usage").

    `spec`: the model's spec, or a raw record's `spec` (wire names). The rule: `unpriced:
    true`, or, for records metered before that field existed, GPUs (`gpus` > 0: a CPU-only
    run has nothing to price) with no `sku` and a rate of 0 (the operator always names the
    SKU of a price, so a SKU at 0.00 is priced: free). Unreadable numbers count as 0.
    """
    if isinstance(spec, GryviaUsageRecordSpec):
        return bool(spec.unpriced) or (spec.gpus > 0 and not spec.sku and not spec.rate)
    if spec.get("unpriced") is True:
        return True
    try:
        rate, gpus = float(spec.get("rate") or 0), float(spec.get("gpus") or 0)
    except (TypeError, ValueError):
        rate, gpus = 0.0, 0.0
    return gpus > 0 and not spec.get("sku") and not rate
