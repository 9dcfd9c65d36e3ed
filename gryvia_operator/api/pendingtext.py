"""The words people read about a waiting job, from `status.pending` and
`status.estimatedStart`: the one-line summary (`gryvia status`, the console) and the START
cell (`gryvia queue`). Free of pydantic, so the list views that only print these words do
not pay for building the models (`api/pending.py` holds the models and re-exports these).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gryvia_operator.api.pending import EstimatedStart, PendingHolder, PendingStatus

NEVER_KINDS = frozenset({"NoSuchGPUType", "TooLarge"})
"""Blockers no amount of waiting removes: `gryvia submit` exits 3 for them (unless --force)."""
MAX_LISTED = 5
"""Names listed in `ahead.names` and `holders` (the counts stay exact)."""


def _clock(when: datetime | None) -> str:
    return when.strftime("%H:%M") if when is not None else "?"


def _names(names: Sequence[str], count: int) -> str:
    shown = ", ".join(names)
    return shown + (f", +{count - len(names)} more" if count > len(names) else "")


def waiting_line(pending: PendingStatus | None, estimate: EstimatedStart | None) -> str:
    """One line for people, e.g. `waiting: needs 16 H100, 8 free; 2 jobs ahead (a, b); likely
    start 14:20-15:05 UTC, when job c (ends 14:20) and d (ends 15:05) finish`. "" when the
    job does not wait. An unknown start whose reason is the blocker's message is not said
    twice (Kueue, Suspended, Storage)."""
    if pending is None:
        return ""
    parts: list[str] = []
    what = pending.resource or "GPUs"
    if pending.kind in NEVER_KINDS:
        parts.append(f"never starts: {pending.message or pending.kind}")
    elif pending.kind in ("Resources", "Priority") and pending.needed is not None:
        free = f", {pending.free_now} free" if pending.free_now is not None else ""
        parts.append(f"needs {pending.needed} {what}{free}")
    elif pending.kind in ("Quota", "Budget") and pending.message:
        parts.append(pending.message)
    else:
        parts.append(pending.message or pending.kind)
    ahead = pending.ahead
    if ahead is not None and ahead.count:
        noun = "job" if ahead.count == 1 else "jobs"
        parts.append(f"{ahead.count} {noun} ahead ({_names(ahead.names or [], ahead.count)})")
    if estimate is not None and pending.kind not in NEVER_KINDS and not _said(estimate, pending):
        parts.append(start_text(estimate, pending.holders or []))
    return "waiting: " + "; ".join(p for p in parts if p)


def _said(estimate: EstimatedStart, pending: PendingStatus) -> bool:
    return estimate.likely is None and estimate.unknown_reason == pending.message


def start_text(estimate: EstimatedStart, holders: Sequence[PendingHolder] = ()) -> str:
    """`likely start 14:20-15:05 UTC, when job c (ends 14:20) and d (ends 15:05) finish`, or
    `start unknown: <reason>`."""
    if estimate.likely is None:
        return f"start unknown: {estimate.unknown_reason or 'no estimate'}"
    likely = _clock(estimate.likely)
    earliest = _clock(estimate.earliest) if estimate.earliest is not None else likely
    span = likely if earliest == likely else f"{earliest}-{likely}"
    text = f"likely start {span} UTC"
    known = [h for h in holders if h.expected_end is not None]
    if known:
        listed = [f"{h.name} (ends {_clock(h.expected_end)})" for h in known[:MAX_LISTED]]
        joined = listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]
        text += f", when job {joined} finish" + ("es" if len(listed) == 1 else "")
    return text


def start_cell(estimate: EstimatedStart | None, pending: PendingStatus | None) -> str:
    """The START column of `gryvia queue`: `14:20-15:05`, `never`, `unknown` or ``."""
    if pending is not None and pending.kind in NEVER_KINDS:
        return "never"
    if estimate is None:
        return ""
    if estimate.likely is None:
        return "unknown"
    likely = _clock(estimate.likely)
    earliest = _clock(estimate.earliest) if estimate.earliest is not None else likely
    return likely if earliest == likely else f"{earliest}-{likely}"
