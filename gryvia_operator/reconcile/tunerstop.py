"""Early stopping of an AutoTuner's trials, pure: the median stopping rule and ASHA over the
intermediate reports (`GRYVIA_METRIC ... step=<n>` lines) of the running and completed
trials (docs/tuning.md)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from gryvia_operator.api.autotuner import EarlyStopping, Goal

Report = tuple[int, float]
"""(step, value) of one intermediate report."""


def better(a: float, b: float, goal: Goal) -> bool:
    """Whether value `a` beats `b` under `goal`."""
    return a > b if goal == "maximize" else a < b


def _best(values: Sequence[float], goal: Goal) -> float:
    return max(values) if goal == "maximize" else min(values)


def median_stop(
    reports: Sequence[Report],
    completed: Sequence[Sequence[Report]],
    goal: Goal,
    es: EarlyStopping,
) -> str | None:
    """Vizier's median stopping rule: at the trial's latest step s (>= startStep), stop when
    its best value up to s is worse than the median of the running averages up to s of the
    completed trials (at least minTrials of them with a report at or before s). Returns why,
    or None to keep it running."""
    if not reports:
        return None
    s = reports[-1][0]
    if s < es.start_step:
        return None
    averages = [
        statistics.fmean(v for st, v in c if st <= s)
        for c in completed
        if any(st <= s for st, _ in c)
    ]
    if len(averages) < es.min_trials:
        return None
    best = _best([v for st, v in reports if st <= s], goal)
    median = statistics.median(averages)
    if not better(median, best, goal):
        return None
    return (
        f"median stopping: best {best:g} by step {s} is worse than the median {median:g} "
        f"of {len(averages)} completed trials"
    )


def rung_value(reports: Sequence[Report], rung_step: int) -> float | None:
    """A trial's value at a rung: its first report at or after `rung_step`."""
    return next((v for st, v in reports if st >= rung_step), None)


def asha_stop(
    reports: Sequence[Report],
    others: Sequence[Sequence[Report]],
    judged: int | None,
    goal: Goal,
    es: EarlyStopping,
) -> tuple[int | None, str | None]:
    """ASHA for one running trial: the highest rung k (step minStep x factor^k) it reached
    and was not judged at yet; it stays only if its rung value is among the top
    max(1, n // factor) of the n trials' values at that rung (itself and `others`, every
    trial with a report there). Returns (the rung judged or `judged`, why it stops or None)."""
    if not reports:
        return judged, None
    top_step = reports[-1][0]
    k = -1
    while es.min_step * es.reduction_factor ** (k + 1) <= top_step:
        k += 1
    if k < 0 or (judged is not None and k <= judged):
        return judged, None
    rung_step = es.min_step * es.reduction_factor**k
    mine = rung_value(reports, rung_step)
    assert mine is not None
    values = [v for o in others if (v := rung_value(o, rung_step)) is not None]
    ranked = sorted([mine, *values], reverse=goal == "maximize")
    keep = max(1, len(ranked) // es.reduction_factor)
    if not better(ranked[keep - 1], mine, goal):
        return k, None
    return k, (
        f"ASHA: value {mine:g} at rung {k} (step {rung_step}) is not in the top {keep} "
        f"of {len(ranked)}"
    )
