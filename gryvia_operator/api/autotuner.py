"""GryviaAutoTuner: a hyperparameter search whose trials are GryviaAIJobs made from one
template; each trial reports its objective on stdout (`GRYVIA_METRIC name=value step=N`)."""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, ValidationError, model_validator

from gryvia_operator.api import resources
from gryvia_operator.api.aijob import GryviaAIJobSpec
from gryvia_operator.api.base import (
    AGE_COLUMN,
    FreeForm,
    GryviaModel,
    GryviaResource,
    Int64,
    KindInfo,
    NonNegativeInt32,
    PositiveInt32,
    PrinterColumn,
    SchemaExtra,
    Str63,
    Str1024,
)
from gryvia_operator.api.crd.fieldcheck import dotted

ParameterType = Literal["choice", "uniform", "logUniform", "int"]
SearchType = Literal["grid", "random"]
Goal = Literal["maximize", "minimize"]
StoppingAlgorithm = Literal["median", "asha"]
TrialState = Literal[
    "Pending", "Running", "Succeeded", "Failed", "EarlyStopped", "MetricsUnavailable"
]
TunerPhase = Literal["Running", "Succeeded", "Failed", "Invalid"]

LABEL_TUNER = "gryvia.io/tuner"
"""On every trial job: the tuner's name."""
LABEL_TRIAL = "gryvia.io/tuner-trial"
"""On every trial job: the trial's index (0, 1, ...)."""
MAX_REPORTS = 50
"""Intermediate reports kept per trial in status (the newest)."""
DEFAULT_GRID_POINTS = 3

_METRIC_NAME = r"^[A-Za-z0-9_.:/-]+$"
_FILE = r"^[^\x00\n\r]+$"
_PARAM_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,62}$"
PLACEHOLDER = re.compile(r"\$\((parameters|trial|tuner)\.([A-Za-z0-9_-]+)\)")
"""`$(parameters.NAME)`, `$(trial.index)`, `$(trial.name)`, `$(tuner.name)`; other `$(...)`
(a shell's command substitution) are left alone."""

_I32 = SchemaExtra({"format": "int32"})
_Float = Annotated[float, Field(allow_inf_nan=False)]


class TunerParameter(GryviaModel):
    """One dimension of the search space."""

    name: Annotated[str, StringConstraints(pattern=_PARAM_NAME)]
    """Parameter name: `$(parameters.NAME)` in the template, env `GRYVIA_PARAM_<NAME>`."""
    type: ParameterType
    """choice (one of `values`), uniform (a float in [min, max]), logUniform (a float whose
    logarithm is uniform in [log min, log max]; min > 0) or int (min..max by `step`)."""
    values: Annotated[list[Str63] | None, Field(max_length=100)] = None
    """The choices (type choice)."""
    min: _Float | None = None
    """Lower bound (uniform, logUniform, int)."""
    max: _Float | None = None
    """Upper bound, inclusive (uniform, logUniform, int)."""
    step: Annotated[int, Field(ge=1, strict=True), _I32] = 1
    """Step between the integers of an int range."""
    grid_points: Annotated[int, Field(ge=1, le=100, strict=True), _I32] = DEFAULT_GRID_POINTS
    """Evenly spaced points a grid search takes of a uniform or logUniform range (ends
    included)."""


class SearchAlgorithm(GryviaModel):
    """How trial parameters are chosen."""

    type: SearchType = "random"
    """grid (every combination, in order: choices, int ranges, gridPoints of float ranges)
    or random (independent draws)."""
    seed: Int64 = 0
    """Random seed: the same seed gives the same trials (trial i's draw depends only on
    the seed, i and the parameter space)."""


class Objective(GryviaModel):
    """What a trial is judged by."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=63, pattern=_METRIC_NAME)]
    """Metric name in the trial's `GRYVIA_METRIC <name>=<value>` lines."""
    goal: Goal = "maximize"
    """maximize or minimize."""
    file: Annotated[str, StringConstraints(min_length=1, max_length=1024, pattern=_FILE)] | None = (
        None
    )
    """A file the trial writes its `GRYVIA_METRIC` lines to (one line per report), instead
    of printing them: a path in the trainer container (relative: to its working directory),
    usually on the job's volume (spec.storage). The trial's command runs under a small sh
    wrapper that copies the file's lines to the pod log as they are written and once more
    when the command ends; the operator reads them there. Needs jobTemplate.command and
    `/bin/sh` and `tail` in the image; the trial gets env GRYVIA_METRICS_FILE.
    `$(trial.index)`, `$(trial.name)` and `$(tuner.name)` are replaced, so that trials
    sharing a volume write different files."""


