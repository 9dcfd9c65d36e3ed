"""GryviaWorkflow reconcile, pure: from the workflow, its step jobs and now, the step jobs to
create, cancel and delete, the new status, and when to look again.

Rules (docs/workflows.md): a run starts when the workflow is created (no schedule), at each
cron time (schedule, under its concurrency policy, as a CronJob's), or on a retry request;
a step's job is created once every dependency ended and its condition (`sbatch
--dependency`: afterok, afterany, afternotok) holds, else the step is Skipped; a run ends
when every step ended: Failed naming the first failed (or cancelled) step in spec order,
else Succeeded. A retry from step S is a new run N+1 that reuses the jobs of the steps that
Succeeded in the retried run and are neither S nor depend on S (directly or not).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from gryvia_operator.api.controlled import owner_reference
from gryvia_operator.api.helpers import JobPhase
from gryvia_operator.api.names import API_VERSION
from gryvia_operator.api.workflow import (
    ANNOTATION_CANCEL_RUN,
    ANNOTATION_RETRY,
    LABEL_RUN,
    LABEL_STEP,
    LABEL_WORKFLOW,
    GryviaWorkflow,
    WorkflowRun,
    WorkflowStep,
    WorkflowStepStatus,
    placeholder_values,
    step_job_name,
    step_order,
    substitute,
)

ENDED = frozenset({"Succeeded", "Failed", "Skipped", "Cancelled"})
"""Step states that no longer change."""
_FAILED_PHASES = frozenset({JobPhase.FAILED, JobPhase.REJECTED, JobPhase.PREEMPTED})
_RUNNING_PHASES = frozenset({JobPhase.SCHEDULING, JobPhase.RUNNING})
_CATCH_UP = timedelta(days=1)
"""Cron times older than this before now are not looked at (an operator down for long starts
one run for the latest missed time, as a CronJob does)."""


@dataclass(frozen=True)
class StepJob:
    """An observed step job: its name and `status.phase` ("" before the operator wrote one)
    and `status.message`."""

    name: str
    phase: str = ""
    message: str = ""
    run: int = 0


@dataclass
class WorkflowPlan:
    """What the handler applies: GryviaAIJob bodies to create, job names to cancel
    (annotation gryvia.io/cancel) and to delete, the whole new status (JSON, camelCase), and
    the time of the next cron run (None: nothing scheduled)."""

    create: list[dict[str, Any]] = field(default_factory=list)
    cancel: list[str] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    status: dict[str, Any] = field(default_factory=dict)
    wake_at: datetime | None = None


def descendants(steps: Sequence[WorkflowStep], name: str) -> set[str]:
    """`name` and every step that depends on it, directly or through others."""
    out = {name}
    grew = True
    while grew:
        grew = False
        for step in steps:
            if step.name not in out and out & set(step.depends_on or []):
                out.add(step.name)
                grew = True
    return out


def build_step_job(wf: GryviaWorkflow, run: int, step: WorkflowStep) -> dict[str, Any]:
    """The GryviaAIJob of `step` in run `run`: the template with placeholders substituted,
    env GRYVIA_WORKFLOW, GRYVIA_WORKFLOW_RUN and GRYVIA_WORKFLOW_STEP appended, labelled
    with the workflow, run and step, and owned (controller) by the workflow."""
    meta = wf.metadata
    values = placeholder_values(wf.spec.parameters, meta.name or "", run, step.name)
    spec = substitute(step.template, values)
    env = [e for e in spec.get("env") or [] if isinstance(e, dict)]
    env += [
        {"name": "GRYVIA_WORKFLOW", "value": meta.name or ""},
        {"name": "GRYVIA_WORKFLOW_RUN", "value": str(run)},
        {"name": "GRYVIA_WORKFLOW_STEP", "value": step.name},
    ]
    spec["env"] = env
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaAIJob",
        "metadata": {
            "name": step_job_name(meta.name or "", run, step.name),
            "namespace": meta.namespace,
            "labels": {LABEL_WORKFLOW: meta.name, LABEL_RUN: str(run), LABEL_STEP: step.name},
            "ownerReferences": [owner_reference(wf)],
        },
        "spec": spec,
    }


def _state_of(job: StepJob) -> tuple[str, str | None]:
    phase = job.phase or JobPhase.PENDING
    if phase == JobPhase.SUCCEEDED:
        return "Succeeded", None
    if phase in _FAILED_PHASES:
        return "Failed", job.message or f"job {job.name} {phase}"
    if phase == JobPhase.CANCELLED:
        return "Cancelled", job.message or f"job {job.name} was cancelled"
    return ("Running" if phase in _RUNNING_PHASES else "Pending"), None


def _verdict(step: WorkflowStep, states: Mapping[str, str]) -> tuple[str, str | None]:
    """ "run", "wait" or "skip" (with the reason) for a step whose job does not exist yet."""
    deps = list(step.depends_on or [])
    ended = [d for d in deps if states.get(d) in ENDED]
    ok = [d for d in ended if states[d] == "Succeeded"]
    if step.condition == "afterok":
        bad = [d for d in ended if d not in ok]
        if bad:
            return "skip", f"dependency {bad[0]} {states[bad[0]]} (afterok)"
    if step.condition == "afternotok" and ok:
        return "skip", f"dependency {ok[0]} Succeeded (afternotok)"
    if len(ended) < len(deps):
        return "wait", None
    return "run", None


def advance_run(
    wf: GryviaWorkflow, run: WorkflowRun, jobs: Mapping[str, StepJob], now: datetime
) -> list[dict[str, Any]]:
    """Move a Running run forward in place: each step's state from its job, jobs to create
    for the steps now allowed (returned), Skipped steps, and the run's end."""
    name = wf.metadata.name or ""
    by_name = {s.name: s for s in run.steps}
    create: list[dict[str, Any]] = []
    for step_name in step_order(wf.spec.steps):
        step = next(s for s in wf.spec.steps if s.name == step_name)
        record = by_name.setdefault(step_name, WorkflowStepStatus(name=step_name))
        if record.reused or record.state in ENDED:
            continue
        job_name = record.job or step_job_name(name, run.number, step_name)
        if job_name in jobs:
            record.job = job_name
            record.state, record.message = _state_of(jobs[job_name])  # type: ignore[assignment]
            continue
        if record.job:  # created, not seen yet: ask again (AlreadyExists is fine)
            create.append(build_step_job(wf, run.number, step))
            continue
        verdict, reason = _verdict(step, {k: v.state for k, v in by_name.items()})
        if verdict == "skip":
            record.state, record.message = "Skipped", reason
        elif verdict == "run":
            create.append(build_step_job(wf, run.number, step))
            record.job, record.state = job_name, "Pending"
    run.steps = [by_name[s.name] for s in wf.spec.steps]
    if all(s.state in ENDED for s in run.steps):
        bad = [s for s in run.steps if s.state in ("Failed", "Cancelled")]
        run.phase = "Failed" if bad else "Succeeded"
        run.failed_step = bad[0].name if bad else None
        if bad:
            verb = "failed" if bad[0].state == "Failed" else "was cancelled"
            run.message = f"step {bad[0].name} {verb}" + (
                f": {bad[0].message}" if bad[0].message else ""
            )
        else:
            run.message = "every step ended"
        run.completion_time = now
    return create


