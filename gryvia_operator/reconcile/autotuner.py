"""GryviaAutoTuner, pure: each trial's parameters (grid or seeded random), the metric lines a
trial printed, which trials stop early (the rules are in `tunerstop`), the best trial, which
trial jobs to create and stop, and the tuner's status. The handler (`handlers.autotuner`) reads
and writes.

The trial's contract (docs/tuning.md): lines `GRYVIA_METRIC <name>=<value> [...] [step=<n>]`
on stdout or stderr; a line with `step=` is an intermediate report (early stopping judges
those), and the objective value of a trial is the value of the last line naming it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gryvia_operator.api.autotuner import (
    LABEL_TRIAL,
    LABEL_TUNER,
    MAX_REPORTS,
    EarlyStopping,
    Goal,
    GryviaAutoTuner,
    TrialState,
    env_name,
    substitute,
    trial_name,
)
from gryvia_operator.api.controlled import owner_reference
from gryvia_operator.api.helpers import TERMINAL_PHASES, JobPhase
from gryvia_operator.api.namelimits import name_length_problem
from gryvia_operator.api.names import API_VERSION
from gryvia_operator.reconcile.tunersearch import sample, total_trials
from gryvia_operator.reconcile.tunerstop import Report, asha_stop, better, median_stop

METRIC_LINE = re.compile(r"^GRYVIA_METRIC[ \t]+(.+?)[ \t\r]*$", re.MULTILINE)
"""A trial's report line (stdout or stderr); its fields are `name=value` pairs."""
ENDED_STATES: frozenset[TrialState] = frozenset(
    {"Succeeded", "Failed", "EarlyStopped", "MetricsUnavailable"}
)


@dataclass(frozen=True)
class Metrics:
    """What a trial's log says of one metric."""

    reports: tuple[Report, ...] = ()
    """Intermediate reports by step (the last line of a step wins), ascending."""
    last: float | None = None
    """The value of the last line naming the metric (with or without step)."""


def parse_metrics(log_text: str, name: str) -> Metrics:
    """The reports of metric `name` in a log. Fields that are not `key=value`, values that
    are not finite numbers and steps that are not whole numbers are ignored."""
    by_step: dict[int, float] = {}
    last: float | None = None
    for m in METRIC_LINE.finditer(log_text):
        fields = dict(f.split("=", 1) for f in m.group(1).split() if "=" in f)
        raw = fields.get(name)
        if raw is None:
            continue
        try:
            value = float(raw)
        except ValueError:
            continue
        if not math.isfinite(value):
            continue
        last = value
        step = fields.get("step", "")
        if step.isdigit() and len(step) <= 9:
            by_step[int(step)] = value
    return Metrics(tuple(sorted(by_step.items())), last)


@dataclass(frozen=True)
class TrialJob:
    """What the tuner needs of one trial job (from the job index)."""

    name: str
    index: int
    phase: str = ""
    message: str = ""
    created: str = ""
    completed: str = ""


@dataclass
class TunerPlan:
    """One pass: trial jobs to create, trial jobs to cancel, and the new status."""

    create: list[dict[str, Any]] = field(default_factory=list)
    stop: list[str] = field(default_factory=list)
    status: dict[str, Any] = field(default_factory=dict)


METRICS_FILE_ENV = "GRYVIA_METRICS_FILE"
"""Env of a trial whose objective is read from a file: the file's path."""
METRICS_FILE_WRAPPER = """# gryvia: copy the trial's metrics file to the log (docs/tuning.md)
f="$1"; shift
tail -n +1 -F "$f" 2>/dev/null & t=$!
p=; stop=
trap 'stop=1; [ -n "$p" ] && kill -TERM "$p" 2>/dev/null' TERM INT
"$@" & p=$!
[ -n "$stop" ] && kill -TERM "$p" 2>/dev/null
while :; do rc=0; wait "$p" || rc=$?; kill -0 "$p" 2>/dev/null || break; done
kill "$t" 2>/dev/null
wait "$t" 2>/dev/null
cat "$f" 2>/dev/null
exit "$rc"
"""
"""sh program run as `sh -c WRAPPER gryvia-metrics FILE COMMAND...`: follows FILE to stdout
while COMMAND runs, forwards SIGTERM/SIGINT to it (one that came while it was starting too:
the trap is set first), prints FILE whole once more when it ends
(the last lines the follower may not have copied yet; repeats are harmless: the last line
of a step wins) and exits with COMMAND's status."""


