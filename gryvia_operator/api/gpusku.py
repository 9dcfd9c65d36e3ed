"""GryviaGpuSku: one entry of the GPU price catalog (pure data, no controller)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StrictBool, StringConstraints

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeFloat,
    Percent,
    PositiveInt32,
    PrinterColumn,
    Str1024,
)

DEFAULT_CURRENCY = "USD"


class GryviaGpuSkuSpec(GryviaModel):
    """Price of a GPU type; usage records take the rate of the first enabled matching SKU."""

    gpu_type: Annotated[str, StringConstraints(min_length=1, max_length=63)]
    """GPU type this SKU prices (matched case-insensitively against a job's gpuType)."""
    gpus_per_unit: PositiveInt32 = 1
    """GPUs sold together as one unit (display only; the rate stays per GPU-hour)."""
    hourly_rate: NonNegativeFloat
    """Price per GPU-hour in `currency`."""
    currency: Annotated[str, StringConstraints(min_length=1, max_length=8)] = DEFAULT_CURRENCY
    """ISO currency code."""
    spot_discount: Percent | None = None
    """Informational spot discount in percent, 0..100."""
    description: Str1024 | None = None
    """Free text shown in the catalog."""
    enabled: StrictBool = True
    """Disabled SKUs are never used for pricing or admission."""


class GryviaGpuSku(GryviaResource):
    """A GPU price: `gryvia catalog` lists these, metering and cost estimates use them."""

    kind: Literal["GryviaGpuSku"] = "GryviaGpuSku"
    spec: GryviaGpuSkuSpec


GPUSKU_KIND = KindInfo(
    resource=resources.GPUSKU,
    model=GryviaGpuSku,
    description=GryviaGpuSku.__doc__ or "",
    printer_columns=(
        PrinterColumn("GPU", ".spec.gpuType"),
        PrinterColumn("Rate", ".spec.hourlyRate", "number", "Price per GPU-hour"),
        PrinterColumn("Currency", ".spec.currency"),
        PrinterColumn("Enabled", ".spec.enabled", "boolean"),
        AGE_COLUMN,
    ),
)
GryviaGpuSku.kind_info = GPUSKU_KIND
