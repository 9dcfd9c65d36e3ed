"""GryviaWorkflow: GryviaAIJob steps with dependencies (`sbatch --dependency`), parameters and
an optional cron schedule; its runs are numbered and recorded in its status."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool, StringConstraints, ValidationError, model_validator

from gryvia_operator.api import resources
from gryvia_operator.api.aijob import GryviaAIJobSpec
from gryvia_operator.api.base import (
    AGE_COLUMN,
    FreeForm,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeInt32,
    PositiveInt32,
    PrinterColumn,
    Str63,
)
from gryvia_operator.api.crd.fieldcheck import dotted
from gryvia_operator.api.names import statefulset_name
from gryvia_operator.api.reservation import cron_problem

StepCondition = Literal["afterok", "afterany", "afternotok"]
ConcurrencyPolicy = Literal["Allow", "Forbid", "Replace"]
RunPhase = Literal["Running", "Succeeded", "Failed", "Cancelled"]
StepState = Literal["Waiting", "Pending", "Running", "Succeeded", "Failed", "Skipped", "Cancelled"]

LABEL_WORKFLOW = "gryvia.io/workflow"
"""On every step job: the workflow's name."""
LABEL_RUN = "gryvia.io/workflow-run"
"""On every step job: the run number."""
LABEL_STEP = "gryvia.io/workflow-step"
"""On every step job: the step name."""
ANNOTATION_RETRY = "gryvia.io/workflow-retry"
"""Set by `gryvia workflow retry`: `<id>:<run>:<step>`; handled once (status.handledRetry)."""
ANNOTATION_CANCEL_RUN = "gryvia.io/workflow-cancel"
"""Set by `gryvia workflow cancel`: `<id>:<run>`; handled once (status.handledCancel)."""
DEFAULT_HISTORY_LIMIT = 10

_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
PLACEHOLDER = re.compile(r"\$\((parameters|workflow)\.([A-Za-z0-9_-]+)\)")
"""`$(parameters.NAME)`, `$(workflow.name)`, `$(workflow.run)`, `$(workflow.step)` (other
`$(...)`, such as a shell's command substitution, are left alone)."""


class WorkflowStep(GryviaModel):
    """One step: a GryviaAIJob spec run when its dependencies allow."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=40, pattern=_DNS_LABEL)]
    """Step name (DNS label); the step's job is `<workflow>-<run>-<step>`."""
    depends_on: list[Str63] | None = None
    """Steps that must end first (their condition decides whether this one runs)."""
    condition: StepCondition = "afterok"
    """As `sbatch --dependency`: afterok (every dependency Succeeded), afterany (every one
    ended, whatever the outcome) or afternotok (every one ended without succeeding: Failed,
    Cancelled, Rejected, Preempted or Skipped). When it cannot hold, the step is Skipped."""
    template: FreeForm
    """The step's GryviaAIJob `spec`. `$(parameters.NAME)`, `$(workflow.name)`,
    `$(workflow.run)` and `$(workflow.step)` in its strings are replaced first; the result
    must be a valid GryviaAIJob spec."""


class WorkflowSchedule(GryviaModel):
    """Start a run at every cron time."""

    cron: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    """Five-field cron expression in UTC (numbers, `*`, `/`, `,`, `-`), e.g. `*/5 * * * *`."""
    concurrency_policy: ConcurrencyPolicy = "Allow"
    """As a CronJob's: Allow (runs may overlap), Forbid (skip a time while a run is still
    running) or Replace (cancel the running runs, then start)."""
    suspend: StrictBool = False
    """Start no scheduled runs (retries still work)."""


class GryviaWorkflowSpec(GryviaModel):
    """Steps, parameters and schedule."""

    steps: Annotated[list[WorkflowStep], Field(min_length=1, max_length=50)]
    """The steps (names unique; dependencies must name earlier or later steps, no cycles)."""
    parameters: dict[str, Annotated[str, StringConstraints(max_length=4096)]] | None = None
    """Values substituted for `$(parameters.NAME)` in the steps' templates."""
    schedule: WorkflowSchedule | None = None
    """Cron schedule; without one a run starts once, when the workflow is created."""
    history_limit: PositiveInt32 = DEFAULT_HISTORY_LIMIT
    """Runs kept in status; the step jobs of older runs are deleted."""

    @model_validator(mode="after")
    def _check(self) -> GryviaWorkflowSpec:
        problems = spec_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self