class EarlyStopping(GryviaModel):
    """Stop running trials whose intermediate reports (lines with `step=N`) look poor."""

    algorithm: StoppingAlgorithm = "median"
    """median: stop a trial whose best value so far is worse than the median of the
    completed trials' running averages at the same step (Vizier's median stopping rule).
    asha: at each rung (minStep x reductionFactor^k), stop a trial that is not in the top
    1/reductionFactor of the values every trial reported at that rung (asynchronous
    successive halving; the top is max(1, n // factor) of n, as in Optuna's
    SuccessiveHalvingPruner)."""
    min_trials: Annotated[int, Field(ge=1, le=1000, strict=True), _I32] = 2
    """median: completed trials needed before any trial is stopped."""
    start_step: PositiveInt32 = 1
    """median: no trial is stopped on a report before this step."""
    min_step: PositiveInt32 = 1
    """asha: the first rung."""
    reduction_factor: Annotated[int, Field(ge=2, le=100, strict=True), _I32] = 3
    """asha: rungs are this factor apart and keep the top 1/factor."""


class GryviaAutoTunerSpec(GryviaModel):
    """Template, search space, objective and limits."""

    job_template: FreeForm
    """The trials' GryviaAIJob `spec`. `$(parameters.NAME)`, `$(trial.index)`,
    `$(trial.name)` and `$(tuner.name)` in its strings are replaced; each trial also gets env
    `GRYVIA_PARAM_<NAME>` (upper case), `GRYVIA_TRIAL_INDEX` and `GRYVIA_TUNER`."""
    parameter_space: Annotated[list[TunerParameter], Field(min_length=1, max_length=20)]
    """The parameters (names unique)."""
    search_algorithm: SearchAlgorithm = Field(default_factory=SearchAlgorithm)
    """grid or random (with a seed)."""
    objective: Objective
    """The metric and whether to maximize or minimize it."""
    max_trials: Annotated[int, Field(ge=1, le=1000, strict=True), _I32]
    """Trials in total (a grid search stops earlier when it has fewer combinations)."""
    parallelism: Annotated[int, Field(ge=1, le=100, strict=True), _I32] = 1
    """Trials not yet ended (pending or running) at any time, at most."""
    early_stopping: EarlyStopping | None = None
    """Early stopping on intermediate reports; off when unset."""

    @model_validator(mode="after")
    def _check(self) -> GryviaAutoTunerSpec:
        problems = spec_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self


class MetricReport(GryviaModel):
    """One intermediate report."""

    step: NonNegativeInt32
    value: float


class TrialStatus(GryviaModel):
    """One trial."""

    index: NonNegativeInt32
    """Trial number (0, 1, ...)."""
    name: Str63
    """Its GryviaAIJob."""
    parameters: dict[str, str] | None = None
    """The values it ran with."""
    state: TrialState = "Pending"
    """Pending, Running, Succeeded (reported the objective), Failed (its job did not
    succeed), EarlyStopped (cancelled by early stopping) or MetricsUnavailable (succeeded
    without reporting the objective)."""
    value: float | None = None
    """The last objective value it reported."""
    step: NonNegativeInt32 | None = None
    """The step of its last intermediate report."""
    reports: Annotated[list[MetricReport] | None, Field(max_length=MAX_REPORTS)] = None
    """Its intermediate reports (the newest MAX_REPORTS)."""
    rung: NonNegativeInt32 | None = None
    """asha: the highest rung it was judged at."""
    start_time: datetime | None = None
    """When its job was created."""
    completion_time: datetime | None = None
    """When it ended."""
    message: Str1024 | None = None
    """Why it failed or was stopped."""


class BestTrial(GryviaModel):
    """The best trial so far."""

    index: NonNegativeInt32
    name: Str63
    parameters: dict[str, str] | None = None
    value: float


class GryviaAutoTunerStatus(GryviaModel):
    """Trials and the best so far, written by the operator."""

    phase: TunerPhase | None = None
    """Running, Succeeded (every trial ended), Failed (no trial reported the objective) or
    Invalid (message says why)."""
    message: Str1024 | None = None
    """Detail of the phase."""
    trials_created: NonNegativeInt32 | None = None
    """Trial jobs created so far."""
    running: NonNegativeInt32 | None = None
    """Trials not yet ended."""
    peak_running: NonNegativeInt32 | None = None
    """The most trials not yet ended at once, as the operator counted them."""
    best: BestTrial | None = None
    """The best trial so far (ended or running) by its last reported value."""
    trials: Annotated[list[TrialStatus] | None, Field(max_length=1000)] = None
    """Every trial, by index."""
    completion_time: datetime | None = None
    """When the last trial ended."""


class GryviaAutoTuner(GryviaResource):
    """A hyperparameter search: GryviaAIJob trials from a template, run a few at a time."""

    kind: Literal["GryviaAutoTuner"] = "GryviaAutoTuner"
    spec: GryviaAutoTunerSpec
    status: GryviaAutoTunerStatus | None = None


