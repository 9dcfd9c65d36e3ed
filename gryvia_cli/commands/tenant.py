"""`gryvia tenant create|list|get|delete|add-member|remove-member`: tenants (GryviaTenant),
their namespaces and who may use them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gryvia_cli.cli.flags import BoolValueCommand
from gryvia_cli.cli.kindcommands import add_get
from gryvia_cli.cli.objects import ObjectGroup
from gryvia_cli.cli.options import OutputOpt, YesOpt, confirm
from gryvia_cli.cli.session import Session, session
from gryvia_cli.core.tenancy import tenant_details
from gryvia_cli.errors import ConflictError, ForbiddenError, NotFoundError, UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    info,
    note,
    render_names,
    render_table,
    success,
    warn,
)

if TYPE_CHECKING:
    from gryvia_cli.core.membership import MembershipChange

app = typer.Typer(
    help="Tenants: create, list, show and delete them; add and remove members.",
    no_args_is_help=True,
)


class DeletionPolicy(StrEnum):
    """What deleting the tenant does to its namespace."""

    Retain = "Retain"
    Delete = "Delete"


class Role(StrEnum):
    """A tenant role: the chart's ClusterRole gryvia-tenant-<role>."""

    admin = "admin"
    member = "member"
    viewer = "viewer"


NameArg = Annotated[str, typer.Argument(help="Tenant name.", show_default=False)]
WhoArg = Annotated[
    str,
    typer.Argument(
        metavar="USER",
        help="User name as the API server authenticates it (with --group: an OIDC group).",
        show_default=False,
    ),
]
GroupOpt = Annotated[
    bool,
    typer.Option("--group", help="USER names an OIDC group (spec.oidcGroups), not a user."),
]
CONFLICT_ATTEMPTS = 5
"""Read-modify-write attempts of a membership edit before giving up on a tenant that keeps
changing under it (each write carries the resourceVersion it read)."""

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

    Running it again on an existing tenant updates it: the options given replace their
    fields, the others keep their values (applied with field manager gryvia-cli; remove a
    field with `kubectl edit gryviatenant NAME`). The name: lowercase letters, digits and
    '-', at most 56 characters, not starting or ending with '-'.

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
    state = session(ctx)
    try:
        current = state.access().get(r.TENANT, name).get("spec")
    except (NotFoundError, ForbiddenError):  # a new tenant, or no right to read it: as given
        current = None
    body = build_tenant_apply(
        name,
        display_name=display_name,
        allowed_skus=allowed_sku or [],
        max_gpus=max_gpus,
        isolated=isolated,
        members=members,
        deletion_policy=deletion_policy.value if deletion_policy else None,
        current=current,
    )
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


add_get(
    app,
    TENANTS,
    lambda t, _now: tenant_details(t),
    "Show one tenant: namespace, SKUs, GPU limit, isolation, members, usage.",
    "vision",
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


def _edit_tenant(
    state: Session, name: str, edit: Callable[[Mapping[str, Any]], MembershipChange]
) -> tuple[dict[str, Any], MembershipChange]:
    """Read tenant `name`, compute `edit(spec)` and merge-patch the result with the
    resourceVersion read (optimistic concurrency): a 409 Conflict reads again and retries, up
    to CONFLICT_ATTEMPTS times. Returns the stored tenant and the change; nothing is written
    when the change has no patch. NotFoundError when the tenant does not exist,
    ConflictError when it kept changing."""
    for _ in range(CONFLICT_ATTEMPTS):
        obj = TENANTS.read(state, name)
        change = edit(obj.get("spec") or {})
        if change.patch is None:
            return obj, change
        version = (obj.get("metadata") or {}).get("resourceVersion")
        body = {"metadata": {"resourceVersion": version}, "spec": change.patch}
        try:
            return state.access().merge_patch(r.TENANT, name, None, body), change
        except ConflictError:
            continue
    raise ConflictError(
        f"tenant {name} changed {CONFLICT_ATTEMPTS} times while being edited; nothing written",
        hint="run the command again",
    )


def _checked(who: str, group: bool) -> str:
    from gryvia_cli.core.membership import name_problem

    problem = name_problem(who, "group" if group else "user")
    if problem:
        raise UsageError(problem)
    return who


@app.command("add-member")
def add_member(
    ctx: typer.Context,
    name: NameArg,
    who: WhoArg,
    role: Annotated[
        Role | None,
        typer.Option(
            "--role",
            help="admin, member or viewer [default: viewer; with --group: the groups' "
            "current role].",
            show_default=False,
        ),
    ] = None,
    group: GroupOpt = False,
    output: OutputOpt = None,
) -> None:
    """Give a user (or, with --group, an OIDC group) a role in a tenant.

    The operator binds members in the namespace tenant-NAME to the ClusterRole
    gryvia-tenant-ROLE: viewer reads jobs, pods, logs and usage; member also submits and
    cancels jobs and port-forwards; admin also manages the namespace's RoleBindings. A user
    already in the tenant gets the new role; one already holding it is left alone (exit 0).
    OIDC groups share one role (spec.oidcGroupRole): --role with --group changes it for
    every group of the tenant.

    Examples:
      gryvia tenant add-member vision alice@example.com --role member
      gryvia tenant add-member vision bob@example.com
      gryvia tenant add-member vision vision-team --group --role member
    """
    from gryvia_cli.core import membership

    who = _checked(who, group)
    state = session(ctx)
    wanted = role.value if role else None

    def edit(spec: Mapping[str, Any]) -> MembershipChange:
        if group:
            return membership.add_group(spec, name, who, wanted)
        role_ = wanted or membership.DEFAULT_ROLE
        return membership.add_member(spec, name, who, role_, state.now())

    obj, change = _edit_tenant(state, name, edit)
    (success if change.patch is not None else note)(change.message)
    TENANTS.print_written(state, obj, output)


@app.command("remove-member")
def remove_member(
    ctx: typer.Context,
    name: NameArg,
    who: WhoArg,
    group: GroupOpt = False,
    output: OutputOpt = None,
) -> None:
    """Take a user (or, with --group, an OIDC group) out of a tenant.

    The operator removes them from the tenant's RoleBinding (and deletes the binding when
    nobody is left in it), so they lose access to tenant-NAME. Removing someone who is not
    in the tenant changes nothing (exit 0).

    Examples:
      gryvia tenant remove-member vision alice@example.com
      gryvia tenant remove-member vision vision-team --group
    """
    from gryvia_cli.core import membership

    who = _checked(who, group)
    state = session(ctx)

    def edit(spec: Mapping[str, Any]) -> MembershipChange:
        if group:
            return membership.remove_group(spec, name, who)
        return membership.remove_member(spec, name, who)

    obj, change = _edit_tenant(state, name, edit)
    (success if change.patch is not None else note)(change.message)
    TENANTS.print_written(state, obj, output)