class WorkflowStepStatus(GryviaModel):
    """One step of one run."""

    name: str
    """Step name."""
    state: StepState = "Waiting"
    """Waiting (for dependencies), Pending/Running (its job's phase), Succeeded, Failed,
    Cancelled, or Skipped (its condition cannot hold)."""
    job: str | None = None
    """Its GryviaAIJob (of an earlier run when reused by a retry)."""
    reused: StrictBool | None = None
    """True when a retry took this step's success from the run it retried."""
    message: str | None = None
    """Why it failed or was skipped."""


class WorkflowRun(GryviaModel):
    """One numbered run."""

    number: PositiveInt32
    """Run number (1, 2, ...)."""
    phase: RunPhase = "Running"
    """Running, Succeeded, Failed (failedStep names the step) or Cancelled."""
    failed_step: str | None = None
    """The first step (in spec order) that failed."""
    trigger: Literal["Created", "Schedule", "Retry"] = "Created"
    """What started it."""
    retry_of: PositiveInt32 | None = None
    """The run a retry continues."""
    from_step: str | None = None
    """The step a retry started from."""
    scheduled_time: datetime | None = None
    """The cron time of a scheduled run."""
    start_time: datetime | None = None
    """When it started."""
    completion_time: datetime | None = None
    """When it ended."""
    message: str | None = None
    """Detail of the phase."""
    steps: list[WorkflowStepStatus] = Field(default_factory=list)
    """Every step's state and job."""


class GryviaWorkflowStatus(GryviaModel):
    """Runs and schedule bookkeeping, written by the operator."""

    phase: Literal["Running", "Succeeded", "Failed", "Cancelled", "Waiting", "Invalid"] | None = (
        None
    )
    """The last run's phase; Waiting before a scheduled workflow's first run; Invalid when
    the spec is not valid (message says why)."""
    last_run: NonNegativeInt32 | None = None
    """Highest run number so far."""
    failed_step: str | None = None
    """The last run's failed step."""
    message: str | None = None
    """Detail of the phase."""
    last_schedule_time: datetime | None = None
    """Latest cron time acted on (a run started, or skipped under Forbid)."""
    next_schedule_time: datetime | None = None
    """Next cron time."""
    handled_retry: str | None = None
    """The last retry request handled (annotation gryvia.io/workflow-retry)."""
    handled_cancel: str | None = None
    """The last cancel request handled (annotation gryvia.io/workflow-cancel)."""
    runs: list[WorkflowRun] | None = None
    """The latest runs (spec.historyLimit), oldest first."""


class GryviaWorkflow(GryviaResource):
    """A DAG of GryviaAIJob steps, run once or on a cron schedule; runs are numbered."""

    kind: Literal["GryviaWorkflow"] = "GryviaWorkflow"
    spec: GryviaWorkflowSpec
    status: GryviaWorkflowStatus | None = None


WORKFLOW_KIND = KindInfo(
    resource=resources.WORKFLOW,
    model=GryviaWorkflow,
    description=GryviaWorkflow.__doc__ or "",
    printer_columns=(
        PrinterColumn("Phase", ".status.phase"),
        PrinterColumn("Run", ".status.lastRun", "integer"),
        PrinterColumn("Failed-Step", ".status.failedStep"),
        PrinterColumn("Schedule", ".spec.schedule.cron"),
        AGE_COLUMN,
        PrinterColumn("Next", ".status.nextScheduleTime", "date", priority=1),
        PrinterColumn("Message", ".status.message", priority=1),
    ),
    omitted=(
        "webhook steps (`--workflow-allow-webhooks`): steps are GryviaAIJobs only",
        "per-run parameters: a run uses spec.parameters as they are when it starts",
    ),
)
GryviaWorkflow.kind_info = WORKFLOW_KIND


def step_job_name(workflow: str, run: int, step: str) -> str:
    """`<workflow>-<run>-<step>`: the GryviaAIJob of one step of one run."""
    return f"{workflow}-{run}-{step}"


