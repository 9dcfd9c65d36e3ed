"""The one rule for GPU type names, used by `gryvia validate`, the submit plan, the webhook,
node registration and placement, capacity and the price catalog alike.

A GPU type is compared by its canonical name: `normalize_gpu_type("h100")`,
`normalize_gpu_type("h-100")`, `normalize_gpu_type("H100")` and
`normalize_gpu_type("NVIDIA-H100-80GB-HBM3")` are all `H100`. Node registration writes the
canonical name into the node label `gryvia.io/gpu`, and placement selects on the canonical
name of the job's `spec.gpuType`, so whatever spelling a user types lands where the plan said.
Source: NVIDIA GPU feature discovery's `nvidia.com/gpu.product` values
(`NVIDIA-H100-80GB-HBM3`, `NVIDIA-A100-SXM4-80GB`, `Tesla-T4`, ...).
"""

from __future__ import annotations

import functools
import itertools
import re

_TOKEN_SPLIT = re.compile(r"[-_\s]+")
_MIG_PROFILE = re.compile(r"(?<![0-9a-z])(\d+g\.\d+gb)(?![0-9a-z])", re.IGNORECASE)
_MIG_WORD = re.compile(r"(?<![a-z])mig(?![a-z])", re.IGNORECASE)
GPU_RESOURCE = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
"""NVIDIA's device plugin (MIG strategy `mixed`) exposes a slice as `nvidia.com/mig-<profile>`."""
_SIMPLE_TYPES = {"L40S": "L40", "L40": "L40", "A10": "A10", "T4": "T4", "V100": "V100"}
ANY_GPU_TYPE = "any"
"""The `spec.gpuType` value that places no constraint (like leaving it out)."""


def _tokens(name: str) -> list[str]:
    """Upper-cased tokens split on `-`, `_` and spaces, plus each adjacent pair joined (so
    `h-100` also yields `H100` and `a-100 80gb` yields `A100`)."""
    parts = [t for t in _TOKEN_SPLIT.split(name.strip().upper()) if t]
    return parts + [a + b for a, b in itertools.pairwise(parts)]


@functools.lru_cache(maxsize=1024)
def normalize_gpu_type(name: str) -> str:
    """The canonical GPU type of a product label or a user's spelling of it.

    `NVIDIA-H100-80GB-HBM3`, `h100`, `h-100` -> `H100`; an A100 with `80GB`/`80G` ->
    `A100-80G`, with `40GB`/`40G` -> `A100-40G`; `L40S`/`L40` -> `L40`; `A10`, `T4`, `V100` as
    themselves. Any other name becomes its upper-cased tokens joined by `-`
    (`rtx a6000` -> `RTX-A6000`, a plain `a100` -> `A100`). Idempotent: a canonical name
    maps to itself. Empty in, empty out.
    """
    tokens = _tokens(name)
    if not tokens:
        return ""
    profile = mig_profile(name)
    if profile is not None:
        rest = _MIG_WORD.sub(" ", _MIG_PROFILE.sub(" ", name))
        parent = normalize_gpu_type(rest)
        return f"{parent}-MIG-{profile.upper()}" if parent else f"MIG-{profile.upper()}"
    if "H100" in tokens:
        return "H100"
    if "A100" in tokens:
        if "80GB" in tokens or "80G" in tokens:
            return "A100-80G"
        if "40GB" in tokens or "40G" in tokens:
            return "A100-40G"
    for token in tokens:
        if token in _SIMPLE_TYPES:
            return _SIMPLE_TYPES[token]
    return "-".join(t for t in _TOKEN_SPLIT.split(name.strip().upper()) if t)


def gpu_type_is_any(gpu_type: str | None) -> bool:
    """True when a job's gpuType places no constraint: unset, "" or `any` (any case)."""
    return not gpu_type or gpu_type.strip().lower() == ANY_GPU_TYPE


def gpu_type_key(gpu_type: str | None) -> str:
    """The canonical type a job's `spec.gpuType` asks for, or "" when it asks for any GPU."""
    return "" if gpu_type_is_any(gpu_type) else normalize_gpu_type(str(gpu_type))


def same_gpu_type(a: str | None, b: str | None) -> bool:
    """True when two spellings name the same GPU type (both canonicalised; "" never matches
    a concrete type)."""
    return normalize_gpu_type(a or "") == normalize_gpu_type(b or "")


def mig_profile(name: str | None) -> str | None:
    """The MIG profile a GPU type names (`3g.40gb` in `nvidia_h100_80gb_hbm3_3g.40gb` or
    `H100-MIG-3G.40GB`), lower-cased as the device plugin spells it; None for a whole GPU."""
    match = _MIG_PROFILE.search(name or "")
    return match.group(1).lower() if match else None


def gpu_resource_name(gpu_type: str | None) -> str:
    """The extended resource a pod requests for one GPU of `gpu_type`: `nvidia.com/gpu`, or
    `nvidia.com/mig-3g.40gb` for a MIG slice (one unit is one slice, not one GPU)."""
    profile = mig_profile(gpu_type)
    return f"{MIG_RESOURCE_PREFIX}{profile}" if profile else GPU_RESOURCE
