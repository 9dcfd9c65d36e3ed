"""The registry's Tenants spec: GryviaTenants with the GryviaQuotas that cover them (GPUs
in use, monthly budget), their members, and the GryviaBudgets scoped to them in the detail
view. Figures come from gryvia_cli/core (tenancy, quota)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gryvia_cli.core.budgets import budget_details
from gryvia_cli.core.describe import Section
from gryvia_cli.core.quota import budget_figures, budget_lines, percent_marker, usage_lines
from gryvia_cli.core.tenancy import tenant_details
from gryvia_cli.tui.registry import Ctx, ObjectRef, ViewSpec, register
from gryvia_cli.tui.source import ClusterSource
from gryvia_cli.tui.widgets.rowtable import Cell, Column
from gryvia_operator.api import GryviaBudget, GryviaQuota, GryviaTenant
from gryvia_operator.api.attribution import tenant_namespace


@dataclass(frozen=True)
class TenantRow:
    """A tenant and the quotas that cover its namespace or name it as team; a quota that
    covers no tenant is a row of its own (`tenant` None)."""

    name: str
    tenant: GryviaTenant | None
    quotas: tuple[GryviaQuota, ...]


def quotas_of(tenant: str, quotas: Sequence[GryviaQuota]) -> tuple[GryviaQuota, ...]:
    """The quotas whose team is `tenant` or that cover its `tenant-<name>` namespace."""
    ns = tenant_namespace(tenant)
    return tuple(q for q in quotas if q.spec.team == tenant or ns in q.spec.namespaces)


def tenant_rows(tenants: Sequence[GryviaTenant], quotas: Sequence[GryviaQuota]) -> list[TenantRow]:
    """A row per tenant (by name), then one per quota no tenant claims (by name)."""
    rows = [TenantRow(t.name, t, quotas_of(t.name, quotas)) for t in tenants]
    claimed = {q.name for row in rows for q in row.quotas}
    rows.sort(key=lambda r: r.name)
    orphans = sorted((q for q in quotas if q.name not in claimed), key=lambda q: q.name)
    return [*rows, *(TenantRow(q.spec.team, None, (q,)) for q in orphans)]


def _tenant_key(row: TenantRow) -> str:
    return row.tenant.name if row.tenant else f"quota:{row.quotas[0].name}"


def _tenant_rows(ctx: Ctx) -> dict[str, Any]:
    tenants = ctx.store.models("tenants", GryviaTenant)
    quotas = ctx.store.models("quotas", GryviaQuota)
    return {_tenant_key(r): r for r in tenant_rows(tenants, quotas)}


def gpu_cell(row: TenantRow) -> Cell:
    """`used/max` GPUs of the quotas (the tenant's concurrentGPUs when no quota)."""
    if row.quotas:
        used = sum(_allocated(q) for q in row.quotas)
        limit = sum(q.spec.gpu_quota.max_gpus for q in row.quotas)
        return f"{used}/{limit}", percent_marker(100.0 * used / limit if limit else None)
    quotas = row.tenant.spec.quotas if row.tenant else None
    if quotas and quotas.concurrent_gpus:
        held = _tenant_usage(row.tenant, "used_gpus")
        return f"{int(held)}/{quotas.concurrent_gpus}", ""
    return "-", "dim"


def _allocated(quota: GryviaQuota) -> int:
    usage = quota.status.current_usage if quota.status else None
    return (usage.allocated_gpus or 0) if usage else 0


def _tenant_usage(tenant: GryviaTenant | None, field: str) -> float:
    usage = tenant.status.current_usage if tenant and tenant.status else None
    return float(getattr(usage, field, None) or 0) if usage else 0.0


def budget_cell(row: TenantRow) -> Cell:
    """`spent/budget USD (p%)` of the first quota with a monthly budget, else the tenant's
    monthly costUSD allowance against its month-to-date spend."""
    for quota in row.quotas:
        figures = budget_figures(quota)
        if figures is not None:
            pct = figures["percent"]
            text = f"{figures['spent']:.0f}/{figures['budget']:.0f} ({pct:.0f}%)"
            return text, percent_marker(pct)
    quotas = row.tenant.spec.quotas if row.tenant else None
    if quotas and quotas.cost_usd and quotas.cost_usd.monthly:
        spent, limit = _tenant_usage(row.tenant, "cost_usd"), quotas.cost_usd.monthly
        pct = 100.0 * spent / limit
        return f"{spent:.0f}/{limit:.0f} ({pct:.0f}%)", percent_marker(pct)
    return "-", "dim"


_HEALTH = {"healthy": "ok", "warning": "warn", "quota-exceeded": "error"}


def _tenant_cells(row: TenantRow, ctx: Ctx) -> list[Cell]:
    tenant = row.tenant
    members = len(tenant.spec.members or []) if tenant else 0
    health = (tenant.status.health if tenant and tenant.status else None) or "-"
    phases = ", ".join(q.status.phase for q in row.quotas if q.status and q.status.phase)
    return [
        (row.name, "" if tenant else "dim"),
        ((tenant.spec.display_name or "-") if tenant else "(quota only)", ""),
        (str(members) if tenant else "-", ""),
        gpu_cell(row),
        budget_cell(row),
        (", ".join(q.name for q in row.quotas) or "-", ""),
        (phases or "-", ""),
        (health, _HEALTH.get(health, "unknown")),
    ]


def _tenant_search(row: TenantRow) -> str:
    display = row.tenant.spec.display_name if row.tenant else ""
    return " ".join([row.name, display or "", *(q.name for q in row.quotas)]).lower()


def _tenant_ref(row: TenantRow) -> ObjectRef:
    if row.tenant is not None:
        return ObjectRef("tenants", None, row.tenant.name)
    return ObjectRef("quotas", None, row.quotas[0].name)


def _text(value: Any) -> str:
    return str(value)


def budgets_for(name: str, budgets: Sequence[dict[str, Any]]) -> list[GryviaBudget]:
    """The GryviaBudgets scoped to tenant or team `name` or its tenant namespace (invalid
    ones skipped)."""
    out = []
    for raw in budgets:
        try:
            budget = GryviaBudget.model_validate(raw)
        except ValueError:
            continue
        scope = budget.spec.scope
        if (scope.type in ("tenant", "team") and scope.name == name) or (
            scope.type == "namespace" and scope.name == tenant_namespace(name)
        ):
            out.append(budget)
    return out


_MEMBER_LINES = ("Members", "OIDC groups")


def member_lines(tenant: GryviaTenant) -> list[tuple[str, str]]:
    """(name, role) lines of the Members section: each user (with the day they joined), then
    each OIDC group (`group NAME`) with the role all groups share (`oidcGroupRole`, viewer
    when unset). The operator binds each to the tenant ClusterRole of its role."""
    lines = [
        (m.username, m.role + (f"  joined {m.joined_at:%Y-%m-%d}" if m.joined_at else ""))
        for m in tenant.spec.members or []
    ]
    role = tenant.spec.oidc_group_role or "viewer"
    lines += [(f"group {g}", role) for g in tenant.spec.oidc_groups or []]
    return lines


def _tenant_sections(raw: dict[str, Any], ctx: Ctx) -> list[Section]:
    kind = raw.get("kind")
    name = str((raw.get("metadata") or {}).get("name") or "")
    quotas = ctx.store.models("quotas", GryviaQuota)
    sections: list[Section] = []
    if kind == "GryviaTenant":
        tenant = GryviaTenant.model_validate(raw)
        details = [(k, v) for k, v in tenant_details(tenant) if k not in _MEMBER_LINES]
        sections.append(Section("Tenant", details))
        sections.append(Section("Members", member_lines(tenant), empty="no members"))
        mine = quotas_of(name, quotas)
    else:
        mine = tuple(q for q in quotas if q.name == name)
        name = mine[0].spec.team if mine else name
    for quota in mine:
        lines, notes = budget_lines(quota)
        rows = [(k, _text(v)) for k, v in [*usage_lines(quota), *lines]]
        rows += [("Note", n.text) for n in notes]
        sections.append(Section(f"Quota {quota.name}", rows))
    if not mine:
        sections.append(Section("Quota", [], empty="no GryviaQuota covers this tenant"))
    for budget in budgets_for(name, ctx.extra.get("budgets", [])):  # as `gryvia budget get`
        sections.append(Section(f"Budget {budget.name}", budget_details(budget, ctx.now.date())))
    return sections


def _tenant_fetch(source: ClusterSource, raw: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    try:
        return {"budgets": source.list_objects("budgets")}
    except Exception:  # GryviaBudget may not be installed or allowed: budgets are optional
        return {"budgets": []}


TENANTS = register(
    ViewSpec(
        name="tenants",
        title="Tenants",
        columns=(
            Column("name", "TENANT", 14, 0),
            Column("display", "DISPLAY NAME", 14, 4, flex=True, max_width=28),
            Column("members", "MEMBERS", 7, 3, justify="right"),
            Column("gpus", "GPUS", 7, 1, justify="right"),
            Column("budget", "BUDGET USD", 18, 1, justify="right"),
            Column("quotas", "QUOTAS", 12, 5),
            Column("phase", "QUOTA PHASE", 12, 2),
            Column("health", "HEALTH", 14, 2),
        ),
        rows=_tenant_rows,
        cells=_tenant_cells,
        search=_tenant_search,
        ref=_tenant_ref,
        kinds=frozenset({"tenants", "quotas"}),
        sections=_tenant_sections,
        fetch=_tenant_fetch,
        empty="No GryviaTenants or GryviaQuotas.",
        noun="tenant",
        placeholder="filter: tenant, display name or quota",
    ),
    "tenants",
    "quotas",
)
