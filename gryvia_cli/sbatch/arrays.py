"""Slurm job arrays as one GryviaAIJob per index, and how the `%N` throttle is kept.

Source: sbatch(1) -a/--array and Slurm's "Job Array Support" page. Each index becomes its own
job named `<name>-<index>`, labelled `gryvia.io/array-name=<name>` and
`gryvia.io/array-index=<index>`, annotated `gryvia.io/array-max-parallel=<N>` when `%N` is given.

Throttle: the first N elements (lowest indices) are created normally and the others with
`spec.suspend: true` (a suspended GryviaAIJob keeps its batch Job suspended: no pods). The
operator's array controller watches the label and un-suspends the next elements as others
finish (`gryvia_operator.api.arrays.plan_release`, shared with this package): lowest indices
first, and at most N elements are ever unsuspended and unfinished at once, which is what
Slurm's `%N` means.
"""

from __future__ import annotations

from collections.abc import Iterable

from gryvia_operator.api.arrays import (
    FINISHED_PHASES,
    ArrayElement,
    element_from_job,
    plan_release,
)

__all__ = [
    "FINISHED_PHASES",
    "ArrayElement",
    "element_from_job",
    "element_name",
    "plan_release",
    "suffix_length",
]


def element_name(base: str, index: int) -> str:
    """The Kubernetes name of array element `index`."""
    return f"{base}-{index}"


def suffix_length(indices: Iterable[int]) -> int:
    """Characters the longest `-<index>` suffix adds to the base name."""
    return max((len(f"-{index}") for index in indices), default=0)