def cancel_run(run: WorkflowRun, jobs: Mapping[str, StepJob], now: datetime, why: str) -> list[str]:
    """Cancel a Running run in place (waiting steps Cancelled, phase Cancelled); the names of
    its step jobs still going, to cancel."""
    out: list[str] = []
    for record in run.steps:
        if record.reused or record.state in ENDED:
            continue
        if record.job:
            job = jobs.get(record.job)
            if job is None or _state_of(job)[0] not in ENDED:
                out.append(record.job)
        record.state, record.message = "Cancelled", why
    run.phase, run.message, run.completion_time = "Cancelled", why, now
    return out


def new_run(
    wf: GryviaWorkflow, number: int, now: datetime, *, trigger: str, scheduled: datetime | None
) -> WorkflowRun:
    """A fresh Running run with every step Waiting."""
    return WorkflowRun(
        number=number,
        trigger=trigger,
        scheduled_time=scheduled,
        start_time=now,
        steps=[WorkflowStepStatus(name=s.name) for s in wf.spec.steps],
    )


def retry_run(
    wf: GryviaWorkflow, old: WorkflowRun, number: int, from_step: str, now: datetime
) -> WorkflowRun:
    """Run `number`, retrying `old` from `from_step`: steps that Succeeded in `old` and are
    not `from_step` or its dependents keep their job (reused); the others run again."""
    again = descendants(wf.spec.steps, from_step)
    before = {s.name: s for s in old.steps}
    run = new_run(wf, number, now, trigger="Retry", scheduled=None)
    run.retry_of, run.from_step = old.number, from_step
    for record in run.steps:
        prev = before.get(record.name)
        if record.name not in again and prev is not None and prev.state == "Succeeded":
            record.state, record.job, record.reused = "Succeeded", prev.job, True
    return run


def parse_request(value: str | None, parts: int) -> list[str] | None:
    """`id:a[:b]` of a retry or cancel annotation split in `parts` fields; None when absent
    or malformed."""
    if not value:
        return None
    fields = value.split(":")
    return fields if len(fields) == parts and all(fields) else None


