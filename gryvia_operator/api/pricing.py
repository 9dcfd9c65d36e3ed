"""GPU prices: the rate of a GPU type from the GryviaGpuSku catalog, and the default catalog.

Shared by the operator (metering) and the CLI (estimates before submit, `gryvia cost`); rates are
per GPU-hour, in the SKU's currency (USD by default). Rule: a job is priced by the first enabled
SKU, in name order, whose GPU type is the job's (the Gryvia FAQ's "GPU price catalog").
A MIG slice (`H100-MIG-3G.40GB`) without a SKU of its own costs its parent's rate times its
fraction of the parent (`api.mig`: 3g.40gb of an H100 = 3/7 of the H100 rate); rates then
count per slice-hour.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gryvia_operator.api.gpusku import DEFAULT_CURRENCY, GryviaGpuSku, GryviaGpuSkuSpec
from gryvia_operator.api.gputype import (
    gpu_family,
    gpu_type_is_any,
    gpu_type_matches,
    names_family,
    normalize_gpu_type,
    same_gpu_type,
)
from gryvia_operator.api.mig import parent_type, parse_profile
from gryvia_operator.api.names import LABEL_DEFAULT_CATALOG

#: The catalog the operator creates when the cluster has no GryviaGpuSku at all:
#: (SKU name, GPU type, USD per GPU-hour).
DEFAULT_CATALOG: tuple[tuple[str, str, float], ...] = (
    ("h200-141g", "H200", 10.00),
    ("h100-80g", "H100", 8.00),
    ("a100-80g", "A100-80G", 4.00),
    ("a100-40g", "A100-40G", 3.50),
    ("l40s", "L40S", 3.00),
    ("l40", "L40", 2.50),
    ("a10", "A10", 1.50),
    ("v100", "V100", 2.00),
    ("t4", "T4", 1.00),
)


@dataclass(frozen=True)
class Rate:
    """The price of one GPU-hour of a GPU type, and the SKU it comes from."""

    sku: str
    gpu_type: str
    per_gpu_hour: float
    currency: str = DEFAULT_CURRENCY

    def cost(self, gpu_hours: float) -> float:
        """Return the cost of `gpu_hours` GPU-hours in this rate's currency."""
        return gpu_hours * self.per_gpu_hour


def default_catalog() -> list[GryviaGpuSku]:
    """Return the default catalog as GryviaGpuSku objects (labelled as defaults)."""
    return [
        GryviaGpuSku.model_validate(
            {
                "metadata": {
                    "name": name,
                    "labels": {LABEL_DEFAULT_CATALOG: "true"},
                },
                "spec": GryviaGpuSkuSpec(
                    gpu_type=gpu_type,
                    hourly_rate=rate,
                    description=f"Default price for {gpu_type}",
                ).model_dump(by_alias=True, exclude_none=True),
            }
        )
        for name, gpu_type, rate in DEFAULT_CATALOG
    ]


def _allowed(sku: GryviaGpuSku, allowed: Sequence[str] | None) -> bool:
    """An entry of `allowedSkus` names a SKU (any case) or a GPU type: its upper-cased
    spelling equals the SKU's canonical type or family (so `h100` allows `H100` SKUs and
    `a100` allows `A100-80G` SKUs, but a SKU name such as `z-h100` allows only that SKU)."""
    if not allowed:
        return True
    names = {a.strip().lower() for a in allowed}
    canonical = normalize_gpu_type(sku.spec.gpu_type)
    family = gpu_family(canonical)
    return (sku.metadata.name or "").lower() in names or {
        canonical.lower(),
        family.lower(),
    } & names != set()


def select_rate(
    gpu_type: str | None,
    skus: Iterable[GryviaGpuSku],
    allowed_skus: Sequence[str] | None = None,
) -> Rate | None:
    """Return the rate of the first enabled SKU, by name, whose GPU type matches `gpu_type`.

    GPU types match by their canonical name (`api.gputype`: `h100` finds an `H100` SKU);
    `allowed_skus` (a tenant's `allowedSkus`: SKU names or GPU
    types; empty = all) restricts the candidates. Returns None when `gpu_type` is empty or `any`
    or nothing matches; metering then records the run `unpriced` (cost 0 meaning no price,
    `api.usagerecord.is_unpriced`) and the CLI says so. A MIG type without its own SKU gets
    the parent's rate times the slice's fraction (`gpu_type` the MIG type, `sku` the parent's
    SKU name); a MIG type that names no parent has no fallback.
    """
    if gpu_type_is_any(gpu_type):
        return None
    skus = list(skus)
    own = _first_rate(str(gpu_type), skus, allowed_skus)
    profile = parse_profile(gpu_type)
    parent = parent_type(gpu_type)
    if own is not None or profile is None or not parent:
        return own
    whole = _first_rate(parent, skus, allowed_skus)
    if whole is None:
        return None
    share = profile.fraction(parent)
    per_slice = whole.per_gpu_hour * share.numerator / share.denominator
    return Rate(whole.sku, normalize_gpu_type(str(gpu_type)), per_slice, whole.currency)


def _first_rate(
    gpu_type: str, skus: Sequence[GryviaGpuSku], allowed_skus: Sequence[str] | None
) -> Rate | None:
    """The SKU of the same type first; else a SKU of the type's family (`A100` prices an
    `A100-80G`); else, for a job naming a family (`A100`), the dearest SKU of its variants:
    the most the job can cost before it lands (metering prices the node's own type)."""
    usable = [
        s
        for s in sorted(skus, key=lambda s: s.metadata.name or "")
        if s.spec.enabled and _allowed(s, allowed_skus)
    ]
    found = next((s for s in usable if same_gpu_type(s.spec.gpu_type, gpu_type)), None)
    if found is None:
        family = [s for s in usable if names_family(s.spec.gpu_type)]
        found = next((s for s in family if gpu_type_matches(s.spec.gpu_type, gpu_type)), None)
    if found is None and names_family(gpu_type):
        variants = [s for s in usable if gpu_type_matches(gpu_type, s.spec.gpu_type)]
        found = max(variants, key=lambda s: s.spec.hourly_rate, default=None)
    if found is None:
        return None
    return Rate(
        found.metadata.name or "", found.spec.gpu_type, found.spec.hourly_rate, found.spec.currency
    )


def gpu_types_with_sku(
    skus: Iterable[GryviaGpuSku], allowed_skus: Sequence[str] | None = None
) -> list[str]:
    """Return the GPU types that have an enabled SKU the tenant may use, sorted."""
    return sorted({s.spec.gpu_type for s in skus if s.spec.enabled and _allowed(s, allowed_skus)})
