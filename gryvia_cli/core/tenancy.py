"""Tenants for `gryvia tenant`: the name rule, the apply body, table rows, details and what
deleting a tenant does to its namespace (pure).

Rules: a tenant `x` owns the namespace `tenant-x` (`api.attribution.tenant_namespace`), so its
name is a DNS label short enough for that namespace; an apply sets only the fields given; what
deleting a tenant does to its namespace follows `spec.deletionPolicy` (Retain keeps it and
removes the tenant labels, Delete removes it with everything in it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from gryvia_cli.core.cells import Marked
from gryvia_cli.core.manifests import new_object
from gryvia_operator.api import GryviaTenant
from gryvia_operator.api.attribution import tenant_namespace

MAX_NAME = 56
"""Longest tenant name: `tenant-` plus 56 characters is a 63-character namespace name."""
ROLES = ("admin", "member", "viewer")
DEFAULT_ROLE = "viewer"
DELETION_POLICIES = ("Retain", "Delete")
NAME_RULE = (
    f"lowercase letters, digits and '-', at most {MAX_NAME} characters, "
    "not starting or ending with '-'"
)
_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")

M = TypeVar("M", bound=BaseModel)


def name_problem(name: str) -> str | None:
    """Why `name` is not a valid tenant name (the message names the rule), or None."""
    if len(name) <= MAX_NAME and _NAME.match(name):
        return None
    return f'tenant name "{name}" is invalid: use {NAME_RULE}'


def parse_member(text: str) -> dict[str, str]:
    """Parse `USER[:ROLE]` (role admin, member or viewer; default viewer) into a members
    entry. User names with colons (`system:serviceaccount:ns:sa`) work when a role follows
    or the name starts with `system:`. Raises ValueError naming the form."""
    head, _, tail = text.rpartition(":")
    if head and tail.strip().lower() in ROLES:
        user, role = head.strip(), tail.strip().lower()
    elif ":" not in text or text.startswith("system:"):
        user, role = text.strip(), DEFAULT_ROLE
    else:
        user, role = "", ""
    if not user or role not in ROLES:
        raise ValueError(
            f'--member "{text}": use USER or USER:ROLE with ROLE one of {", ".join(ROLES)}'
        )
    return {"username": user, "role": role}


def build_tenant_apply(
    name: str,
    *,
    display_name: str | None = None,
    allowed_skus: Sequence[str] = (),
    max_gpus: int | None = None,
    isolated: bool | None = None,
    members: Sequence[Mapping[str, str]] = (),
    deletion_policy: str | None = None,
    current: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The GryviaTenant to server-side apply. An option not given keeps its value in
    `current` (the tenant's spec as stored, when it exists: the FAQ updates a tenant with
    `gryvia tenant create`), else is left out; the display name defaults to the tenant name."""
    spec: dict[str, Any] = {
        key: value
        for key, value in (current or {}).items()
        if key
        in ("displayName", "allowedSkus", "quotas", "networkPolicy", "members", "deletionPolicy")
    }
    spec["displayName"] = display_name or spec.get("displayName") or name
    if allowed_skus:
        spec["allowedSkus"] = list(dict.fromkeys(allowed_skus))
    if max_gpus is not None:
        spec["quotas"] = {"concurrentGPUs": max_gpus}
    if isolated is not None:
        spec["networkPolicy"] = {"isolated": isolated}
    if members:
        spec["members"] = [dict(m) for m in members]
    if deletion_policy is not None:
        spec["deletionPolicy"] = deletion_policy
    return new_object("GryviaTenant", name, spec)


TENANT_COLUMNS = ("name", "display name", "health", "max gpus", "skus", "namespace")

_HEALTH_MARKERS = {"healthy": "ok", "warning": "warn", "quota-exceeded": "error"}


def max_gpus_text(tenant: GryviaTenant) -> str:
    """`quotas.concurrentGPUs`, or `unlimited` when unset or 0."""
    quotas = tenant.spec.quotas
    return str(quotas.concurrent_gpus) if quotas and quotas.concurrent_gpus else "unlimited"


def skus_text(tenant: GryviaTenant) -> str:
    """The allowed SKUs, or `all` when the tenant may use every enabled SKU."""
    return ", ".join(tenant.spec.allowed_skus or []) or "all"


def namespaces_text(tenant: GryviaTenant) -> str:
    """The managed namespaces from the status, else the tenant's `tenant-<name>`."""
    managed = tenant.status.namespaces_managed if tenant.status else None
    return ", ".join(managed or [tenant_namespace(tenant.name)])


def tenant_row(tenant: GryviaTenant) -> list[Any]:
    """NAME, DISPLAY NAME, HEALTH (coloured), MAX GPUS, SKUS, NAMESPACE."""
    health = (tenant.status.health if tenant.status else None) or "-"
    return [
        tenant.name,
        tenant.spec.display_name or "-",
        Marked(health, _HEALTH_MARKERS.get(health, "unknown")),
        max_gpus_text(tenant),
        skus_text(tenant),
        namespaces_text(tenant),
    ]


def deletion_outcome(tenant: GryviaTenant) -> str:
    """What deleting the tenant does to its namespace, from `spec.deletionPolicy`."""
    ns = tenant_namespace(tenant.name)
    if tenant.spec.deletion_policy == "Delete":
        return f"namespace {ns} and everything in it will be deleted (deletionPolicy Delete)"
    return f"namespace {ns} is kept; its tenant labels are removed (deletionPolicy Retain)"


def tenant_details(tenant: GryviaTenant) -> list[tuple[str, str]]:
    """(label, value) lines of `gryvia tenant get` for people."""
    spec, status = tenant.spec, tenant.status
    policy = spec.network_policy
    isolated = (
        "default"
        if policy is None or policy.isolated is None
        else ("yes" if policy.isolated else "no")
    )
    members = ", ".join(f"{m.username} ({m.role})" for m in spec.members or []) or "-"
    group_role = spec.oidc_group_role or "viewer"
    groups = ", ".join(f"{g} ({group_role})" for g in spec.oidc_groups or []) or "-"
    lines = [
        ("Name", tenant.name),
        ("Display name", spec.display_name or "-"),
        ("Namespace", tenant_namespace(tenant.name)),
        ("Allowed SKUs", skus_text(tenant)),
        ("Max concurrent GPUs", max_gpus_text(tenant)),
        ("Network isolated", isolated),
        ("Members", members),
        ("OIDC groups", groups),
        ("Deletion policy", spec.deletion_policy),
    ]
    if status is not None:
        usage = status.current_usage
        lines.append(("Health", status.health or "-"))
        if usage is not None:
            lines.append(("GPUs in use", str(usage.used_gpus or 0)))
            lines.append(("Running jobs", str(usage.running_jobs or 0)))
            lines.append(("GPU hours (month)", f"{usage.gpu_hours or 0.0:.2f}"))
            lines.append(("Spend (month)", f"{usage.cost_usd or 0.0:.2f} USD"))
        lines.append(("Managed namespaces", namespaces_text(tenant)))
    return lines