def cron_times(expr: str, after: datetime, now: datetime) -> tuple[datetime | None, datetime]:
    """(the latest cron time in (after, now], or None; the first cron time after now).
    Times are UTC; `after` older than a day before now counts from a day before now."""
    from cronsim import CronSim

    start = max(after, now - _CATCH_UP)
    latest = None
    it = CronSim(expr, start.replace(tzinfo=None))
    while True:
        t = next(it).replace(tzinfo=now.tzinfo)
        if t > now:
            return latest, t
        latest = t


def _run_by_number(runs: list[WorkflowRun], number: int) -> WorkflowRun | None:
    return next((r for r in runs if r.number == number), None)


def reconcile_workflow(wf: GryviaWorkflow, jobs: Sequence[StepJob], now: datetime) -> WorkflowPlan:
    """The plan for one workflow (see the module docstring for the rules). `jobs` are its
    step jobs (label gryvia.io/workflow); `now` is UTC."""
    plan = WorkflowPlan()
    by_name = {j.name: j for j in jobs}
    status = wf.status.model_copy(deep=True) if wf.status else None
    runs = list(status.runs or []) if status else []
    last = max([r.number for r in runs] + [status.last_run or 0 if status else 0])
    handled_retry = status.handled_retry if status else None
    handled_cancel = status.handled_cancel if status else None
    last_schedule = status.last_schedule_time if status else None
    notes: list[str] = []
    annotations = wf.metadata.annotations or {}

    cancel = parse_request(annotations.get(ANNOTATION_CANCEL_RUN), 2)
    if cancel and cancel[0] != handled_cancel:
        handled_cancel = cancel[0]
        target = _run_by_number(runs, int(cancel[1])) if cancel[1].isdigit() else None
        if target is not None and target.phase == "Running":
            plan.cancel += cancel_run(target, by_name, now, "cancelled by request")

    retry = parse_request(annotations.get(ANNOTATION_RETRY), 3)
    if retry and retry[0] != handled_retry:
        handled_retry = retry[0]
        old = _run_by_number(runs, int(retry[1])) if retry[1].isdigit() else None
        if old is None or old.phase == "Running":
            notes.append(f"retry of run {retry[1]} ignored: it is running or not recorded")
        elif retry[2] not in {s.name for s in wf.spec.steps}:
            notes.append(f"retry ignored: no step named {retry[2]}")
        else:
            last += 1
            runs.append(retry_run(wf, old, last, retry[2], now))

    schedule = wf.spec.schedule
    if schedule is not None:
        created = wf.metadata.creation_timestamp or now
        due, plan.wake_at = cron_times(schedule.cron, last_schedule or created, now)
        if due is not None and not schedule.suspend:
            last_schedule = due
            active = [r for r in runs if r.phase == "Running"]
            if active and schedule.concurrency_policy == "Forbid":
                notes.append(
                    f"run at {due:%Y-%m-%dT%H:%M:%SZ} skipped: run {active[-1].number} is "
                    "still running (Forbid)"
                )
            else:
                if schedule.concurrency_policy == "Replace":
                    for r in active:
                        plan.cancel += cancel_run(r, by_name, now, "replaced by a scheduled run")
                last += 1
                runs.append(new_run(wf, last, now, trigger="Schedule", scheduled=due))
    elif last == 0:
        last = 1
        runs.append(new_run(wf, 1, now, trigger="Created", scheduled=None))

    for run in runs:
        if run.phase == "Running":
            plan.create += advance_run(wf, run, by_name, now)

    limit = wf.spec.history_limit
    kept = runs[-limit:]
    if len(runs) > len(kept):
        used = {s.job for r in kept for s in r.steps if s.job}
        oldest = kept[0].number
        plan.delete = sorted(j.name for j in jobs if j.run < oldest and j.name not in used)
    plan.status = _status(kept, last, handled_retry, handled_cancel, last_schedule, plan, notes)
    return plan


def _status(
    runs: list[WorkflowRun],
    last: int,
    handled_retry: str | None,
    handled_cancel: str | None,
    last_schedule: datetime | None,
    plan: WorkflowPlan,
    notes: list[str],
) -> dict[str, Any]:
    latest = runs[-1] if runs else None
    message = "; ".join(notes) or (latest.message if latest else None)
    if latest is None and not message:
        message = "waiting for the first scheduled time"
    out: dict[str, Any] = {
        "phase": latest.phase if latest else "Waiting",
        "lastRun": last,
        "failedStep": latest.failed_step if latest else None,
        "message": message,
        "lastScheduleTime": last_schedule,
        "nextScheduleTime": plan.wake_at,
        "handledRetry": handled_retry,
        "handledCancel": handled_cancel,
        "runs": [r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in runs],
    }
    return {
        k: (v.isoformat().replace("+00:00", "Z") if isinstance(v, datetime) else v)
        for k, v in out.items()
    }
