"""The one rule for MIG slices (NVIDIA Multi-Instance GPU), used by capacity, the submit
plan, placement and prices alike.

A MIG profile `<g>g.<m>gb` is a slice of `g` compute slices and `m` GB of memory of one
parent GPU. NVIDIA's device plugin (MIG strategy `mixed`) advertises each profile as its own
extended resource, `nvidia.com/mig-<profile>` (a node with `nvidia.com/mig-3g.40gb: 2` in
allocatable offers two such slices), and a pod asks for slices of it, never for whole GPUs.
Canonical GPU type of a slice: `<parent>-MIG-<PROFILE>` (`H100-MIG-3G.40GB`, see
`api.gputype.normalize_gpu_type`).

Price rule: a slice costs its fraction of the parent GPU, `g / parent compute slices`
(7 on A100 and H100, 4 on A30: `3g.40gb` of an H100 is 3/7), unless a SKU names the MIG type.
Source: NVIDIA MIG user guide, "Supported MIG Profiles".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from gryvia_operator.api.gputype import (
    MIG_RESOURCE_PREFIX,
    gpu_type_matches,
    mig_profile,
    names_family,
    normalize_gpu_type,
    same_gpu_type,
)

_PROFILE = re.compile(r"^(\d+)g\.(\d+)gb$")
DEFAULT_COMPUTE_SLICES = 7
"""Compute slices of an A100/H100/H200/B200 (the most common MIG parents)."""
COMPUTE_SLICES = {"A30": 4}
"""Parents with another number of compute slices than DEFAULT_COMPUTE_SLICES."""


@dataclass(frozen=True)
class MigProfile:
    """One MIG profile, e.g. `3g.40gb`: 3 compute slices, 40 GB."""

    name: str
    """Lower-cased as the device plugin spells it: `3g.40gb`."""
    compute: int
    memory_gb: int

    @property
    def resource(self) -> str:
        """The extended resource of one slice: `nvidia.com/mig-3g.40gb`."""
        return f"{MIG_RESOURCE_PREFIX}{self.name}"

    def fraction(self, parent: str = "") -> Fraction:
        """This slice's share of its parent GPU: compute slices / the parent's compute slices
        (3g.40gb of an H100 -> 3/7; 2g.12gb of an A30 -> 1/2), at most 1."""
        total = COMPUTE_SLICES.get(normalize_gpu_type(parent), DEFAULT_COMPUTE_SLICES)
        return min(Fraction(self.compute, total), Fraction(1))


def parse_profile(name: str | None) -> MigProfile | None:
    """The MIG profile a GPU type or profile names (`3g.40gb`, `H100-MIG-3G.40GB`,
    `nvidia_h100_80gb_hbm3_3g.40gb`), None for a whole GPU or a zero-slice profile."""
    profile = mig_profile(name)
    match = _PROFILE.match(profile or "")
    if match is None or int(match[1]) < 1:
        return None
    return MigProfile(match[0], int(match[1]), int(match[2]))


def parent_type(gpu_type: str | None) -> str:
    """The canonical parent type of a MIG type (`H100-MIG-3G.40GB` -> `H100`); "" when the
    type names no parent (`MIG-3G.40GB`) or is a whole GPU."""
    canonical = normalize_gpu_type(gpu_type or "")
    head, sep, _ = canonical.partition("-MIG-")
    return head if sep else ""


def slice_type(parent: str, profile: MigProfile) -> str:
    """The canonical GPU type of a slice of `parent`: `H100` + 3g.40gb -> `H100-MIG-3G.40GB`."""
    return normalize_gpu_type(f"{parent} {profile.name}") if parent else f"MIG-{profile.name}"


def slices_in(resources: Mapping[str, Any]) -> dict[str, int]:
    """MIG slices per profile in a resource map (a Node's allocatable, a container's
    requests): `{"nvidia.com/mig-3g.40gb": "2"}` -> `{"3g.40gb": 2}`. Unreadable or
    non-positive counts are left out."""
    out: dict[str, int] = {}
    for key, value in resources.items():
        if not str(key).startswith(MIG_RESOURCE_PREFIX):
            continue
        profile = parse_profile(str(key)[len(MIG_RESOURCE_PREFIX) :])
        try:
            count = int(str(value).strip())
        except ValueError:
            continue
        if profile is not None and count > 0:
            out[profile.name] = out.get(profile.name, 0) + count
    return out


def mig_type_matches(offered: str | None, wanted: str | None) -> bool:
    """True when a slice type on offer serves a job's MIG type: same profile, and the same
    parent unless the job names none (`MIG-3G.40GB` takes a 3g.40gb slice of any GPU)."""
    have, want = parse_profile(offered), parse_profile(wanted)
    if have is None or want is None or have.name != want.name:
        return False
    wanted_parent = parent_type(wanted)
    return not wanted_parent or wanted_parent == parent_type(offered)


def slot_key(node_name: str, gpu_type: str | None) -> str:
    """Where GPUs of `gpu_type` on a node are counted in a usage map: `node` for whole GPUs,
    `node/3g.40gb` for MIG slices (a node's slices and its whole GPUs are separate supplies)."""
    profile = parse_profile(gpu_type)
    return f"{node_name}/{profile.name}" if profile else node_name


def type_serves(offered: str | None, wanted: str | None) -> bool:
    """True when GPUs of type `offered` (a node's whole GPUs or one of its slice types) can
    take a pod asking for `wanted` (unset/`any` = any whole GPU): MIG jobs need slices of
    their profile (`mig_type_matches`), other jobs whole GPUs of their type; MIG slices never
    serve a whole-GPU job."""
    if parse_profile(wanted) is not None:
        return mig_type_matches(offered, wanted)
    if parse_profile(offered) is not None:
        return False
    return gpu_type_matches(wanted, offered)


def type_listed(requested: str | None, listed: str | None) -> bool:
    """True when a type in a list (a quota's `allowedGPUTypes`, a tenant's SKU types) covers
    the `requested` type: the same type, a variant of a listed family (`A100` covers
    `A100-80G`), or the parent of a requested MIG slice (allowing or
    pricing `H100` covers `H100-MIG-3G.40GB`, as slices are priced from their parent)."""
    if same_gpu_type(requested, listed) or (
        names_family(listed) and gpu_type_matches(listed, requested)
    ):
        return True
    parent = parent_type(requested)
    return bool(parent) and parse_profile(listed) is None and same_gpu_type(parent, listed)
