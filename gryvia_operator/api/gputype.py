"""The one rule for GPU type names, used by `gryvia validate`, the submit plan, the webhook,
node registration and placement, capacity, Kueue flavors, the price catalog and the Slurm
importer alike.

A GPU type is compared by its canonical name: `normalize_gpu_type("h100")`,
`normalize_gpu_type("h-100")`, `normalize_gpu_type("H100")` and
`normalize_gpu_type("NVIDIA-H100-80GB-HBM3")` are all `H100`. Node registration writes the
canonical name into the node label `gryvia.io/gpu` and its family into
`gryvia.io/gpu-family`; placement selects on the canonical name of the job's `spec.gpuType`,
so whatever spelling a user types lands where the plan said.

Families: a family whose memory sizes are told apart (`VARIANTS`: an A100 is `A100-80G` or
`A100-40G`) is also a type of its own: a job that names the family (`a100`, Slurm's
`--gres=gpu:a100:8`) runs on any of its variants, a job that names a variant only on that
variant (issue 39). Other models are one type each, whatever their memory or form factor
(`H100`, `H200`, `L40S`, `A40`, `L4`, `A10G`, `B200`, ...); L40 and L40S stay different.
Source: NVIDIA GPU feature discovery's `nvidia.com/gpu.product` values
(`NVIDIA-H100-80GB-HBM3`, `NVIDIA-A100-SXM4-80GB`, `NVIDIA-H200`, `Tesla-T4`, ...).
"""

from __future__ import annotations

import functools
import itertools
import re

from gryvia_operator.api.names import LABEL_GPU, LABEL_GPU_FAMILY

_TOKEN_SPLIT = re.compile(r"[-_\s]+")
_MIG_PROFILE = re.compile(r"(?<![0-9a-z])(\d+g\.\d+gb)(?![0-9a-z])", re.IGNORECASE)
_MIG_WORD = re.compile(r"(?<![a-z])mig(?![a-z])", re.IGNORECASE)
GPU_RESOURCE = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
"""NVIDIA's device plugin (MIG strategy `mixed`) exposes a slice as `nvidia.com/mig-<profile>`."""
_VENDOR_WORDS = frozenset({"NVIDIA", "TESLA", "GEFORCE"})
"""Words of a product name that name no model (`NVIDIA-H200`, `Tesla-T4`)."""
FAMILIES: tuple[str, ...] = (
    "GB200", "GH200", "B200", "B100", "H200", "H100", "H800", "H20", "A100", "A800", "A40",
    "A30", "A16", "A10G", "A10", "A2", "L40S", "L40", "L20", "L4", "T4", "V100", "P100",
    "P40", "P4",
)  # fmt: skip
"""Data-center GPU models recognised in any spelling; each word is matched whole, so `L40S`
is never `L40` and `A10G` never `A10`."""
VARIANTS: dict[str, tuple[str, ...]] = {"A100": ("80G", "40G")}
"""Families whose memory sizes are told apart: the canonical type is `<family>-<size>`."""
_MEMORY = re.compile(r"^(\d+)GB?$")
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

    `NVIDIA-H100-80GB-HBM3`, `h100`, `h-100` -> `H100`; `NVIDIA-H200` -> `H200`; an A100
    with `80GB`/`80G` -> `A100-80G`, with `40GB`/`40G` -> `A100-40G`, without a size ->
    `A100` (the family); `L40S` and `L40` as themselves. Any other name becomes its
    upper-cased words without the vendor's (`NVIDIA`, `Tesla`, `GeForce`) joined by `-`
    (`rtx a6000` and `NVIDIA-RTX-A6000` -> `RTX-A6000`). Idempotent: a canonical name maps to
    itself. Empty in, empty out.
    """
    tokens = _tokens(name)
    if not tokens:
        return ""
    profile = mig_profile(name)
    if profile is not None:
        rest = _MIG_WORD.sub(" ", _MIG_PROFILE.sub(" ", name))
        parent = normalize_gpu_type(rest)
        return f"{parent}-MIG-{profile.upper()}" if parent else f"MIG-{profile.upper()}"
    words = [t for t in _TOKEN_SPLIT.split(name.strip().upper()) if t]
    model = [w for w in words if w not in _VENDOR_WORDS] or words
    family = next((f for f in FAMILIES if f in tokens), None)
    if family is None:
        return "-".join(model)
    for word in model:
        match = _MEMORY.match(word)
        if match and f"{match.group(1)}G" in VARIANTS.get(family, ()):
            return f"{family}-{match.group(1)}G"
    return family


def gpu_family(gpu_type: str | None) -> str:
    """The family of a GPU type: `A100` for `A100-80G` and for `a100`; any other type (and
    a MIG slice) is its own family. "" for an empty type."""
    canonical = normalize_gpu_type(gpu_type or "")
    for family, sizes in VARIANTS.items():
        if canonical.startswith(family + "-") and canonical[len(family) + 1 :] in sizes:
            return family
    return canonical


def names_family(gpu_type: str | None) -> bool:
    """True when a job's gpuType names a family whose variants are told apart (`a100`), so
    it runs on any of them."""
    return gpu_type_key(gpu_type) in VARIANTS


def gpu_type_matches(wanted: str | None, offered: str | None) -> bool:
    """True when a GPU of type `offered` (a node's, a SKU's) serves a job asking for
    `wanted`: any GPU for unset/`any`; else the same canonical type, or a variant of the
    family `wanted` names (`A100` is served by `A100-80G`, `A100-80G` only by itself)."""
    key = gpu_type_key(wanted)
    if not key:
        return True
    actual = normalize_gpu_type(offered or "")
    return key == actual or (key in VARIANTS and gpu_family(actual) == key)


def gpu_selector(gpu_type: str | None) -> dict[str, str]:
    """The node selector that places a whole-GPU job of `gpu_type`: {} for any GPU,
    `gryvia.io/gpu-family=<family>` for a family with variants, else
    `gryvia.io/gpu=<canonical type>` (labels written by node registration)."""
    key = gpu_type_key(gpu_type)
    if not key:
        return {}
    return {LABEL_GPU_FAMILY: key} if key in VARIANTS else {LABEL_GPU: key}


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
