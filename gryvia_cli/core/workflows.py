"""Workflows for people (pure, no I/O): the body `gryvia workflow submit` creates, the rows of
`workflow list`, the lines of `workflow get`, and the run and step that `retry`, `cancel`
and `logs` act on."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gryvia_cli.core.manifests import manifest_body, validated_body
from gryvia_cli.core.timefmt import age
from gryvia_operator.api.namelimits import name_length_problem
from gryvia_operator.api.workflow import GryviaWorkflow, WorkflowRun, name_problem

WORKFLOW_COLUMNS = ("NAME", "PHASE", "RUN", "STEPS", "FAILED-STEP", "SCHEDULE", "AGE")
WORKFLOW_WIDE_COLUMNS = (*WORKFLOW_COLUMNS, "NEXT", "MESSAGE")


def parse_params(items: list[str]) -> dict[str, str]:
    """`name=value` items -> parameters. Raises ValueError naming the bad item and the fix."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--param {item!r}: expected NAME=VALUE, e.g. lr=0.01")
        out[key.strip()] = value
    return out


def build_workflow(doc: Any, namespace: str, params: dict[str, str], source: str) -> dict[str, Any]:
    """The GryviaWorkflow to create from a manifest `doc` (one YAML document): namespace set,
    `params` merged over spec.parameters, validated by the model. Raises ValueError naming
    the source, the field and the fix."""
    body = manifest_body(doc, "GryviaWorkflow", source)
    meta = dict(body.get("metadata") or {})
    if not meta.get("name"):
        raise ValueError(f"{source}: metadata.name is required; name the workflow")
    meta["namespace"] = namespace
    steps = [s for s in (body.get("spec") or {}).get("steps") or [] if isinstance(s, dict)]
    problem = name_problem(str(meta["name"]), [str(s.get("name") or "") for s in steps])
    problem = problem or name_length_problem("GryviaWorkflow", body)  # StatefulSet steps too
    if problem:
        raise ValueError(f"{source}: {problem}")
    body["metadata"] = meta
    if params:
        spec = dict(body.get("spec") or {})
        spec["parameters"] = {**(spec.get("parameters") or {}), **params}
        body["spec"] = spec
    return validated_body(GryviaWorkflow, body, source)


def runs_of(wf: GryviaWorkflow) -> list[WorkflowRun]:
    """The runs its status records, oldest first."""
    return list(wf.status.runs or []) if wf.status else []


def find_run(wf: GryviaWorkflow, number: int | None) -> WorkflowRun:
    """Run `number`, or the latest. Raises ValueError when there is none."""
    runs = runs_of(wf)
    if not runs:
        raise ValueError(f"workflow {wf.name} has no runs yet")
    if number is None:
        return runs[-1]
    for run in runs:
        if run.number == number:
            return run
    kept = ", ".join(str(r.number) for r in runs)
    raise ValueError(f"workflow {wf.name} has no run {number}; recorded runs: {kept}")


def retry_request(wf: GryviaWorkflow, run: int | None, step: str | None, nonce: str) -> str:
    """The value of annotation gryvia.io/workflow-retry: `<nonce>:<run>:<step>`; the step
    defaults to the run's failed step. Raises ValueError when the run is still running or
    the step is unknown or not given and nothing failed."""
    found = find_run(wf, run)
    if found.phase == "Running":
        raise ValueError(
            f"run {found.number} of {wf.name} is still running; wait or cancel it first"
        )
    step = step or found.failed_step
    if not step:
        raise ValueError(f"run {found.number} of {wf.name} has no failed step; pass --from STEP")
    names = [s.name for s in wf.spec.steps]
    if step not in names:
        raise ValueError(f"--from {step}: no such step; steps are {', '.join(names)}")
    return f"{nonce}:{found.number}:{step}"


def cancel_request(wf: GryviaWorkflow, run: int | None, nonce: str) -> tuple[str, int]:
    """(value of annotation gryvia.io/workflow-cancel `<nonce>:<run>`, the run). Default: the
    latest run. Raises ValueError when that run is not running."""
    found = find_run(wf, run)
    if found.phase != "Running":
        raise ValueError(f"run {found.number} of {wf.name} is {found.phase}; nothing to cancel")
    return f"{nonce}:{found.number}", found.number


