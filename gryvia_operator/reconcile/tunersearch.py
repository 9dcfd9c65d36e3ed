"""GryviaAutoTuner search, pure: the parameters of trial i, from a grid (every combination in
order) or from random draws seeded with the tuner's seed and i only (docs/tuning.md)."""

from __future__ import annotations

import itertools
import math
import random

from gryvia_operator.api.autotuner import GryviaAutoTunerSpec, TunerParameter


def _linspace(lo: float, hi: float, n: int) -> list[float]:
    return [lo] if n == 1 else [lo + (hi - lo) * i / (n - 1) for i in range(n)]


def grid_axis(p: TunerParameter) -> list[str]:
    """The values a grid search takes of one parameter: the choices, every integer of an int
    range by `step`, or `gridPoints` evenly spaced points of a float range (geometric for
    logUniform), ends included."""
    if p.type == "choice":
        return list(p.values or [])
    lo, hi = float(p.min or 0), float(p.max or 0)
    if p.type == "int":
        return [str(v) for v in range(int(lo), int(hi) + 1, p.step)]
    if p.type == "logUniform":
        points = [math.exp(v) for v in _linspace(math.log(lo), math.log(hi), p.grid_points)]
    else:
        points = _linspace(lo, hi, p.grid_points)
    return [format_float(v) for v in points]


def grid_size(spec: GryviaAutoTunerSpec) -> int:
    """Combinations of a grid search."""
    return math.prod(len(grid_axis(p)) for p in spec.parameter_space)


def total_trials(spec: GryviaAutoTunerSpec) -> int:
    """Trials the tuner runs: maxTrials, or fewer when a grid has fewer combinations."""
    if spec.search_algorithm.type == "grid":
        return min(spec.max_trials, grid_size(spec))
    return spec.max_trials


def format_float(value: float) -> str:
    """A float parameter as the trial sees it: 6 significant digits (`0.00123`, `1e-05`)."""
    return f"{value:.6g}"


def sample(spec: GryviaAutoTunerSpec, index: int) -> dict[str, str]:
    """Trial `index`'s parameters, by name. Grid: the index-th combination, the last
    parameter varying fastest (itertools.product order). Random: independent draws from
    `random.Random` seeded with the seed and the index only, so the same seed always gives
    the same trials. Raises IndexError past the end of a grid."""
    space = spec.parameter_space
    if spec.search_algorithm.type == "grid":
        axes = [grid_axis(p) for p in space]
        if index >= math.prod(len(a) for a in axes):
            raise IndexError(f"grid has no combination {index}")
        combo = next(itertools.islice(itertools.product(*axes), index, None))
        return dict(zip((p.name for p in space), combo, strict=True))
    rng = random.Random(f"gryvia-tuner:{spec.search_algorithm.seed}:{index}")
    out: dict[str, str] = {}
    for p in space:
        lo, hi = float(p.min or 0), float(p.max or 0)
        if p.type == "choice":
            out[p.name] = rng.choice(list(p.values or []))
        elif p.type == "int":
            out[p.name] = str(rng.randrange(int(lo), int(hi) + 1, p.step))
        elif p.type == "logUniform":
            out[p.name] = format_float(math.exp(rng.uniform(math.log(lo), math.log(hi))))
        else:
            out[p.name] = format_float(rng.uniform(lo, hi))
    return out
