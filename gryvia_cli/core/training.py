"""`gryvia gpu training`: each rank's GPU use, the straggler, and what to look at.

A rank is one GPU of the job, numbered as PyTorch's torchrun numbers them with one process per
GPU: `RANK = replica x GPUs per pod + local rank`, local ranks in the order of the pod's GPU
indices. The straggler is the replica whose step rate (from the trainer's step lines, with
the log's timestamps) is below 80 % of the median of the replicas' rates; without step lines,
the rank whose GPU activity is below 80 % of the median activity. Lines are data: only
matched, never run or rendered as markup.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from gryvia_cli.core.gpuuse import GpuUse

SLOW = 0.8
"""A replica or rank below this share of the median is the straggler."""
_STEP = re.compile(r"\b(?:step|iter(?:ation)?)\b[\s=:#]*(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class Rank:
    """One rank: its GPU's use as read now."""

    rank: int
    use: GpuUse


@dataclass(frozen=True)
class Straggler:
    """The slowest replica or rank, and why it counts as one."""

    replica: int | None
    rank: int | None
    reason: str


def ranks(rows: Sequence[GpuUse], gpus_per_pod: int) -> list[Rank]:
    """Number `rows` (one per GPU, by replica then GPU index) as torchrun's global ranks."""
    out = []
    local: dict[int | None, int] = {}
    for use in sorted(rows, key=lambda u: (u.replica if u.replica is not None else -1, u.gpu)):
        index = local.get(use.replica, 0)
        local[use.replica] = index + 1
        base = (use.replica or 0) * max(gpus_per_pod, 1)
        out.append(Rank(base + index, use))
    return out


def step_rate(lines: Iterable[str]) -> float | None:
    """Steps per second from timestamped log lines (`<RFC 3339> <text>`, as the API server's
    `timestamps=true` writes them) that name a step number; None with fewer than two such
    lines or no time between them."""
    seen: list[tuple[datetime, int]] = []
    for line in lines:
        stamp, _, text = line.partition(" ")
        match = _STEP.search(text)
        if not match:
            continue
        try:
            when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            continue
        seen.append((when, int(match[1])))
    if len(seen) < 2:
        return None
    (t0, s0), (t1, s1) = seen[0], seen[-1]
    seconds = (t1 - t0).total_seconds()
    return (s1 - s0) / seconds if seconds > 0 and s1 > s0 else None


def straggler(by_rank: Sequence[Rank], rates: Mapping[int, float]) -> Straggler | None:
    """The straggler (see the module), or None when no replica or rank lags."""
    if len(rates) >= 2:
        median = statistics.median(rates.values())
        replica, rate = min(rates.items(), key=lambda item: item[1])
        if rate < SLOW * median:
            why = f"{rate:.2f} steps/s against a median of {median:.2f} (step lines)"
            return Straggler(replica, None, why)
        return None
    measured = [r for r in by_rank if r.use.activity is not None]
    if len(measured) < 2:
        return None
    median = statistics.median(r.use.activity or 0.0 for r in measured)
    low = min(measured, key=lambda r: r.use.activity or 0.0)
    if (low.use.activity or 0.0) < SLOW * median:
        why = f"GPU activity {low.use.activity:.0f} % against a median of {median:.0f} %"
        return Straggler(low.use.replica, low.rank, why)
    return None


def advice(found: Straggler | None, by_rank: Sequence[Rank], job: str) -> list[str]:
    """What to look at next."""
    if found is None:
        mean = [r.use.activity for r in by_rank if r.use.activity is not None]
        if mean and statistics.fmean(mean) < 50:
            return [
                "Every rank is under-used alike: look at the input pipeline (data loading),"
                " the batch size and mixed precision; `gryvia seff` gives the job's totals."
            ]
        return ["No rank lags the others."]
    nodes = sorted({r.use.node for r in by_rank if r.use.replica == found.replica})
    return [
        f"Look at replica {found.replica}'s node {', '.join(nodes) or '-'}"
        " (`gryvia health gpu`), its data loading (a slow input pipeline or disk starves one"
        f" rank), and the network between ranks (`gryvia gpu nccl --job {job}`)."
    ]
