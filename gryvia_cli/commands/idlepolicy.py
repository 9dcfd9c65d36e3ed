"""`gryvia idle-policy create|list|get|delete`: GryviaIdlePolicies, what happens to running
jobs whose GPUs sit idle (docs/idle-policies.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.kindcommands import add_get, add_list
from gryvia_cli.cli.objects import ObjectGroup, TableSpec
from gryvia_cli.cli.options import NamespaceOpt, OutputOpt, YesOpt, check_new_name
from gryvia_cli.cli.session import session
from gryvia_cli.core.idlepolicies import (
    IDLE_POLICY_COLUMNS,
    IDLE_POLICY_WIDE_COLUMNS,
    idle_policy_details,
    idle_policy_row,
    idle_policy_wide_row,
)
from gryvia_cli.errors import UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import success

app = typer.Typer(
    help="Idle policies: warn about, suspend or cancel jobs whose GPUs sit idle.",
    no_args_is_help=True,
)
NameArg = Annotated[str, typer.Argument(help="Idle policy name.", show_default=False)]
POLICIES = ObjectGroup(r.IDLE_POLICY, "idle policy", "idle-policy")


@app.command("create")
def create(
    ctx: typer.Context,
    name: NameArg,
    action: Annotated[
        str, typer.Option("--action", help="warn, suspend or cancel (after the grace).")
    ] = "warn",
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold", metavar="PERCENT", help="Idle below this GPU activity, 0..100."
        ),
    ] = 5.0,
    window: Annotated[
        int,
        typer.Option("--window", metavar="SECONDS", help="Idle this long: warned, 60..604800."),
    ] = 1800,
    grace: Annotated[
        int,
        typer.Option(
            "--grace", metavar="SECONDS", help="Still idle this long after the warning: acted on."
        ),
    ] = 600,
    job_type: Annotated[
        list[str] | None,
        typer.Option(
            "--job-type",
            metavar="TYPE",
            help="training, fine-tuning, evaluation or inference (repeatable; none: all).",
        ),
    ] = None,
    tenant: Annotated[
        bool,
        typer.Option("--tenant", help="Cover every namespace of the namespace's tenant."),
    ] = False,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Create (or update) an idle policy for the running jobs of a namespace or its tenant.

    A job whose GPUs' activity stays below the threshold for the window is warned (an Event
    on the job); with --action suspend or cancel it is suspended or cancelled once still idle
    after the grace. Jobs annotated gryvia.io/idle-exempt=true are left alone.

    Examples:
      gryvia idle-policy create idle-gpus --window 1800 --action suspend --grace 600
      gryvia idle-policy create strict --threshold 10 --action cancel --job-type training --tenant
    """
    check_new_name(name, "idle policy name")
    from gryvia_cli.core.idlepolicies import build_idle_policy

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    try:
        body = build_idle_policy(
            name,
            ns,
            threshold_percent=threshold,
            window_seconds=window,
            grace_seconds=grace,
            action=action,
            job_types=job_type,
            scope="Tenant" if tenant else "Namespace",
        )
    except ValueError as exc:
        raise UsageError(str(exc), hint="see 'gryvia idle-policy create --help'") from None
    obj = state.access().apply(r.IDLE_POLICY, body, ns)
    success(f"idle policy {ns}/{name} applied")
    POLICIES.print_written(state, obj, output)


add_list(
    app,
    POLICIES,
    TableSpec(IDLE_POLICY_COLUMNS, idle_policy_row, IDLE_POLICY_WIDE_COLUMNS, idle_policy_wide_row),
    "List idle policies: action, threshold, window, grace, running jobs covered and idle.",
    "SCOPE, JOB-TYPES and MESSAGE",
)
add_get(
    app,
    POLICIES,
    idle_policy_details,
    "Show one idle policy: the rule in words, then each idle job with what was measured and done.",
    "idle-gpus",
)


@app.command("delete")
def delete(
    ctx: typer.Context, name: NameArg, namespace: NamespaceOpt = None, yes: YesOpt = False
) -> None:
    """Delete an idle policy (jobs it suspended stay suspended: docs/idle-policies.md).

    Examples:
      gryvia idle-policy delete idle-gpus --yes
    """
    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    POLICIES.delete(
        state,
        name,
        ns,
        yes,
        question=f"Delete idle policy {ns}/{name}?",
        done=f"idle policy {ns}/{name} deleted",
    )