AUTOTUNER_KIND = KindInfo(
    resource=resources.AUTOTUNER,
    model=GryviaAutoTuner,
    description=GryviaAutoTuner.__doc__ or "",
    printer_columns=(
        PrinterColumn("Phase", ".status.phase"),
        PrinterColumn("Trials", ".status.trialsCreated", "integer"),
        PrinterColumn("Running", ".status.running", "integer"),
        PrinterColumn("Best", ".status.best.value", "number"),
        PrinterColumn("Best-Trial", ".status.best.name"),
        AGE_COLUMN,
    ),
    omitted=(
        "ashaConfig, earlyStoppingRounds: replaced by spec.earlyStopping (median or asha)",
        "metrics files read by the operator itself: objective.file is copied to the log by "
        "a wrapper around the trial's command",
    ),
)
GryviaAutoTuner.kind_info = AUTOTUNER_KIND


def trial_name(tuner: str, index: int) -> str:
    """`<tuner>-t<index>`: the GryviaAIJob of trial `index`."""
    return f"{tuner}-t{index}"


def env_name(parameter: str) -> str:
    """`GRYVIA_PARAM_<NAME>`: the env variable of a parameter (upper case)."""
    return f"GRYVIA_PARAM_{parameter.upper()}"


def substitute(value: Any, values: dict[str, str]) -> Any:
    """`value` (dicts, lists, strings, numbers) with every `$(scope.key)` whose `scope.key`
    is in `values` replaced in its strings; other placeholders stay."""
    if isinstance(value, str):
        return PLACEHOLDER.sub(lambda m: values.get(f"{m[1]}.{m[2]}", m[0]), value)
    if isinstance(value, dict):
        return {k: substitute(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, values) for v in value]
    return value


def placeholders(value: Any) -> set[str]:
    """Every `scope.key` referenced in `value`'s strings."""
    if isinstance(value, str):
        return {f"{m[1]}.{m[2]}" for m in PLACEHOLDER.finditer(value)}
    if isinstance(value, dict):
        return set().union(*(placeholders(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(placeholders(v) for v in value))
    return set()


def _parameter_problems(i: int, p: TunerParameter) -> list[str]:
    where = f"spec.parameterSpace[{i}]"
    if p.type == "choice":
        return [] if p.values else [f"{where}.values: a choice needs at least one value"]
    if p.min is None or p.max is None:
        return [f"{where}: a {p.type} range needs min and max"]
    if p.min > p.max:
        return [f"{where}: min {p.min:g} is above max {p.max:g}; swap them"]
    if p.type == "logUniform" and p.min <= 0:
        return [f"{where}.min: a logUniform range needs min > 0"]
    if p.type == "int" and (p.min != math.floor(p.min) or p.max != math.floor(p.max)):
        return [f"{where}: an int range needs whole min and max"]
    return []


def spec_problems(spec: GryviaAutoTunerSpec) -> list[str]:
    """Everything wrong with a tuner spec beyond its schema, each naming the field and the
    fix: duplicate or incomplete parameters, unknown placeholders, a template that is not a
    valid GryviaAIJob spec."""
    out: list[str] = []
    names = [p.name for p in spec.parameter_space]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        out.append(f"spec.parameterSpace: names must be unique; {', '.join(dupes)} repeated")
    for i, p in enumerate(spec.parameter_space):
        out.extend(_parameter_problems(i, p))
    allowed = {f"parameters.{n}" for n in names} | {"trial.index", "trial.name", "tuner.name"}
    for ref in sorted(placeholders(spec.job_template) - allowed):
        out.append(
            f"spec.jobTemplate: unknown placeholder $({ref}); use $(parameters.NAME) of a "
            "parameter, $(trial.index), $(trial.name) or $(tuner.name)"
        )
    for ref in sorted(placeholders(spec.objective.file or "") - allowed):
        out.append(
            f"spec.objective.file: unknown placeholder $({ref}); use $(trial.index), "
            "$(trial.name), $(tuner.name) or $(parameters.NAME) of a parameter"
        )
    if spec.objective.file and not (spec.job_template or {}).get("command"):
        out.append(
            "spec.objective.file: the trial's command runs under a wrapper that copies the "
            "file to the log, so spec.jobTemplate.command must be set (the image's entrypoint "
            "cannot be wrapped); set the command, or print the lines and drop file"
        )
    values = {f"parameters.{n}": "1" for n in names}
    values |= {"trial.index": "0", "trial.name": "t-t0", "tuner.name": "t"}
    try:
        GryviaAIJobSpec.model_validate(substitute(spec.job_template, values))
    except ValidationError as exc:
        for err in exc.errors():
            out.append(f"{dotted(('spec.jobTemplate', *err['loc']))}: {err['msg']}")
    return out
