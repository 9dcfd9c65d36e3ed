"""Rules every component shares: job phases, GPU arithmetic, durations.

GPU type names are `gryvia_operator.api.gputype`."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from enum import StrEnum

MAX_TOTAL_GPUS = 1024
"""The largest total GPU count (pods x GPUs per pod) a job may request."""


class JobPhase(StrEnum):
    """Lifecycle phase of a GryviaAIJob (`status.phase`)."""

    PENDING = "Pending"
    QUEUED = "Queued"
    SCHEDULING = "Scheduling"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    REJECTED = "Rejected"
    PREEMPTED = "Preempted"
    CANCELLED = "Cancelled"


PENDING_PHASES = frozenset({JobPhase.PENDING, JobPhase.QUEUED})
"""Waiting for admission or placement; nothing holds GPUs yet. A missing phase counts as Pending."""
ACTIVE_PHASES = frozenset({JobPhase.SCHEDULING, JobPhase.RUNNING})
"""Placed or running: these jobs hold GPUs (quota, admission gate, capacity)."""
TERMINAL_PHASES = frozenset(
    {
        JobPhase.SUCCEEDED,
        JobPhase.FAILED,
        JobPhase.REJECTED,
        JobPhase.PREEMPTED,
        JobPhase.CANCELLED,
    }
)
"""Sticky end states: the workload is gone or finished, metering closes, cancel is a no-op."""


def phase_of(value: str | None) -> JobPhase:
    """Return the JobPhase of a `status.phase` string; None or "" mean Pending.

    Raises ValueError for a string that is not a phase.
    """
    if not value:
        return JobPhase.PENDING
    return JobPhase(value)


# --- GPU arithmetic -------------------------------------------------------------------------


def pod_count(*, distributed: bool, nodes: int | None) -> int:
    """Pods (workers) of a job: `max(nodes, 1)` when distributed, else 1."""
    if not distributed:
        return 1
    return max(nodes or 0, 1)


def gpus_per_pod(*, gpus: int, distributed: bool, gpus_per_node: int | None) -> int:
    """GPUs each pod requests: `gpusPerNode` when distributed and > 0, else `gpus` (>= 0).

    `spec.gpus` is the per-pod count everywhere (pod limits, placement, totals, metering), so a
    distributed job without `gpusPerNode` gets `gpus` per pod, never a silent 1.
    """
    if distributed and gpus_per_node is not None and gpus_per_node > 0:
        return gpus_per_node
    return max(gpus, 0)


def total_gpus(
    *, gpus: int, distributed: bool, nodes: int | None, gpus_per_node: int | None
) -> int:
    """Total GPUs of a job: `pod_count x gpus_per_pod` (what quota, budgets and metering use)."""
    per_pod = gpus_per_pod(gpus=gpus, distributed=distributed, gpus_per_node=gpus_per_node)
    return pod_count(distributed=distributed, nodes=nodes) * per_pod


# --- Durations ------------------------------------------------------------------------------


class DurationError(ValueError):
    """A duration string is malformed or not positive; the message starts with the field name."""

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(f"{field}: {detail}")
        self.field = field
        self.detail = detail


_UNIT_NS = {
    "ns": Decimal(1),
    "us": Decimal(10) ** 3,
    "µs": Decimal(10) ** 3,
    "μs": Decimal(10) ** 3,
    "ms": Decimal(10) ** 6,
    "s": Decimal(10) ** 9,
    "m": Decimal(60) * 10**9,
    "h": Decimal(3600) * 10**9,
}
_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_UNIT = r"(?:ns|us|µs|μs|ms|s|m|h)"
_DURATION_RE = re.compile(rf"^(?:(?P<days>[0-9]+)d)?(?P<rest>(?:{_NUMBER}{_UNIT})*)$")
_PART_RE = re.compile(rf"({_NUMBER})({_UNIT})")
DURATION_PATTERN = rf"^([0-9]+d)?({_NUMBER}{_UNIT})*$"
"""Regex of a duration string, also used as the CRD `pattern` (an empty string is unset)."""
DURATION_HINT = "use a whole number of days and/or Go units, e.g. 90m, 24h, 7d, 1d12h"


def parse_duration(text: str, *, field: str = "spec.timeout") -> int:
    """Parse `<n>d` followed by a Go duration (`90m`, `24h`, `7d`, `1d12h`, `1h30m`) to seconds.

    Returns whole seconds, rounded up so that a positive duration never becomes 0.
    Raises DurationError (a ValueError whose message starts with `field`) when the text is
    empty, malformed or not positive.
    """
    raw = text.strip()
    match = _DURATION_RE.match(raw)
    if not raw or match is None:
        raise DurationError(field, f'invalid duration "{text}"; {DURATION_HINT}')
    nanos = Decimal(int(match.group("days") or 0)) * 86400 * 10**9
    for number, unit in _PART_RE.findall(match.group("rest")):
        try:
            nanos += Decimal(number) * _UNIT_NS[unit]
        except InvalidOperation as exc:  # pragma: no cover - the regex admits only numbers
            raise DurationError(field, f'invalid duration "{text}"; {DURATION_HINT}') from exc
    whole_nanos = int(nanos)  # Go truncates fractions of a nanosecond
    if whole_nanos <= 0:
        raise DurationError(field, f'duration must be positive, got "{text}"')
    return math.ceil(Decimal(whole_nanos) / 10**9)


def format_duration(seconds: int) -> str:
    """Format whole seconds in the shortest `1d12h30m5s` form that parse_duration reads back.

    Raises ValueError for seconds < 1.
    """
    if seconds < 1:
        raise ValueError(f"duration must be positive, got {seconds} seconds")
    out = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            out.append(f"{count}{unit}")
    return "".join(out)
