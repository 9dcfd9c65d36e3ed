"""Which log `gryvia logs` shows for each replica: its newest pod, else the saved last lines.

Pure. The operator saves the last lines of a job's deleted pods in the ConfigMap `<job>-logs`
(format in `gryvia_operator.api.savedlogs`); a replica without a pod falls back to that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gryvia_operator.api.savedlogs import SavedLog


@dataclass(frozen=True)
class Source:
    """One replica's log to show: a live `pod`, or a `saved` log (exactly one is set)."""

    replica: int | None
    pod: Mapping[str, Any] | None = None
    saved: SavedLog | None = None


def every_replica(
    newest: Mapping[int | None, Mapping[str, Any]],
    saved: Mapping[int, SavedLog],
    replicas: int,
) -> tuple[list[Source], list[int]]:
    """For `--all-replicas`: a Source per replica in replica order (a pod wins over a saved
    log; pods without a replica number last), and the replicas 0..replicas-1 with neither."""
    numbers = sorted({n for n in newest if n is not None} | set(saved))
    out = [Source(n, pod=newest[n]) if n in newest else Source(n, saved=saved[n]) for n in numbers]
    if None in newest:
        out.append(Source(None, pod=newest[None]))
    missing = [n for n in range(replicas) if n not in newest and n not in saved]
    return out, missing


def one_replica(
    newest: Mapping[int | None, Mapping[str, Any]],
    saved: Mapping[int, SavedLog],
    replica: int | None,
) -> Source | None:
    """The Source for `--replica N` (or replica 0 without it): its pod, else its saved log;
    None when it has neither (the caller then picks another replica or says why)."""
    wanted = 0 if replica is None else replica
    if wanted in newest:
        return Source(wanted, pod=newest[wanted])
    if wanted in saved:
        return Source(wanted, saved=saved[wanted])
    return None


def first_saved(saved: Mapping[int, SavedLog]) -> Source | None:
    """The lowest replica's saved log, or None without any."""
    return Source(min(saved), saved=saved[min(saved)]) if saved else None


def saved_lines(saved: SavedLog, tail: int | None) -> list[str]:
    """The saved lines to print: the last `tail` (all for None), the cut marker included only
    when every kept line is shown."""
    lines = saved.text_lines()
    return lines if tail is None else lines[-tail:] if tail else []


def saved_note(job: str, saved: SavedLog) -> str:
    """The stderr line saying a saved log is shown, when it was saved and whether it is cut."""
    cut = (
        "; cut: the log was longer, earlier lines were not kept"
        if saved.cut
        else "; that is the whole log"
    )
    return (
        f"replica {saved.replica} of job {job} has no pod (pod {saved.pod} was deleted); "
        f"showing the last {saved.lines} line(s) the operator saved at {saved.saved_at}{cut}"
    )
