"""`gryvia workflow submit|list|get|logs|cancel|retry`: GryviaWorkflows, DAGs of job steps.

The operator (`--enable-workflows`) runs the steps; retry and cancel are requests the CLI
writes as annotations and the operator acts on once (docs/workflows.md).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gryvia_cli.cli.kindcommands import add_list
from gryvia_cli.cli.objects import ObjectGroup, TableSpec
from gryvia_cli.cli.options import NamespaceOpt, OutputOpt
from gryvia_cli.cli.session import session
from gryvia_cli.core.workflows import (
    WORKFLOW_COLUMNS,
    WORKFLOW_WIDE_COLUMNS,
    workflow_row,
    workflow_wide_row,
)
from gryvia_cli.errors import UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import render_one, section, success

app = typer.Typer(
    help="Workflows: DAGs of job steps, run once or on a schedule.", no_args_is_help=True
)
NameArg = Annotated[str, typer.Argument(help="Workflow name.", show_default=False)]
RunOpt = Annotated[
    int | None,
    typer.Option("--run", min=1, metavar="N", help="Run number [default: the latest]."),
]
WORKFLOWS = ObjectGroup(r.WORKFLOW, "workflow", "workflow")

if TYPE_CHECKING:
    from gryvia_operator.api.workflow import GryviaWorkflow


def _model(obj: dict[str, Any]) -> GryviaWorkflow:
    from gryvia_operator.api.workflow import GryviaWorkflow

    return GryviaWorkflow.model_validate(obj)


@app.command("submit")
def submit(
    ctx: typer.Context,
    file: Annotated[
        str, typer.Argument(help="GryviaWorkflow manifest (YAML), or - for stdin.", metavar="FILE")
    ],
    param: Annotated[
        list[str] | None,
        typer.Option("--param", "-p", metavar="NAME=VALUE", help="Set a parameter; repeatable."),
    ] = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Create a workflow from a manifest; without a schedule its first run starts at once.

    The manifest is checked first (steps, dependencies, placeholders, each step's job
    spec); nothing is created when it is not valid. Needs the operator flag
    --enable-workflows (chart value aiOperator.workflows.enabled).

    Examples:
      gryvia workflow submit pipeline.yaml
      gryvia workflow submit pipeline.yaml -p lr=0.001 -n ml
    """
    from gryvia_cli.core.workflows import build_workflow, parse_params

    def build(doc: Any, ns: str, source: str) -> dict[str, Any]:
        return build_workflow(doc, ns, parse_params(param or []), source)

    WORKFLOWS.submit(session(ctx), file, namespace, output, build, "get")


add_list(
    app,
    WORKFLOWS,
    TableSpec(WORKFLOW_COLUMNS, workflow_row, WORKFLOW_WIDE_COLUMNS, workflow_wide_row),
    "List workflows: phase and number of the latest run, its steps done, the failed step.",
    "NEXT (next scheduled time) and MESSAGE",
)


@app.command("get")
def get(
    ctx: typer.Context,
    name: NameArg,
    run: RunOpt = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Show one workflow: steps, schedule, every run, and the steps of one run.

    Examples:
      gryvia workflow get pipeline
      gryvia workflow get pipeline --run 2
      gryvia workflow get pipeline -o yaml
    """
    from gryvia_cli.core.workflows import workflow_details

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    obj = WORKFLOWS.read(state, name, ns)
    wf = _model(obj)

    def details() -> list[tuple[str, str]]:
        try:
            return workflow_details(wf, run)
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    render_one(obj, state.fmt(output), WORKFLOWS.qualified(name), details)


@app.command("logs")
def logs(
    ctx: typer.Context,
    name: NameArg,
    step: Annotated[
        str | None,
        typer.Option("--step", metavar="STEP", help="Only this step [default: every step]."),
    ] = None,
    run: RunOpt = None,
    follow: Annotated[
        bool, typer.Option("-f", "--follow", help="Keep streaming (needs --step).")
    ] = False,
    tail: Annotated[
        int, typer.Option("--tail", help="Lines from the end to show; -1 for the whole log.")
    ] = 100,
    namespace: NamespaceOpt = None,
) -> None:
    """Print the logs of a run's step jobs (as `gryvia logs JOB`), step by step.

    A step reused by a retry shows the log of the run it came from.

    Examples:
      gryvia workflow logs pipeline
      gryvia workflow logs pipeline --step train --run 2 -f
    """
    from gryvia_cli.core.workflows import step_jobs

    if follow and step is None:
        raise UsageError("-f follows one step: add --step STEP")
    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    wf = _model(WORKFLOWS.read(state, name, ns))
    try:
        pairs = step_jobs(wf, run, step)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    root = ctx.find_root()  # `gryvia logs` itself (command modules do not import each other)
    job_logs = root.command.get_command(root, "logs")  # type: ignore[attr-defined]
    defaults = {p.name: p.default for p in job_logs.params}
    for step_name, job in pairs:
        if step is None:
            section(f"step {step_name} (job {job})")
        job_logs.callback(
            **(defaults | {"job": job, "follow": follow, "tail": tail, "namespace": ns})
        )


@app.command("cancel")
def cancel(
    ctx: typer.Context, name: NameArg, run: RunOpt = None, namespace: NamespaceOpt = None
) -> None:
    """Cancel a running run: its running steps are cancelled, no further step starts.

    Examples:
      gryvia workflow cancel pipeline
      gryvia workflow cancel nightly --run 12
    """
    from gryvia_cli.core.workflows import cancel_request, request_patch
    from gryvia_operator.api.workflow import ANNOTATION_CANCEL_RUN

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    wf = _model(WORKFLOWS.read(state, name, ns))
    try:
        value, number = cancel_request(wf, run, uuid.uuid4().hex[:8])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    state.access().merge_patch(r.WORKFLOW, name, ns, request_patch(ANNOTATION_CANCEL_RUN, value))
    success(f"workflow {name}: cancel of run {number} requested")


@app.command("retry")
def retry(
    ctx: typer.Context,
    name: NameArg,
    from_step: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="STEP",
            help="Step to start again from [default: the run's failed step].",
        ),
    ] = None,
    run: RunOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Retry an ended run from a step, as a new run.

    The new run (number N+1) reuses the jobs of the steps that succeeded in the retried run
    and neither are STEP nor depend on it; STEP and everything after it run again.

    Examples:
      gryvia workflow retry pipeline --from train
      gryvia workflow retry pipeline --run 3
    """
    from gryvia_cli.core.workflows import request_patch, retry_request
    from gryvia_operator.api.workflow import ANNOTATION_RETRY

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    wf = _model(WORKFLOWS.read(state, name, ns))
    try:
        value = retry_request(wf, run, from_step, uuid.uuid4().hex[:8])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    state.access().merge_patch(r.WORKFLOW, name, ns, request_patch(ANNOTATION_RETRY, value))
    _, number, step = value.split(":")
    success(f"workflow {name}: retry of run {number} from step {step} requested")
