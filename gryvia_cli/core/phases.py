"""Job phases as the CLI shows and groups them: normalising, buckets, markers, counts."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from gryvia_operator.api import ACTIVE_PHASES, PENDING_PHASES, TERMINAL_PHASES, JobPhase

_ALIASES = {"completed": JobPhase.SUCCEEDED, "complete": JobPhase.SUCCEEDED}
_BY_LOWER = {phase.value.lower(): phase for phase in JobPhase}
_CANONICAL = frozenset(phase.value for phase in JobPhase)


class Bucket(StrEnum):
    """Coarse groups of phases: what holds GPUs, what waits, how it ended."""

    WAITING = "waiting"
    """Pending or Queued: admitted or not, nothing placed yet."""
    ACTIVE = "active"
    """Scheduling or Running: placed, holding (or about to hold) GPUs."""
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    STOPPED = "stopped"
    """Cancelled, Preempted or Rejected."""
    OTHER = "other"
    """A phase string this client does not know."""


def normalize_phase(value: object) -> str:
    """The canonical phase name: "" or None -> `Pending`, any case accepted, `Completed` ->
    `Succeeded`; an unknown string is returned stripped as it is."""
    if type(value) is str and value in _CANONICAL:  # what the operator writes: as it is
        return value
    text = str(value or "").strip()
    if not text:
        return JobPhase.PENDING.value
    lower = text.lower()
    if lower in _ALIASES:
        return _ALIASES[lower].value
    phase = _BY_LOWER.get(lower)
    return phase.value if phase else text


def parse_phase(text: str, *, option: str = "--phase") -> str:
    """The canonical phase a user typed (any case, `Completed` for Succeeded). Raises
    ValueError naming `option` and listing the phases for anything else (`Runing`)."""
    name = normalize_phase(text)
    if not text.strip() or name.lower() not in _BY_LOWER:
        valid = ", ".join(phase.value for phase in JobPhase)
        raise ValueError(f"{option} {text!r} is not a job phase; use one of: {valid}")
    return name


def bucket(value: object) -> Bucket:
    """The Bucket of a phase string (see `normalize_phase`)."""
    name = normalize_phase(value)
    phase = _BY_LOWER.get(name.lower())
    if phase is None:
        return Bucket.OTHER
    if phase in PENDING_PHASES:
        return Bucket.WAITING
    if phase in ACTIVE_PHASES:
        return Bucket.ACTIVE
    if phase is JobPhase.SUCCEEDED:
        return Bucket.SUCCEEDED
    if phase is JobPhase.FAILED:
        return Bucket.FAILED
    return Bucket.STOPPED


def is_terminal(value: object) -> bool:
    """True for Succeeded, Failed, Rejected, Preempted and Cancelled."""
    phase = _BY_LOWER.get(normalize_phase(value).lower())
    return phase in TERMINAL_PHASES


def phase_marker(value: object) -> str:
    """Marker colour of a phase: ok (Running, Succeeded), warn (waiting or scheduling),
    error (Failed, Rejected), disabled (Cancelled, Preempted), unknown (anything else)."""
    return _MARKERS.get(normalize_phase(value), "unknown")


def _marker(name: str) -> str:
    if name in (JobPhase.RUNNING, JobPhase.SUCCEEDED):
        return "ok"
    if name in (JobPhase.FAILED, JobPhase.REJECTED):
        return "error"
    if name in (JobPhase.CANCELLED, JobPhase.PREEMPTED):
        return "disabled"
    if bucket(name) in (Bucket.WAITING, Bucket.ACTIVE):
        return "warn"
    return "unknown"


_MARKERS = {phase.value: _marker(phase.value) for phase in JobPhase}


def count_phases(phases: Iterable[object]) -> dict[str, int]:
    """Count jobs per canonical phase, every known phase present (0 included) in lifecycle
    order, unknown phases appended."""
    counts = {phase.value: 0 for phase in JobPhase}
    for value in phases:
        name = normalize_phase(value)
        counts[name] = counts.get(name, 0) + 1
    return counts
