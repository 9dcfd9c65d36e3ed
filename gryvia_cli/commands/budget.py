"""`gryvia budget create|list|get|delete`: GryviaBudgets, their state and forecast."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from gryvia_cli.cli.flags import BoolValueCommand
from gryvia_cli.cli.kindcommands import add_get
from gryvia_cli.cli.objects import ObjectGroup
from gryvia_cli.cli.options import OutputOpt, YesOpt, check_new_name
from gryvia_cli.cli.session import session
from gryvia_cli.core.budgets import budget_details
from gryvia_cli.errors import UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import OutputFormat, info, render_table, success

app = typer.Typer(help="Budgets: create, list, show and delete them.", no_args_is_help=True)
NameArg = Annotated[str, typer.Argument(help="Budget name.", show_default=False)]

BUDGETS = ObjectGroup(r.BUDGET, "budget", "budget")


def _spec_from_options(
    scope: str | None,
    period: str,
    start_date: str | None,
    end_date: str | None,
    week_start: str | None,
    cost_usd: float | None,
    gpu_hours: float | None,
    gpu_type_hours: list[str],
    max_jobs: int | None,
    max_gpus: int | None,
    alerts: list[str],
    enforce: str | None,
    grace: str | None,
    rollover: float | None,
    receiver: str | None,
    receiver_format: str | None,
    secret: str | None,
) -> dict[str, Any]:
    from gryvia_cli.core.budgets import parse_alert, parse_scope, parse_secret, parse_type_hours

    if scope is None:
        raise UsageError("--scope is required", hint="e.g. --scope tenant:acme")
    spec: dict[str, Any] = {"scope": parse_scope(scope), "period": {"type": period}}
    for key, value in (("startDate", start_date), ("endDate", end_date), ("weekStart", week_start)):
        if value is not None:
            spec["period"][key] = value
    limits: dict[str, Any] = {}
    for key, number in (
        ("costUSD", cost_usd),
        ("gpuHours", gpu_hours),
        ("maxConcurrentJobs", max_jobs),
        ("maxConcurrentGPUs", max_gpus),
    ):
        if number is not None:
            limits[key] = number
    if gpu_type_hours:
        limits["gpuTypeHours"] = dict(parse_type_hours(t) for t in gpu_type_hours)
    if limits:
        spec["limits"] = limits
    if alerts:
        spec["alerts"] = [parse_alert(a) for a in alerts]
    if grace is not None and enforce != "block":
        raise UsageError(
            "--grace-period needs --enforce block"
            + (f" (it does nothing with --enforce {enforce})" if enforce else "")
        )
    if enforce is not None:
        spec["enforcement"] = {"enabled": True, "action": enforce}
        if grace is not None:
            spec["enforcement"]["gracePeriod"] = grace
    if rollover is not None:
        spec["rollover"] = {"enabled": True, "maxRolloverPercent": rollover}
    if receiver is not None:
        spec["receiver"] = {"url": receiver, "format": receiver_format or "gryvia"}
        if secret is not None:
            spec["receiver"]["secretRef"] = parse_secret(secret)
    elif secret is not None or receiver_format is not None:
        raise UsageError("--secret and --receiver-format need --receiver URL")
    return spec


def _options_given(ctx: typer.Context) -> list[str]:
    """The spec options given on the command line (not defaults), as `--flag` names."""
    spec_params = {"file", "output", "name"}
    return [
        f"--{param.name.replace('_', '-')}" if not param.opts else max(param.opts, key=len)
        for param in ctx.command.params
        if param.name not in spec_params
        and param.name is not None
        and getattr(ctx.get_parameter_source(param.name), "name", None) == "COMMANDLINE"
    ]


@app.command("create", cls=BoolValueCommand)
def create(
    ctx: typer.Context,
    name: NameArg,
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope", metavar="TYPE:NAME", help="team, namespace, tenant, user, project."
        ),
    ] = None,
    period: Annotated[
        str,
        typer.Option(
            "--period", metavar="PERIOD", help="daily, weekly, monthly, quarterly, annual, custom."
        ),
    ] = "monthly",
    start_date: Annotated[
        str | None, typer.Option("--start-date", metavar="YYYY-MM-DD", help="custom: first day.")
    ] = None,
    end_date: Annotated[
        str | None,
        typer.Option("--end-date", metavar="YYYY-MM-DD", help="custom: last day (inclusive)."),
    ] = None,
    week_start: Annotated[
        str | None,
        typer.Option("--week-start", metavar="DAY", help="weekly: first day [default: sunday]."),
    ] = None,
    cost_usd: Annotated[
        float | None, typer.Option("--cost-usd", min=0, metavar="USD", help="Spend limit.")
    ] = None,
    gpu_hours: Annotated[
        float | None, typer.Option("--gpu-hours", min=0, metavar="H", help="GPU-hour limit.")
    ] = None,
    gpu_type_hours: Annotated[
        list[str] | None,
        typer.Option("--gpu-type-hours", metavar="TYPE=H", help="Per GPU type; repeatable."),
    ] = None,
    max_jobs: Annotated[
        int | None,
        typer.Option("--max-concurrent-jobs", min=0, metavar="N", help="Throttle: jobs at once."),
    ] = None,
    max_gpus: Annotated[
        int | None,
        typer.Option("--max-concurrent-gpus", min=0, metavar="N", help="Throttle: GPUs at once."),
    ] = None,
    alert: Annotated[
        list[str] | None,
        typer.Option("--alert", metavar="PCT[:ACTIONS]", help="Threshold, e.g. 50 or 90:block."),
    ] = None,
    enforce: Annotated[
        str | None,
        typer.Option("--enforce", metavar="ACTION", help="warn, block or throttle [default: off]."),
    ] = None,
    grace: Annotated[
        str | None,
        typer.Option("--grace-period", metavar="DURATION", help="block: wait this long (2h)."),
    ] = None,
    rollover: Annotated[
        float | None,
        typer.Option(
            "--rollover", min=0, max=100, metavar="PCT", help="Carry unused budget, capped."
        ),
    ] = None,
    receiver: Annotated[
        str | None, typer.Option("--receiver", metavar="URL", help="POST each alert here.")
    ] = None,
    receiver_format: Annotated[
        str | None,
        typer.Option("--receiver-format", metavar="FMT", help="gryvia or slack [default: gryvia]."),
    ] = None,
    secret: Annotated[
        str | None,
        typer.Option("--secret", metavar="NS/NAME[:KEY]", help="HMAC key for the signature."),
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option("-f", "--file", metavar="PATH", help="A GryviaBudget YAML instead."),
    ] = None,
    output: OutputOpt = None,
) -> None:
    """Create or update a budget (server-side apply).

    The operator measures the spend in scope over the period (UTC; weeks start on Sunday
    unless --week-start), fires each --alert threshold once per period as an Event (and a
    signed POST to --receiver), and with --enforce warns, blocks (new jobs Rejected, queued
    ones held) or throttles (--max-concurrent-jobs/gpus) jobs in scope.

    Examples:
      gryvia budget create acme-monthly --scope tenant:acme --cost-usd 10 --alert 50 --alert 90
      gryvia budget create ml-cap --scope namespace:ml --cost-usd 500 --enforce block
      gryvia budget create ops --scope team:ops --gpu-hours 100 --receiver https://h.example/b
      gryvia budget create q4 -f budget.yaml
    """
    check_new_name(name, "budget name")
    from gryvia_cli.core.budgets import build_budget

    if file is not None:
        import yaml

        try:
            body = yaml.safe_load(file.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise UsageError(f"--file {file}: {exc}") from None
        if not isinstance(body, dict) or not isinstance(body.get("spec"), dict):
            raise UsageError(f"--file {file}: not a GryviaBudget (no spec)")
        if body.get("kind", "GryviaBudget") != "GryviaBudget":
            raise UsageError(f"--file {file}: kind is {body['kind']!r}, not GryviaBudget")
        named = (body.get("metadata") or {}).get("name")
        if named is not None and named != name:
            raise UsageError(
                f"--file {file}: metadata.name is {named!r} but NAME is {name!r}",
                hint=f"run 'gryvia budget create {named} -f {file}' or fix metadata.name",
            )
        given = _options_given(ctx)
        if given:
            raise UsageError(
                f"{', '.join(given)} cannot be combined with -f/--file",
                hint="put the field in the file's spec, or drop -f and use options only",
            )
        spec = body["spec"]
    else:
        try:
            spec = _spec_from_options(
                scope, period, start_date, end_date, week_start, cost_usd, gpu_hours,
                gpu_type_hours or [], max_jobs, max_gpus, alert or [], enforce, grace,
                rollover, receiver, receiver_format, secret,
            )  # fmt: skip
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    try:
        body = build_budget(name, spec)
    except ValueError as exc:
        raise UsageError(str(exc), hint="see 'gryvia budget create --help'") from None
    state = session(ctx)
    obj = state.access().apply(r.BUDGET, body)
    success(f"budget {name} applied")
    BUDGETS.print_written(state, obj, output)


@app.command("list")
def list_budgets(ctx: typer.Context, output: OutputOpt = None) -> None:
    """List budgets with their spend, state and forecast.

    Columns NAME, SCOPE, PERIOD, SPENT, LIMIT, USED, STATE (active, warning, exceeded,
    blocked; pending until the operator computed it), FORECAST; `-o wide` adds GPU-HOURS,
    ENFORCEMENT, ALERTS and RECEIVER. `-o json|yaml` prints the GryviaBudgetList.

    Examples:
      gryvia budget list
      gryvia budget list -o json | jq '.items[].status.state'
    """
    from gryvia_cli.core.budgets import (
        BUDGET_COLUMNS,
        BUDGET_WIDE_COLUMNS,
        budget_row,
        budget_wide_row,
    )
    from gryvia_operator.api import GryviaBudget

    state = session(ctx)
    fmt = state.fmt(output)
    budgets = BUDGETS.listed(state, GryviaBudget, fmt)
    if budgets is None:
        return
    budgets.sort(key=lambda b: b.name)
    if fmt is OutputFormat.wide:
        render_table(BUDGET_WIDE_COLUMNS, [budget_wide_row(b) for b in budgets])
    else:
        render_table(BUDGET_COLUMNS, [budget_row(b) for b in budgets])
    info(f"Total: {len(budgets)} budget(s)")


add_get(
    app,
    BUDGETS,
    lambda b, now: budget_details(b, now.date()),
    "Show one budget: scope, period, limits, spend, state, forecast, alerts fired.",
    "acme-monthly",
)


@app.command("delete")
def delete(ctx: typer.Context, name: NameArg, yes: YesOpt = False) -> None:
    """Delete a budget (jobs it blocked or throttled are decided again without it).

    Examples:
      gryvia budget delete acme-monthly --yes
    """
    BUDGETS.delete(session(ctx), name, None, yes)