def metrics_file_command(path: str, command: Any) -> list[str]:
    """The trial's command wrapped so that the `GRYVIA_METRIC` lines written to `path` reach
    the pod log (METRICS_FILE_WRAPPER). `command` is the template's (a list of strings; the
    container's args still follow it)."""
    return ["/bin/sh", "-c", METRICS_FILE_WRAPPER, "gryvia-metrics", path, *list(command or [])]


def build_trial_job(
    tuner: GryviaAutoTuner, index: int, params: Mapping[str, str]
) -> dict[str, Any]:
    """Trial `index`'s GryviaAIJob: the template with placeholders substituted, env
    GRYVIA_PARAM_<NAME>, GRYVIA_TRIAL_INDEX and GRYVIA_TUNER appended, labelled with the
    tuner and the index, owned (controller) by the tuner. With `objective.file` the command
    is wrapped (`metrics_file_command`) and env GRYVIA_METRICS_FILE set."""
    meta = tuner.metadata
    name = trial_name(meta.name or "", index)
    values = {f"parameters.{k}": v for k, v in params.items()}
    values |= {"trial.index": str(index), "trial.name": name, "tuner.name": meta.name or ""}
    spec = substitute(tuner.spec.job_template, values)
    env = [e for e in spec.get("env") or [] if isinstance(e, dict)]
    env += [{"name": env_name(k), "value": v} for k, v in params.items()]
    env += [
        {"name": "GRYVIA_TRIAL_INDEX", "value": str(index)},
        {"name": "GRYVIA_TUNER", "value": meta.name or ""},
    ]
    if tuner.spec.objective.file:
        path = str(substitute(tuner.spec.objective.file, values))
        env.append({"name": METRICS_FILE_ENV, "value": path})
        spec["command"] = metrics_file_command(path, spec.get("command"))
    spec["env"] = env
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaAIJob",
        "metadata": {
            "name": name,
            "namespace": meta.namespace,
            "labels": {LABEL_TUNER: meta.name, LABEL_TRIAL: str(index)},
            "ownerReferences": [owner_reference(tuner)],
        },
        "spec": spec,
    }


def _trial_state(before: str, job: TrialJob | None, has_value: bool) -> TrialState:
    if before in ENDED_STATES:
        return before
    phase = job.phase if job else ""
    if phase == JobPhase.SUCCEEDED:
        return "Succeeded" if has_value else "MetricsUnavailable"
    if phase in TERMINAL_PHASES:
        return "Failed"
    return "Running" if phase == JobPhase.RUNNING else "Pending"


def _stamp(now: datetime) -> str:
    return now.isoformat().replace("+00:00", "Z")


