"""GryviaTenant: a team with its own `tenant-<name>` namespace, quotas and allowed SKUs."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, StrictBool

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    Conditions,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeFloat,
    NonNegativeInt32,
    PrinterColumn,
    Str63,
    Str253,
    Str1024,
)

TenantRole = Literal["admin", "member", "viewer"]
TenantHealth = Literal["healthy", "warning", "quota-exceeded"]
DeletionPolicy = Literal["Retain", "Delete"]
TENANT_NAMESPACE_PREFIX = "tenant-"


class TenantMember(GryviaModel):
    """A user of the tenant, bound in its namespace to the ClusterRole gryvia-tenant-<role>."""

    username: Str253
    """User name as the API server authenticates it."""
    role: TenantRole = "viewer"
    """admin, member or viewer."""
    joined_at: datetime | None = None
    """When the member was added."""


class MonthlyLimit(GryviaModel):
    """A monthly allowance."""

    monthly: NonNegativeFloat | None = None
    """Allowance per calendar month (UTC)."""


class TenantQuotas(GryviaModel):
    """Limits of the tenant; concurrentGPUs becomes a ResourceQuota on nvidia.com/gpu."""

    gpu_hours: MonthlyLimit | None = None
    """GPU-hours per month (drives quotaUtilization and health)."""
    cost_usd: MonthlyLimit | None = Field(default=None, alias="costUSD")
    """Spend per month in USD (drives quotaUtilization and health)."""
    concurrent_jobs: NonNegativeInt32 | None = None
    """Jobs running at the same time."""
    concurrent_gpus: NonNegativeInt32 | None = Field(default=None, alias="concurrentGPUs")
    """GPUs in use at the same time (ResourceQuota and Kueue nominal quota); 0 = unlimited."""


class TenantNetworkPolicy(GryviaModel):
    """Network isolation of the tenant namespace."""

    isolated: StrictBool | None = None
    """Create NetworkPolicy `<name>-isolation`: ingress only from the namespace itself and
    from allowedTenants."""
    allowed_tenants: list[Str63] | None = None
    """Tenants whose namespaces may reach this one."""


class TenantGovernance(GryviaModel):
    """Data governance labels."""

    data_classification: Str63 | None = None
    """Copied to the namespace label gryvia.io/data-classification."""


class GryviaTenantSpec(GryviaModel):
    """Who the tenant is and what it may use."""

    display_name: Str253 | None = None
    """Human-friendly name (namespace label gryvia.io/display-name)."""
    description: Str1024 | None = None
    """Free text."""
    members: list[TenantMember] | None = None
    """Users of the tenant; each is a subject of the RoleBinding gryvia-tenant-<role> in
    tenant-<name> (removing one removes them from it)."""
    quotas: TenantQuotas | None = None
    """Limits; a ResourceQuota is created only when set."""
    network_policy: TenantNetworkPolicy | None = None
    """Namespace isolation."""
    governance: TenantGovernance | None = None
    """Data governance."""
    allowed_skus: list[Str253] | None = None
    """GryviaGpuSku names (or GPU types) the tenant may use; empty = every enabled SKU."""
    oidc_groups: list[Str253] | None = None
    """OIDC groups whose users belong to this tenant (Group subjects, with oidcGroupRole)."""
    oidc_group_role: TenantRole | None = None
    """Role granted to every group of oidcGroups (default viewer)."""
    deletion_policy: DeletionPolicy = "Retain"
    """What deleting the tenant does to its namespace: Retain keeps it (labels removed),
    Delete deletes it with everything in it."""


class TenantUsage(GryviaModel):
    """Month-to-date usage of the tenant namespace."""

    gpu_hours: float | None = None
    """GPU-hours this month."""
    cost_usd: float | None = Field(default=None, alias="costUSD")
    """Estimated spend this month in USD."""
    running_jobs: NonNegativeInt32 | None = None
    """Jobs currently running."""
    used_gpus: NonNegativeInt32 | None = Field(default=None, alias="usedGPUs")
    """GPUs currently held."""


class TenantQuotaUtilization(GryviaModel):
    """Usage as a percentage of each quota (0..100+)."""

    gpu_hours_percent: float | None = None
    """GPU-hours used, percent of quotas.gpuHours.monthly."""
    cost_percent: float | None = None
    """Spend, percent of quotas.costUSD.monthly."""
    jobs_percent: float | None = None
    """Running jobs, percent of quotas.concurrentJobs."""


class GryviaTenantStatus(GryviaModel):
    """Observed usage and health."""

    member_count: NonNegativeInt32 | None = None
    """Number of entries in spec.members."""
    current_usage: TenantUsage | None = None
    """Month-to-date usage."""
    quota_utilization: TenantQuotaUtilization | None = None
    """Usage against quotas."""
    health: TenantHealth | None = None
    """healthy, warning (>= 80 %) or quota-exceeded (>= 100 %)."""
    namespaces_managed: list[str] | None = None
    """Namespaces the controller manages (`tenant-<name>`)."""
    conditions: Conditions | None = None
    """Conditions of the tenant (none written yet)."""


class GryviaTenant(GryviaResource):
    """A tenant: its workloads run in the namespace `tenant-<name>`."""

    kind: Literal["GryviaTenant"] = "GryviaTenant"
    spec: GryviaTenantSpec = Field(default_factory=GryviaTenantSpec)
    status: GryviaTenantStatus | None = None

    @property
    def namespace_name(self) -> str:
        """The tenant's namespace, `tenant-<metadata.name>`."""
        return f"{TENANT_NAMESPACE_PREFIX}{self.name}"


TENANT_KIND = KindInfo(
    resource=resources.TENANT,
    model=GryviaTenant,
    description=GryviaTenant.__doc__ or "",
    printer_columns=(
        PrinterColumn("Display-Name", ".spec.displayName"),
        PrinterColumn("Health", ".status.health"),
        PrinterColumn("Max-GPUs", ".spec.quotas.concurrentGPUs", "integer"),
        AGE_COLUMN,
    ),
    omitted=(
        "spec.parentTenant, spec.priorities, spec.storageQuotas, spec.jobDefaults, spec.billing, "
        "spec.notifications: no controller acts on them",
        "spec.quotas.*.burst and spec.quotas.perGPUType: never enforced",
        "spec.governance.complianceRequirements and auditRetention: no audit trail exists",
    ),
)
GryviaTenant.kind_info = TENANT_KIND
