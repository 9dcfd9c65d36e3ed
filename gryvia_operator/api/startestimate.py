"""The start estimate of a waiting job: replay the expected ends of the running jobs and the
jobs ahead of it in the queue until it fits.

Pure and shared by the operator (`status.estimatedStart`) and `gryvia submit --explain`.
A pool is a set of slots with free GPUs: the nodes that could take the job's pods (one pod per
node, each needing `per_pod` GPUs), or one slot for a quota (the whole job on it).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from gryvia_operator.api.pending import MAX_LISTED, EndBasis


@dataclass(frozen=True)
class Running:
    """A job holding GPUs of the pool: how many on which slot, and when it should end."""

    name: str
    held: Mapping[str, int]
    """Slot (node, or the quota) -> GPUs it holds there."""
    end: datetime | None
    """Expected end (UTC); None when unknown."""
    basis: EndBasis = "unknown"
    unknown_reason: str = ""
    """Why `end` is None, e.g. `job b has no timeout and no finished job like it`."""


@dataclass(frozen=True)
class Waiting:
    """A job that waits for the same pool: its shape and how long it should run."""

    name: str
    per_pod: int
    pods: int = 1
    duration: timedelta | None = None
    """Its timeout or the history of similar jobs; None when unknown."""
    unknown_reason: str = ""
    basis: EndBasis = "timeout"
    """Where `duration` comes from."""


@dataclass(frozen=True)
class Forecast:
    """The outcome: the range, or why none, and the holders whose end frees enough."""

    earliest: datetime | None
    likely: datetime | None
    unknown_reason: str = ""
    holders: tuple[Running, ...] = field(default_factory=tuple)
    never: bool = False
    """True when it does not fit even after every running job ends."""


def fits(free: Mapping[str, int], per_pod: int, pods: int) -> bool:
    """True when `pods` distinct slots each have `per_pod` GPUs free."""
    return sum(1 for n in free.values() if n >= per_pod) >= pods


def take(free: dict[str, int], per_pod: int, pods: int) -> dict[str, int]:
    """Take `per_pod` GPUs on `pods` slots (most free first, then by name) out of `free`;
    return what was taken. Call only when `fits`."""
    chosen = sorted((s for s, n in free.items() if n >= per_pod), key=lambda s: (-free[s], s))
    taken = {slot: per_pod for slot in chosen[:pods]}
    for slot, count in taken.items():
        free[slot] -= count
    return taken


def _order(run: Running) -> tuple[bool, datetime, str]:
    return (run.end is None, run.end or datetime.max.replace(tzinfo=None), run.name)


def _replay(
    free_now: Mapping[str, int],
    running: Sequence[Running],
    queue: Sequence[Waiting],
    ask: Waiting,
    now: datetime,
    strict: bool,
) -> tuple[datetime | None, list[Running], Running | None]:
    """(start, the runs whose end was used, the first unknown end used), start None when
    never. Jobs in `queue` start as soon as they fit, in order; `strict` stops at the first
    that does not (a quota queue: no backfill)."""
    free = dict(free_now)
    events = sorted(running, key=lambda r: _order(r)) if running else []
    waiting = [*queue, ask]
    released: list[Running] = []
    blind: Running | None = None

    def drain(at: datetime) -> bool:
        for job in list(waiting):
            if not fits(free, job.per_pod, job.pods):
                if strict:
                    return False
                continue
            if job is ask:
                return True
            waiting.remove(job)
            held = take(free, job.per_pod, job.pods)
            end = at + job.duration if job.duration is not None and blind is None else None
            basis: EndBasis = job.basis if end is not None else "unknown"
            reason = job.unknown_reason or f"job {job.name} ahead has no known duration"
            events.append(Running(job.name, held, end, basis, "" if end else reason))
            events.sort(key=_order)
        return False

    at = now
    if drain(at):
        return at, released, None
    while events:
        run = events.pop(0)
        released.append(run)
        if run.end is None:
            blind = blind or run
        else:
            at = max(at, run.end)
        for slot, count in run.held.items():
            free[slot] = free.get(slot, 0) + count
        if drain(at):
            return at, released, blind
    return None, released, blind


def forecast(
    free_now: Mapping[str, int],
    ask: Waiting,
    running: Sequence[Running] = (),
    ahead: Sequence[Waiting] = (),
    *,
    now: datetime,
    strict: bool = False,
) -> Forecast:
    """The start range of `ask` in a pool with `free_now` GPUs per slot.

    likely: replay the running jobs' expected ends, earliest first; after each, the jobs
    `ahead` (in queue order) and then `ask` start when they fit. earliest: the same without
    the jobs ahead. Unknown (None, with the reason) once an end it waits for is unknown;
    `never` when it does not fit even on an empty pool. Times are whole seconds (UTC).
    """
    start, _released, blind = _replay(free_now, running, ahead, ask, now, strict)
    first, first_released, first_blind = _replay(free_now, running, (), ask, now, strict)
    holders = tuple(first_released[:MAX_LISTED])
    if start is None and first is None and blind is None and first_blind is None:
        return Forecast(None, None, "does not fit even when every running job ends", (), True)
    earliest = _whole(first) if first is not None and first_blind is None else None
    if start is None or blind is not None:
        reason = (blind or first_blind or Running("", {}, None)).unknown_reason or (
            "a job it waits for has no known end"
        )
        return Forecast(earliest, None, reason, holders)
    return Forecast(earliest, _whole(start), "", holders)


def _whole(when: datetime) -> datetime:
    return when.replace(microsecond=0)


def typical_duration(durations: Iterable[float]) -> timedelta | None:
    """The median of past run lengths in seconds (None without any), to whole seconds."""
    values = [d for d in durations if d > 0]
    if not values:
        return None
    return timedelta(seconds=round(statistics.median(values)))


def expected_end(
    name: str,
    started: datetime | None,
    timeout_seconds: int | None,
    history: timedelta | None,
    now: datetime,
) -> tuple[datetime | None, EndBasis, str]:
    """(expected end, basis, reason when unknown) of a running job: start + timeout, else
    start + the typical duration of similar jobs, else unknown. A job that already ran longer
    than similar ones has an unknown end (it is not like them)."""
    if started is None:
        return None, "unknown", f"job {name} has no start time yet"
    if timeout_seconds:
        return _whole(started + timedelta(seconds=timeout_seconds)), "timeout", ""
    if history is not None:
        end = _whole(started + history)
        if end >= now:
            return end, "history", ""
        return (
            None,
            "unknown",
            f"job {name} has no timeout and has run longer than similar jobs "
            f"(typically {_span(history)})",
        )
    return (
        None,
        "unknown",
        f"job {name} has no timeout and no finished job like it (same tenant and GPU type)",
    )


def _span(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m"