def reconcile_tuner(
    tuner: GryviaAutoTuner,
    jobs: Sequence[TrialJob],
    logs: Mapping[str, str],
    now: datetime,
) -> TunerPlan:
    """The plan of one pass. `jobs`: the tuner's trial jobs; `logs`: trial job name -> the
    log read this pass (trials without one keep the reports in status). A trial counts
    against `parallelism` until its job has ended (an early-stopped one too, until its
    cancellation is done); new trials are created only in index order."""
    spec, name = tuner.spec, tuner.metadata.name or ""
    stored = {t.index: t for t in (tuner.status.trials if tuner.status else None) or []}
    by_index = {j.index: j for j in jobs}
    plan = TunerPlan()
    raw_spec = {"maxTrials": spec.max_trials, "jobTemplate": spec.job_template}
    raw = {"metadata": {"name": name}, "spec": raw_spec}
    too_long = name_length_problem("GryviaAutoTuner", raw)
    if too_long:
        plan.status = {"phase": "Invalid", "message": too_long}
        return plan
    goal, es = spec.objective.goal, spec.early_stopping
    trials: list[dict[str, Any]] = []
    reports: dict[int, tuple[Report, ...]] = {}
    for index in sorted(set(stored) | set(by_index)):
        before, job = stored.get(index), by_index.get(index)
        entry: dict[str, Any] = (
            before.model_dump(by_alias=True, exclude_none=True, mode="json")
            if before
            else {
                "index": index,
                "name": trial_name(name, index),
                "parameters": sample(spec, index),
            }
        )
        text = logs.get(entry["name"])
        if text is not None and entry.get("state") not in ENDED_STATES:
            metrics = parse_metrics(text, spec.objective.name)
            entry["reports"] = [{"step": s, "value": v} for s, v in metrics.reports[-MAX_REPORTS:]]
            if metrics.reports:
                entry["step"] = metrics.reports[-1][0]
            if metrics.last is not None:
                entry["value"] = metrics.last
        state = _trial_state(str(entry.get("state", "")), job, "value" in entry)
        if state == "Failed" and entry.get("state") != "Failed" and job is not None:
            entry["message"] = job.message or f"job {job.name} ended {job.phase}"
        entry["state"] = state
        if job is not None and job.created:
            entry.setdefault("startTime", job.created)
        if job is not None and job.phase in TERMINAL_PHASES:
            entry.setdefault("completionTime", job.completed or _stamp(now))
        reports[index] = tuple((r["step"], r["value"]) for r in entry.get("reports") or [])
        trials.append(entry)
    if es is not None:
        _early_stop(trials, reports, goal, es, plan)
    active = [
        t
        for t in trials
        if by_index.get(t["index"]) is None or by_index[t["index"]].phase not in TERMINAL_PHASES
    ]
    total = total_trials(spec)
    next_index = len(trials)
    while len(active) < spec.parallelism and next_index < total:
        params = sample(spec, next_index)
        plan.create.append(build_trial_job(tuner, next_index, params))
        entry = {
            "index": next_index,
            "name": trial_name(name, next_index),
            "parameters": params,
            "state": "Pending",
            "startTime": _stamp(now),
        }
        trials.append(entry)
        active.append(entry)
        next_index += 1
    plan.status = _status(tuner, trials, len(active), total, now)
    return plan


def _early_stop(
    trials: list[dict[str, Any]],
    reports: Mapping[int, tuple[Report, ...]],
    goal: Goal,
    es: EarlyStopping,
    plan: TunerPlan,
) -> None:
    completed = [reports[t["index"]] for t in trials if t["state"] == "Succeeded"]
    for t in trials:
        if t["state"] != "Running":
            continue
        mine = reports[t["index"]]
        if es.algorithm == "median":
            why = median_stop(mine, completed, goal, es)
        else:
            others = [reports[o["index"]] for o in trials if o is not t]
            rung, why = asha_stop(mine, others, t.get("rung"), goal, es)
            if rung is not None:
                t["rung"] = rung
        if why:
            t["state"], t["message"] = "EarlyStopped", why
            plan.stop.append(t["name"])


def best_trial(trials: Sequence[Mapping[str, Any]], goal: Goal) -> Mapping[str, Any] | None:
    """The trial with the best last reported value (any state; the lowest index on ties)."""
    best: Mapping[str, Any] | None = None
    for t in trials:
        if t.get("value") is not None and (best is None or better(t["value"], best["value"], goal)):
            best = t
    return best


def _status(
    tuner: GryviaAutoTuner, trials: list[dict[str, Any]], active: int, total: int, now: datetime
) -> dict[str, Any]:
    before = tuner.status
    peak = max(active, (before.peak_running if before else None) or 0)
    best = best_trial(trials, tuner.spec.objective.goal)
    done = active == 0 and len(trials) >= total
    status: dict[str, Any] = {
        "trialsCreated": len(trials),
        "running": active,
        "peakRunning": peak,
        "trials": trials,
    }
    if best is not None:
        status["best"] = {k: best[k] for k in ("index", "name", "parameters", "value")}
    counts = {s: sum(1 for t in trials if t["state"] == s) for s in ENDED_STATES}
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()) if n)
    if not done:
        status["phase"] = "Running"
        status["message"] = f"{len(trials)} of {total} trials created; {active} not ended"
    elif best is None:
        status["phase"] = "Failed"
        status["message"] = f"no trial reported {tuner.spec.objective.name} ({summary})"
    else:
        status["phase"] = "Succeeded"
        status["message"] = f"{total} trials ended ({summary}); best {best['name']}"
    if done:
        stamp = (before.completion_time if before else None) or now
        status["completionTime"] = _stamp(stamp)
    return status
