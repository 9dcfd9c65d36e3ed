"""Slurm job arrays as one GryviaAIJob per index, and how the `%N` throttle is kept.

Source: sbatch(1) -a/--array and Slurm's "Job Array Support" page. Each index becomes its own
job named `<name>-<index>`, labelled `gryvia.io/array-name=<name>` and
`gryvia.io/array-index=<index>`, annotated `gryvia.io/array-max-parallel=<N>` when `%N` is given.

Throttle: the first N elements (lowest indices) are created normally and the others with
`spec.suspend: true` (a suspended GryviaAIJob keeps its batch Job suspended: no pods). Whoever
watches the array - `gryvia submit --sbatch`'s wait loop, or a controller watching the label -
lists the elements, calls `plan_release()` with what it sees and un-suspends the names it
returns (merge patch `{"spec": {"suspend": false}}`). Lowest indices go first and at most N
elements are ever unsuspended and unfinished at once, which is what Slurm's `%N` means.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

ARRAY_NAME_LABEL: Final = "gryvia.io/array-name"
ARRAY_INDEX_LABEL: Final = "gryvia.io/array-index"
ARRAY_MAX_PARALLEL_ANNOTATION: Final = "gryvia.io/array-max-parallel"
FINISHED_PHASES: Final = frozenset({"Succeeded", "Completed", "Failed", "Cancelled", "Rejected"})


def element_name(base: str, index: int) -> str:
    """The Kubernetes name of array element `index`."""
    return f"{base}-{index}"


def suffix_length(indices: Iterable[int]) -> int:
    """Characters the longest `-<index>` suffix adds to the base name."""
    return max((len(f"-{index}") for index in indices), default=0)


@dataclass(frozen=True)
class ArrayElement:
    """What the throttle needs to know about one element."""

    name: str
    index: int
    suspended: bool
    finished: bool


def element_from_job(job: Mapping[str, Any]) -> ArrayElement:
    """Read an element from a GryviaAIJob object (a dict as the API returns it)."""
    metadata = job.get("metadata", {})
    labels = metadata.get("labels", {}) or {}
    phase = (job.get("status") or {}).get("phase", "")
    return ArrayElement(
        name=metadata.get("name", ""),
        index=int(labels.get(ARRAY_INDEX_LABEL, 0)),
        suspended=bool((job.get("spec") or {}).get("suspend", False)),
        finished=phase in FINISHED_PHASES,
    )


def plan_release(elements: Iterable[ArrayElement], max_parallel: int | None) -> list[str]:
    """Names of suspended elements to un-suspend now, lowest index first, so that at most
    `max_parallel` elements are unsuspended and unfinished at once (None: release all)."""
    items = list(elements)
    waiting = sorted((e for e in items if e.suspended and not e.finished), key=lambda e: e.index)
    if max_parallel is None:
        return [element.name for element in waiting]
    active = sum(1 for element in items if not element.suspended and not element.finished)
    free = max(max_parallel - active, 0)
    return [element.name for element in waiting[:free]]
