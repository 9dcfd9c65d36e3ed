"""Time-sliced GPUs counted as what they are: the physical GPUs shared units stand for.

The rule is NVIDIA's (GPU Operator, "Time-Slicing GPUs in Kubernetes"; k8s-device-plugin
README, "Shared Access to GPUs with CUDA Time-Slicing"): a node whose device plugin
time-slices advertises each physical GPU as `replicas` units of `nvidia.com/gpu`, and GPU
feature discovery labels the node `nvidia.com/gpu.replicas=<replicas>` (the sandbox's
`--simulate-device-plugin` writes the same label). A pod holding `u` units there holds
`u / replicas` physical GPUs: that is what billing meters (docs/gpu-sharing.md) and capacity
counts.

Pure and free of pydantic: the operator's metering, the billing windows
(`api.periods`) and the client share it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any

LABEL_REPLICAS = "nvidia.com/gpu.replicas"
"""GPU feature discovery's label on a time-sliced node: units advertised per physical GPU."""
GPU_PLACES = Decimal("0.000001")
"""Billed physical GPUs are written with 6 decimal places, like every ledger amount."""


def replicas_of(labels: Mapping[str, Any] | None) -> int:
    """Units advertised per physical GPU from a node's labels: `nvidia.com/gpu.replicas`
    when it is a whole number >= 1, else 1 (the node is not time-sliced)."""
    text = str((labels or {}).get(LABEL_REPLICAS, "")).strip()
    return int(text) if text.isdigit() and int(text) >= 1 else 1


def physical_share(units: int, replicas: int) -> Fraction:
    """Physical GPUs that `units` `nvidia.com/gpu` units stand for on a node advertising
    each GPU as `replicas` units: `units / replicas`, exact (replicas below 1 count as 1)."""
    return Fraction(max(units, 0), max(replicas, 1))


def physical_gpus(total_units: int, held: Iterable[tuple[int, int]]) -> Fraction | None:
    """Physical GPUs a job of `total_units` units (all its pods' `nvidia.com/gpu`) is
    billed for, from `held`: (units, replicas of its node) of each of its pods placed on a
    node.

    The job's units are scaled by the units-weighted share of its placed pods:
    `total_units x sum(units / replicas) / sum(units)`. When every pod's node has the same
    replicas R that is exactly `total_units / R` (1 unit on a node with replicas 4: 1/4 GPU);
    on unshared nodes (R = 1) it is `total_units`. Returns None when no placed pod holds a
    unit (nothing to base the share on: MIG slices, CPU-only, nothing placed yet).
    """
    units = shared = Fraction(0)
    for count, replicas in held:
        if count > 0:
            units += count
            shared += physical_share(count, replicas)
    if units == 0:
        return None
    return max(total_units, 0) * shared / units


def gpu_figure(value: Fraction | float) -> float:
    """A GPU count as the usage record stores it: rounded half-up to 6 places
    (`Fraction(1, 3)` -> 0.333333, `Fraction(1, 4)` -> 0.25)."""
    number = (
        Decimal(value.numerator) / Decimal(value.denominator)
        if isinstance(value, Fraction)
        else Decimal(str(value))
    )
    return float(number.quantize(GPU_PLACES, rounding=ROUND_HALF_UP))


def billed_gpus(spec: Mapping[str, Any]) -> float:
    """GPUs a usage record's spec (wire names) bills: `physicalGPUs` when set (its pods held
    time-sliced units), else `gpus`. GPU-hours are this times the running hours."""
    physical = spec.get("physicalGPUs")
    if physical is not None:
        return float(physical)
    return float(spec.get("gpus") or 0)
