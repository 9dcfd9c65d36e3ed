"""The one rule for the tenant a job (and its usage) belongs to.

Used by the operator's metering and quota gate and by the client's cost, usage, invoice, queue
and console views alike, so a job is never billed to one tenant and shown under another.
Rule (the original's usage-metering attribution, with the namespace checked first): a job in the
namespace `tenant-<x>` of an existing GryviaTenant `x` belongs to `x`, whatever its labels say;
otherwise to its `gryvia.io/team` label; otherwise to its namespace's `gryvia.io/tenant` or
`gryvia.io/team` label; otherwise to the namespace's name.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from gryvia_operator.api.names import LABEL_TEAM, LABEL_TENANT, TENANT_NAMESPACE_PREFIX


def tenant_namespace(tenant: str) -> str:
    """The namespace a GryviaTenant owns: `tenant-<name>`."""
    return f"{TENANT_NAMESPACE_PREFIX}{tenant}"


def namespace_tenant(namespace: str, tenants: Collection[str]) -> str | None:
    """The tenant owning `namespace` (`tenant-<x>` with `x` in `tenants`), else None."""
    if namespace.startswith(TENANT_NAMESPACE_PREFIX):
        name = namespace[len(TENANT_NAMESPACE_PREFIX) :]
        if name in tenants:
            return name
    return None


def is_tenant_namespace(namespace: str) -> bool:
    """True for a name of the `tenant-<x>` form (whether or not tenant `x` exists)."""
    return namespace.startswith(TENANT_NAMESPACE_PREFIX) and len(namespace) > len(
        TENANT_NAMESPACE_PREFIX
    )


def tenant_of(
    namespace: str,
    job_labels: Mapping[str, str] | None,
    namespace_labels: Mapping[str, str] | None,
    tenants: Collection[str],
) -> str:
    """The tenant a job in `namespace` with `job_labels` belongs to (the module's rule).

    `namespace_labels` are the namespace's labels ({} or None when the caller cannot read
    namespaces); `tenants` the names of the existing GryviaTenants. Never empty for a
    non-empty namespace.
    """
    owner = namespace_tenant(namespace, tenants)
    if owner is not None:
        return owner
    labels = job_labels or {}
    ns_labels = namespace_labels or {}
    return str(
        labels.get(LABEL_TEAM)
        or ns_labels.get(LABEL_TENANT)
        or ns_labels.get(LABEL_TEAM)
        or namespace
    )


def tenant_of_object(
    obj: Mapping[str, Any],
    tenants: Collection[str],
    namespace_labels: Mapping[str, str] | None = None,
) -> str:
    """`tenant_of` for a raw API object (`metadata.namespace`, `metadata.labels`)."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels")
    return tenant_of(
        str(meta.get("namespace") or ""),
        labels if isinstance(labels, Mapping) else {},
        namespace_labels,
        tenants,
    )


def billable(tenant: str, tenants: Collection[str] | None) -> bool:
    """Whether usage attributed to `tenant` (`tenant_of`) is invoiced: only an existing
    GryviaTenant's is. `tenants` are the existing tenants' names; None (they could not be
    read) bills every name."""
    return tenants is None or tenant in tenants


def not_a_tenant(tenant: str) -> str:
    """Why usage attributed to `tenant` is not invoiced, and the fix."""
    return (
        f"{tenant} is not a GryviaTenant (its usage is attributed to it by the tenant rule: "
        f"namespace, then the gryvia.io/team label) and is not invoiced; create it to bill "
        f"it: gryvia tenant create {tenant}"
    )
