"""`gryvia tune submit|list|status|best`: GryviaAutoTuners, hyperparameter searches whose
trials are GryviaAIJobs.

The operator (`--enable-autotuners`) creates the trials, reads their `GRYVIA_METRIC` lines
and stops poor ones early (docs/tuning.md); these commands create and read the tuner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from gryvia_cli.cli.kindcommands import add_list
from gryvia_cli.cli.objects import ObjectGroup, TableSpec
from gryvia_cli.cli.options import NamespaceOpt, OutputOpt
from gryvia_cli.cli.session import session
from gryvia_cli.core.autotuners import TUNER_COLUMNS, TUNER_WIDE_COLUMNS, tuner_row, tuner_wide_row
from gryvia_cli.errors import NotFoundError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    emit,
    render_data,
    render_names,
    render_one,
    render_table,
    section,
)

app = typer.Typer(
    help="Auto-tuners: hyperparameter searches run as trial jobs.", no_args_is_help=True
)
NameArg = Annotated[str, typer.Argument(help="Tuner name.", show_default=False)]
TUNERS = ObjectGroup(r.AUTOTUNER, "tuner", "tune")

if TYPE_CHECKING:
    from gryvia_operator.api.autotuner import GryviaAutoTuner


def _model(obj: dict[str, Any]) -> GryviaAutoTuner:
    from gryvia_operator.api.autotuner import GryviaAutoTuner

    return GryviaAutoTuner.model_validate(obj)


@app.command("submit")
def submit(
    ctx: typer.Context,
    file: Annotated[
        str, typer.Argument(help="GryviaAutoTuner manifest (YAML), or - for stdin.", metavar="FILE")
    ],
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Create a tuner from a manifest; its first trials start at once.

    The manifest is checked first (parameter space, placeholders, the trial job spec);
    nothing is created when it is not valid. Needs the operator flag --enable-autotuners
    (chart value aiOperator.autotuners.enabled).

    Examples:
      gryvia tune submit sweep.yaml
      gryvia tune submit sweep.yaml -n ml -o yaml
    """
    from gryvia_cli.core.autotuners import build_tuner

    TUNERS.submit(session(ctx), file, namespace, output, build_tuner, "status")


add_list(
    app,
    TUNERS,
    TableSpec(TUNER_COLUMNS, tuner_row, TUNER_WIDE_COLUMNS, tuner_wide_row),
    "List tuners: phase, trials created of maxTrials, trials not ended, the best so far.",
    "OBJECTIVE and MESSAGE",
)


@app.command("status")
def status(
    ctx: typer.Context,
    name: NameArg,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Show one tuner: objective, search, the best trial so far, and every trial with its
    parameters, state and last reported value.

    Examples:
      gryvia tune status lr-sweep
      gryvia tune status lr-sweep -o yaml
    """
    from gryvia_cli.core.autotuners import TRIAL_COLUMNS, trial_row, trials_of, tuner_details

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    obj = TUNERS.read(state, name, ns)
    tuner = _model(obj)
    fmt = state.fmt(output)
    render_one(obj, fmt, TUNERS.qualified(name), lambda: tuner_details(tuner))
    if fmt in MACHINE_FORMATS or fmt is OutputFormat.name:
        return
    trials = trials_of(tuner)
    emit()
    section(f"Trials ({len(trials)})")
    if trials:
        render_table(TRIAL_COLUMNS, [trial_row(t) for t in trials])
    else:
        emit("No trials yet.")


@app.command("best")
def best(
    ctx: typer.Context,
    name: NameArg,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Print the best trial so far: its job, value and parameters (`-o json|yaml`: an
    object with index, name, parameters, value; `-o name`: the trial's job).

    Fails (not found, non-zero exit) while no trial has reported the objective.

    Examples:
      gryvia tune best lr-sweep
      gryvia tune best lr-sweep -o json
    """
    from gryvia_cli.core.autotuners import BEST_COLUMNS, best_data, format_params, format_value

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    tuner = _model(TUNERS.read(state, name, ns))
    data = best_data(tuner)
    if data is None:
        raise NotFoundError(
            f'tuner "{name}" has no best trial yet: no trial reported {tuner.spec.objective.name}',
            hint=f"see 'gryvia tune status {name}'",
        )
    fmt = state.fmt(output)
    if fmt in MACHINE_FORMATS:
        render_data(data, fmt)
    elif fmt is OutputFormat.name:
        render_names([f"{r.AIJOB.qualified}/{data['name']}"])
    else:
        row = [data["name"], data["index"], format_value(data["value"])]
        render_table(BEST_COLUMNS, [[*row, format_params(data["parameters"])]])