def request_patch(annotation: str, value: str) -> dict[str, Any]:
    """The merge patch that sets a request annotation."""
    return {"metadata": {"annotations": {annotation: value}}}


def step_jobs(wf: GryviaWorkflow, run: int | None, step: str | None) -> list[tuple[str, str]]:
    """(step, job) of the run's steps that have a job, in spec order (only `step` when
    given). Raises ValueError for an unknown step or one without a job yet."""
    found = find_run(wf, run)
    pairs = [(s.name, s.job) for s in found.steps if s.job]
    if step is None:
        return pairs
    names = [s.name for s in wf.spec.steps]
    if step not in names:
        raise ValueError(f"--step {step}: no such step; steps are {', '.join(names)}")
    chosen = [p for p in pairs if p[0] == step]
    if not chosen:
        state = next((s.state for s in found.steps if s.name == step), "Waiting")
        raise ValueError(f"step {step} of run {found.number} has no job ({state})")
    return chosen


def _steps_done(run: WorkflowRun | None) -> str:
    if run is None:
        return "-"
    done = sum(1 for s in run.steps if s.state == "Succeeded")
    return f"{done}/{len(run.steps)}"


def _time(value: datetime | None) -> str:
    return value.isoformat().replace("+00:00", "Z") if value else "-"


def workflow_row(wf: GryviaWorkflow, now: datetime) -> list[Any]:
    """NAME, PHASE, RUN, STEPS (succeeded/total of the latest run), FAILED-STEP, SCHEDULE,
    AGE."""
    status = wf.status
    runs = runs_of(wf)
    return [
        wf.name,
        (status.phase if status else None) or "Pending",
        (status.last_run if status else None) or "-",
        _steps_done(runs[-1] if runs else None),
        (status.failed_step if status else None) or "-",
        wf.spec.schedule.cron if wf.spec.schedule else "-",
        age(wf.metadata.creation_timestamp, now),
    ]


def workflow_wide_row(wf: GryviaWorkflow, now: datetime) -> list[Any]:
    """The row plus NEXT (next cron time) and MESSAGE."""
    status = wf.status
    return [
        *workflow_row(wf, now),
        _time(status.next_schedule_time if status else None),
        (status.message if status else None) or "",
    ]


def _run_line(run: WorkflowRun) -> str:
    text: str = run.phase
    if run.failed_step:
        text += f" at step {run.failed_step}"
    if run.trigger == "Retry":
        text += f" (retry of run {run.retry_of} from {run.from_step})"
    elif run.trigger == "Schedule":
        text += f" (scheduled {_time(run.scheduled_time)})"
    return text + f", started {_time(run.start_time)}"


def _step_text(state: str, job: str | None, reused: bool | None, message: str | None) -> str:
    text = state + (f", job {job}" if job else "")
    if reused:
        text += " (reused)"
    return text + (f": {message}" if message else "")


def workflow_details(wf: GryviaWorkflow, run: int | None = None) -> list[tuple[str, str]]:
    """(label, value) lines of `gryvia workflow get`: spec, phase, every run in one line,
    then each step of the chosen (default: latest) run."""
    status = wf.status
    spec = wf.spec
    steps = ", ".join(
        s.name + (f" <- {s.condition}:{','.join(s.depends_on)}" if s.depends_on else "")
        for s in spec.steps
    )
    lines = [
        ("Name", f"{wf.namespace}/{wf.name}"),
        ("Steps", steps),
        ("Parameters", ", ".join(f"{k}={v}" for k, v in (spec.parameters or {}).items()) or "-"),
    ]
    if spec.schedule:
        sched = spec.schedule
        text = f"{sched.cron} UTC, {sched.concurrency_policy}"
        text += ", suspended" if sched.suspend else ""
        nxt = status.next_schedule_time if status else None
        lines.append(("Schedule", text + (f", next {_time(nxt)}" if nxt else "")))
    lines.append(("Phase", (status.phase if status else None) or "Pending"))
    if status and status.message:
        lines.append(("Message", status.message))
    runs = runs_of(wf)
    for r in runs:
        lines.append((f"Run {r.number}", _run_line(r)))
    if runs:
        chosen = find_run(wf, run)
        for s in chosen.steps:
            lines.append((f"  {s.name}", _step_text(s.state, s.job, s.reused, s.message)))
    else:
        lines.append(("Runs", "none yet (is the operator running with --enable-workflows?)"))
    return lines
