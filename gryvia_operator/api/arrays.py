"""Job arrays: the labels of an array's elements and the `%N` throttle rule.

Shared by the sbatch importer (which creates elements beyond the first N with
`spec.suspend: true`) and the operator (which un-suspends the next elements as others finish).
Source: sbatch(1) `-a/--array` ("%N: at most N tasks running simultaneously").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from gryvia_operator.api.names import (
    ANNOTATION_ARRAY_MAX_PARALLEL,
    LABEL_ARRAY_INDEX,
)

FINISHED_PHASES: Final = frozenset({"Succeeded", "Completed", "Failed", "Cancelled", "Rejected"})


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
    try:
        index = int(labels.get(LABEL_ARRAY_INDEX, 0))
    except ValueError:
        index = 0
    return ArrayElement(
        name=metadata.get("name", ""),
        index=index,
        suspended=bool((job.get("spec") or {}).get("suspend", False)),
        finished=phase in FINISHED_PHASES,
    )


def max_parallel_of(job: Mapping[str, Any]) -> int | None:
    """The array's `%N` from an element's annotation, or None when unthrottled or unreadable."""
    raw = ((job.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_ARRAY_MAX_PARALLEL)
    try:
        value = int(raw) if raw is not None else None
    except ValueError:
        return None
    return value if value is not None and value > 0 else None


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
