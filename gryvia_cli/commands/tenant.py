"""`gryvia tenant create|list|get|delete`: tenants (GryviaTenant) and their namespaces."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from gryvia_cli.cli.flags import BoolValueCommand
from gryvia_cli.cli.objects import ObjectGroup
from gryvia_cli.cli.options import OutputOpt, YesOpt, confirm
from gryvia_cli.cli.session import session
from gryvia_cli.errors import UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    info,
    note,
    render_names,
    render_one,
    render_table,
    success,
    warn,
)

app = typer.Typer(help="Tenants: create, list, show and delete them.", no_args_is_help=True)


class DeletionPolicy(StrEnum):
    """What deleting the tenant does to its namespace."""

    Retain = "Retain"
    Delete = "Delete"


NameArg = Annotated[str, typer.Argument(help="Tenant name.", show_default=False)]

TENANTS = ObjectGroup(r.TENANT, "tenant", "tenant")


@app.command("create", cls=BoolValueCommand)
def create(
    ctx: typer.Context,
    name: NameArg,
    display_name: Annotated[
        str | None,
        typer.Option("--display-name", metavar="TEXT", help="Human name [default: NAME]."),
    ] = None,
    allowed_sku: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-sku",
            metavar="SKU",
            help="A GryviaGpuSku (or GPU type) the tenant may use; repeatable [default: all].",
        ),
    ] = None,
    max_gpus: Annotated[
        int | None,
        typer.Option(
            "--max-gpus",
            min=0,
            metavar="N",
            help="GPUs in use at once (a ResourceQuota); 0 = unlimited.",
            show_default=False,
        ),
    ] = None,
    isolated: Annotated[
        bool | None,
        typer.Option(
            "--isolated/--no-isolated",
            help="NetworkPolicy: ingress only from the namespace itself [default: unset].",
            show_default=False,
        ),
    ] = None,
    member: Annotated[
        list[str] | None,
        typer.Option(
            "--member",
            metavar="USER[:ROLE]",
            help="A member and role (admin, member, viewer; default viewer); repeatable.",
        ),
    ] = None,
    deletion_policy: Annotated[
        DeletionPolicy | None,
        typer.Option(
            "--deletion-policy",
            help="On delete: Retain keeps the namespace, Delete deletes it [default: Retain].",
            show_default=False,
        ),
    ] = None,
    output: OutputOpt = None,
) -> None:
    """Create or update a tenant (server-side apply).

    The operator gives it the namespace tenant-NAME with a LimitRange, a ResourceQuota
    (--max-gpus), a NetworkPolicy (--isolated) and RoleBindings for the members.

    Only the options given are set, applied with field manager gryvia-cli: running it again
    sets the tenant to the new options, removing fields an earlier run set but this one does
    not (fields set by others are kept). The name: lowercase letters, digits and '-', at most
    56 characters, not starting or ending with '-'.

    Examples:
      gryvia tenant create vision --display-name "Vision team" --max-gpus 16
      gryvia tenant create nlp --allowed-sku a100-80g --member alice:admin --member bob
      gryvia tenant create sandbox --isolated --deletion-policy Delete -o yaml
      gryvia tenant create ml-research --max-gpus 128 --isolated true
    """
    from gryvia_cli.core.tenancy import build_tenant_apply, name_problem, parse_member
    from gryvia_operator.api.attribution import tenant_namespace

    problem = name_problem(name)
    if problem:
        raise UsageError(problem, hint="the namespace becomes tenant-NAME (63 characters at most)")
    try:
        members = [parse_member(m) for m in member or []]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    body = build_tenant_apply(
        name,
        display_name=display_name,
        allowed_skus=allowed_sku or [],
        max_gpus=max_gpus,
        isolated=isolated,
        members=members,
        deletion_policy=deletion_policy.value if deletion_policy else None,
    )
    state = session(ctx)
    obj = state.access().apply(r.TENANT, body)
    success(f"tenant {name} applied; its namespace is {tenant_namespace(name)}")
    TENANTS.print_written(state, obj, output)


@app.command("list")
def list_tenants(ctx: typer.Context, output: OutputOpt = None) -> None:
    """List tenants.

    Columns NAME, DISPLAY NAME, HEALTH, MAX GPUS ("unlimited" when unset), SKUS ("all" when
    unrestricted), NAMESPACE. `-o json|yaml` prints the GryviaTenantList.

    Examples:
      gryvia tenant list
      gryvia tenant list -o json | jq -r '.items[].metadata.name'
    """
    from gryvia_cli.core.tenancy import TENANT_COLUMNS, tenant_row
    from gryvia_operator.api import GryviaTenant

    state = session(ctx)
    tenants = TENANTS.listed(state, GryviaTenant, state.fmt(output))
    if tenants is None:
        return
    tenants.sort(key=lambda t: t.name)
    render_table(TENANT_COLUMNS, [tenant_row(t) for t in tenants])
    info(f"Total: {len(tenants)} tenant(s)")


@app.command("get")
def get(ctx: typer.Context, name: NameArg, output: OutputOpt = None) -> None:
    """Show one tenant: namespace, SKUs, GPU limit, isolation, members, usage.

    `-o yaml|json` prints the GryviaTenant as the API server stores it.

    Examples:
      gryvia tenant get vision
      gryvia tenant get vision -o yaml
    """
    from gryvia_cli.core.tenancy import tenant_details
    from gryvia_operator.api import GryviaTenant

    state = session(ctx)
    fmt = state.fmt(output)
    obj = TENANTS.read(state, name)
    render_one(
        obj,
        fmt,
        f"{r.TENANT.qualified}/{name}",
        lambda: tenant_details(GryviaTenant.model_validate(obj)),
    )


@app.command("delete")
def delete(ctx: typer.Context, name: NameArg, yes: YesOpt = False) -> None:
    """Delete a tenant; say first what happens to its namespace.

    With deletionPolicy Retain (the default) the namespace tenant-NAME and everything in it
    stay and only its tenant labels are removed; with Delete the namespace and everything in
    it are deleted. Asks first unless --yes or stdin is not a terminal.

    Examples:
      gryvia tenant delete vision
      gryvia tenant delete sandbox --yes
    """
    from gryvia_cli.core.tenancy import deletion_outcome
    from gryvia_operator.api import GryviaTenant

    state = session(ctx)
    tenant = GryviaTenant.model_validate(TENANTS.read(state, name))
    outcome = deletion_outcome(tenant)
    if tenant.spec.deletion_policy == "Delete":
        warn(outcome)
    else:
        note(outcome)
    if not confirm(f"Delete tenant {name}?", yes):
        raise typer.Exit(1)
    state.access().delete(r.TENANT, name, None)
    success(f"tenant {name} deleted")
    render_names([TENANTS.qualified(name)])
