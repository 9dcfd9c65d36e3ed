"""Auto-tuners for people (pure, no I/O): the body `gryvia tune submit` creates, the rows of
`tune list`, the lines and trial rows of `tune status`, and what `tune best` prints."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from gryvia_cli.core.manifests import manifest_body, validated_body
from gryvia_cli.core.timefmt import age
from gryvia_operator.api.autotuner import GryviaAutoTuner, TrialStatus
from gryvia_operator.api.namelimits import name_length_problem
from gryvia_operator.api.names import name_problem

TUNER_COLUMNS = ("NAME", "PHASE", "TRIALS", "RUNNING", "BEST-TRIAL", "BEST", "AGE")
TUNER_WIDE_COLUMNS = (*TUNER_COLUMNS, "OBJECTIVE", "MESSAGE")
TRIAL_COLUMNS = ("INDEX", "TRIAL", "STATE", "VALUE", "STEP", "PARAMETERS")
BEST_COLUMNS = ("TRIAL", "INDEX", "VALUE", "PARAMETERS")


def build_tuner(doc: Any, namespace: str, source: str) -> dict[str, Any]:
    """The GryviaAutoTuner to create from a manifest `doc` (one YAML document): namespace
    set, validated by the model. Raises ValueError naming the source, the field and the fix."""
    body = manifest_body(doc, "GryviaAutoTuner", source)
    meta = dict(body.get("metadata") or {})
    name = str(meta.get("name") or "")
    if not name:
        raise ValueError(f"{source}: metadata.name is required; name the tuner")
    problem = name_problem(name)
    if problem:
        raise ValueError(f"{source}: metadata.name: {problem}")
    too_long = name_length_problem("GryviaAutoTuner", body)
    if too_long:
        raise ValueError(f"{source}: {too_long}")
    meta["namespace"] = namespace
    body["metadata"] = meta
    return validated_body(GryviaAutoTuner, body, source)


def format_params(params: Mapping[str, str] | None) -> str:
    """`lr=0.01, batch=64` (spec order as stored), or `-`."""
    return ", ".join(f"{k}={v}" for k, v in (params or {}).items()) or "-"


def format_value(value: float | None) -> str:
    """A metric value with up to 6 significant digits, or `-`."""
    return "-" if value is None else f"{value:.6g}"


def trials_of(tuner: GryviaAutoTuner) -> list[TrialStatus]:
    """The trials its status records, by index."""
    return sorted((tuner.status.trials or []) if tuner.status else [], key=lambda t: t.index)


def tuner_row(tuner: GryviaAutoTuner, now: datetime) -> list[Any]:
    """NAME, PHASE, TRIALS (created/total asked), RUNNING, BEST-TRIAL, BEST, AGE."""
    st = tuner.status
    best = st.best if st else None
    created = (st.trials_created if st else None) or 0
    return [
        tuner.name,
        (st.phase if st else None) or "Pending",
        f"{created}/{tuner.spec.max_trials}",
        (st.running if st else None) or 0,
        best.name if best else "-",
        format_value(best.value if best else None),
        age(tuner.metadata.creation_timestamp, now),
    ]


def objective_text(tuner: GryviaAutoTuner) -> str:
    """`maximize score`."""
    return f"{tuner.spec.objective.goal} {tuner.spec.objective.name}"


def tuner_wide_row(tuner: GryviaAutoTuner, now: datetime) -> list[Any]:
    """The row plus OBJECTIVE and MESSAGE."""
    st = tuner.status
    return [*tuner_row(tuner, now), objective_text(tuner), (st.message if st else None) or ""]


def trial_row(trial: TrialStatus) -> list[Any]:
    """INDEX, TRIAL, STATE, VALUE (last reported), STEP (last intermediate), PARAMETERS."""
    return [
        trial.index,
        trial.name,
        trial.state,
        format_value(trial.value),
        "-" if trial.step is None else trial.step,
        format_params(trial.parameters),
    ]


def _stopping(tuner: GryviaAutoTuner) -> str:
    es = tuner.spec.early_stopping
    if es is None:
        return "off"
    if es.algorithm == "median":
        return f"median (from step {es.start_step}, after {es.min_trials} completed trials)"
    return f"asha (rungs from step {es.min_step}, factor {es.reduction_factor})"


def tuner_details(tuner: GryviaAutoTuner) -> list[tuple[str, str]]:
    """The label/value lines of `gryvia tune status` (the trials follow as a table)."""
    spec, st = tuner.spec, tuner.status
    search = spec.search_algorithm
    best = st.best if st else None
    space = ", ".join(f"{p.name} ({p.type})" for p in spec.parameter_space)
    created = (st.trials_created if st else None) or 0
    running = (st.running if st else None) or 0
    peak = (st.peak_running if st else None) or 0
    rows = [
        ("Name", tuner.name),
        ("Namespace", tuner.namespace),
        ("Phase", (st.phase if st else None) or "Pending"),
        ("Objective", objective_text(tuner)),
        ("Search", f"{search.type}, seed {search.seed}" if search.type == "random" else "grid"),
        ("Parameters", space),
        (
            "Trials",
            f"{created} of {spec.max_trials} created, {running} not ended "
            f"(parallelism {spec.parallelism}, peak {peak})",
        ),
        ("Early stopping", _stopping(tuner)),
        (
            "Best",
            f"{best.name}: {format_value(best.value)} ({format_params(best.parameters)})"
            if best
            else "-",
        ),
    ]
    if st and st.message:
        rows.append(("Message", st.message))
    return rows


def best_data(tuner: GryviaAutoTuner) -> dict[str, Any] | None:
    """What `gryvia tune best -o json` prints: index, name, parameters, value; None before any
    trial reported the objective."""
    best = tuner.status.best if tuner.status else None
    if best is None:
        return None
    return {
        "index": best.index,
        "name": best.name,
        "parameters": dict(best.parameters or {}),
        "value": best.value,
    }