def name_problem(name: str, steps: list[str]) -> str | None:
    """None when the step jobs of workflow `name` keep their children's names (the longest is
    the StatefulSet `<job>-training`) within a 63-character DNS label for runs up to 9999;
    else what is wrong and the fix, naming metadata.name."""
    longest = max(steps, key=len, default="")
    if len(statefulset_name(step_job_name(name, 9999, longest))) <= 63:
        return None
    return (
        f"metadata.name: {name!r} is too long for its step jobs (<workflow>-<run>-<step>"
        "-training must fit in 63 characters with runs up to 9999); shorten the workflow's "
        "or the longest step's name"
    )


def substitute(value: Any, values: dict[str, str]) -> Any:
    """`value` (a template: dicts, lists, strings, numbers) with every placeholder
    `$(scope.key)` whose `scope.key` is in `values` replaced in its strings; others stay."""
    if isinstance(value, str):

        def repl(m: re.Match[str]) -> str:
            return values.get(f"{m.group(1)}.{m.group(2)}", m.group(0))

        return PLACEHOLDER.sub(repl, value)
    if isinstance(value, dict):
        return {k: substitute(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, values) for v in value]
    return value


def placeholder_values(
    parameters: dict[str, str] | None, workflow: str, run: int, step: str
) -> dict[str, str]:
    """What `substitute` replaces for one step of one run."""
    out = {f"parameters.{k}": v for k, v in (parameters or {}).items()}
    out |= {"workflow.name": workflow, "workflow.run": str(run), "workflow.step": step}
    return out


def _placeholders(value: Any) -> set[str]:
    if isinstance(value, str):
        return {f"{m.group(1)}.{m.group(2)}" for m in PLACEHOLDER.finditer(value)}
    if isinstance(value, dict):
        return set().union(*(_placeholders(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_placeholders(v) for v in value))
    return set()


def step_order(steps: list[WorkflowStep]) -> list[str]:
    """Step names in an order where each comes after its dependencies (spec order among the
    ready ones). Raises ValueError naming the steps of a cycle."""
    deps = {s.name: list(s.depends_on or []) for s in steps}
    done: list[str] = []
    left = [s.name for s in steps]
    while left:
        ready = [n for n in left if all(d in done for d in deps[n])]
        if not ready:
            raise ValueError(
                f"spec.steps: dependsOn makes a cycle among {', '.join(left)}; remove one edge"
            )
        done.append(ready[0])
        left.remove(ready[0])
    return done


def spec_problems(spec: GryviaWorkflowSpec) -> list[str]:
    """Everything wrong with a workflow spec beyond its schema, each naming the field and the
    fix: duplicate step names, unknown or self dependencies, cycles, unknown placeholders,
    templates that are not valid GryviaAIJob specs, a bad cron expression."""
    out: list[str] = []
    names = [s.name for s in spec.steps]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        out.append(f"spec.steps: step names must be unique; {', '.join(dupes)} repeated")
    known = set(names)
    for i, step in enumerate(spec.steps):
        where = f"spec.steps[{i}]"
        for dep in step.depends_on or []:
            if dep == step.name:
                out.append(f"{where}.dependsOn: step {step.name} cannot depend on itself")
            elif dep not in known:
                out.append(
                    f"{where}.dependsOn: no step named {dep!r}; steps are {', '.join(names)}"
                )
        allowed = {f"parameters.{k}" for k in spec.parameters or {}}
        allowed |= {"workflow.name", "workflow.run", "workflow.step"}
        for ref in sorted(_placeholders(step.template) - allowed):
            out.append(
                f"{where}.template: unknown placeholder $({ref}); "
                "define it in spec.parameters or use workflow.name, workflow.run, workflow.step"
            )
        values = placeholder_values(spec.parameters, "w", 1, step.name)
        try:
            GryviaAIJobSpec.model_validate(substitute(step.template, values))
        except ValidationError as exc:
            for err in exc.errors():
                field = dotted((f"{where}.template", *err["loc"]))
                out.append(f"{field}: {err['msg']}")
    if not out:
        try:
            step_order(spec.steps)
        except ValueError as exc:
            out.append(str(exc))
    if spec.schedule is not None:
        problem = cron_problem(spec.schedule.cron)
        if problem:
            out.append(problem.replace("schedule.recurrence.cron", "spec.schedule.cron"))
    return out
