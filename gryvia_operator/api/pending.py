"""Why a job waits and when it should start: `status.pending`, `status.estimatedStart`, the
fail-fast rule ("this job can never run") and the one-line summary users read.

Shared by the operator (which writes the status) and the CLI (`gryvia submit --explain`,
`gryvia queue`, `gryvia status`), so both say the same thing. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

from gryvia_operator.api.base import GryviaModel, Int32, NonNegativeInt32, Str253, Str1024
from gryvia_operator.api.gputype import gpu_type_is_any
from gryvia_operator.api.messages import gpu_count
from gryvia_operator.api.mig import type_serves
from gryvia_operator.api.pendingtext import MAX_LISTED as MAX_LISTED
from gryvia_operator.api.pendingtext import NEVER_KINDS as NEVER_KINDS
from gryvia_operator.api.pendingtext import start_cell as start_cell
from gryvia_operator.api.pendingtext import start_text as start_text
from gryvia_operator.api.pendingtext import waiting_line as waiting_line

PendingKind = Literal[
    "Resources",
    "Quota",
    "Budget",
    "Reservation",
    "Priority",
    "NoSuchGPUType",
    "TooLarge",
    "Kueue",
    "Suspended",
    "DependencyWaiting",
    "Storage",
    "Dataset",
]
PENDING_KINDS: tuple[str, ...] = get_args(PendingKind)
EndBasis = Literal["timeout", "history", "unknown"]


class JobsAhead(GryviaModel):
    """Jobs that go before this one for the same GPUs or quota."""

    count: NonNegativeInt32 = 0
    """How many (exact)."""
    names: list[Str253] | None = None
    """The first few (at most 5), in queue order."""


class PendingHolder(GryviaModel):
    """A running job whose end frees GPUs (or quota) this job needs."""

    name: Str253
    """Job name (`namespace/name` when in another namespace)."""
    gpus: NonNegativeInt32 | None = None
    """GPUs it holds that this job could use."""
    expected_end: datetime | None = None
    """When it should end (UTC); unset when unknown."""
    basis: EndBasis | None = None
    """Where `expectedEnd` comes from: its timeout, the history of similar jobs, or unknown."""


class PendingStatus(GryviaModel):
    """The structured blocker of a waiting job (set only while it waits)."""

    kind: PendingKind
    """Resources, Quota, Budget, Reservation, Priority, NoSuchGPUType, TooLarge, Kueue,
    Suspended, DependencyWaiting or Storage (its data claim refused by a ResourceQuota, or not
    bound: `api.jobstorage`)."""
    resource: Str253 | None = None
    """What it waits for, e.g. `H100` (GPUs of that type), `quota team-a`, `budget team-a`."""
    needed: NonNegativeInt32 | None = None
    """GPUs the job needs in all."""
    free_now: NonNegativeInt32 | None = None
    """GPUs of its type free now on nodes that could take its pods."""
    free_in_quota: Int32 | None = None
    """GPUs its quota still allows (smallest over its quotas); unset without a quota."""
    ahead: JobsAhead | None = None
    """Jobs before it in the same queue."""
    holders: list[PendingHolder] | None = None
    """The few running jobs whose end would free enough, earliest end first (at most 5)."""
    message: Str1024 | None = None
    """The blocker in words."""


class EstimatedStart(GryviaModel):
    """When the job should start: a range, or unknown with the reason."""

    earliest: datetime | None = None
    """Start if no job ahead of it took the GPUs first (UTC)."""
    likely: datetime | None = None
    """Start after the jobs ahead of it, in queue order (UTC)."""
    unknown_reason: Str1024 | None = None
    """Why no start can be given (a holder without timeout or history, a job that never fits)."""


@dataclass(frozen=True)
class NeverFits:
    """Why a job can never run as asked: its kind (NoSuchGPUType/TooLarge) and the text."""

    kind: PendingKind
    resource: str
    message: str


def never_fits(
    gpu_type: str | None,
    per_pod: int,
    pods: int,
    inventory: Iterable[tuple[str, int]],
    sku_types: Iterable[str] = (),
    quota_max: int | None = None,
) -> NeverFits | None:
    """The fail-fast rule: None when the job could run some day, else why it never can.

    `inventory` is (GPU type label, GPUs or MIG slices per node) of every known GPU node
    (Ready or not: a node that is down may come back); `sku_types` the GPU types the catalog
    prices; `quota_max` the smallest `maxGPUs` of the job's quotas (None: no quota).
    Never: a GPU type no node and no SKU has (NoSuchGPUType); more GPUs per pod than any node
    of its type has, more pods than nodes of its type big enough, or more GPUs than the whole
    quota (TooLarge). A type no node has but an SKU prices may still join: not never.
    CPU-only jobs (`per_pod` 0) always fit.
    """
    if per_pod <= 0:
        return None
    total = per_pod * max(pods, 1)
    if quota_max is not None and total > quota_max:
        return NeverFits(
            "TooLarge",
            "quota",
            f"needs {gpu_count(total)}, more than its quota's whole {quota_max}",
        )
    shown = gpu_type if not gpu_type_is_any(gpu_type) else "GPU"
    inventory = list(inventory)
    sizes = [n for t, n in inventory if type_serves(t, gpu_type)]
    if not sizes:
        if gpu_type_is_any(gpu_type):
            return None  # no GPU node at all yet: any type may join
        if any(type_serves(t, gpu_type) or _same(t, gpu_type) for t in sku_types):
            return None
        types = sorted({t for t, _ in inventory if t})
        here = f"types here: {', '.join(types)}" if types else "no GPU node is registered"
        return NeverFits(
            "NoSuchGPUType",
            str(gpu_type),
            f'no node has GPU type "{gpu_type}" ({here}) and no catalog SKU prices it',
        )
    largest = max(sizes)
    if per_pod > largest:
        sliced = sorted({t for t, _ in inventory if t.upper().startswith(f"{shown}-MIG-".upper())})
        note = (
            f" (the rest of its GPUs are partitioned into MIG slices: {', '.join(sliced)})"
            if sliced
            else ""
        )
        return NeverFits(
            "TooLarge",
            str(shown),
            f"each pod needs {per_pod} {shown}, the largest {shown} node has {largest}{note}",
        )
    big_enough = sum(1 for n in sizes if n >= per_pod)
    if pods > big_enough:
        return NeverFits(
            "TooLarge",
            str(shown),
            f"needs {pods} nodes with {per_pod} {shown} each, only {big_enough} exist",
        )
    return None


def _same(listed: str, wanted: str | None) -> bool:
    return bool(wanted) and listed.strip().lower() == str(wanted).strip().lower()
