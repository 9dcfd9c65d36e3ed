"""GryviaStorage: a named storage backend (cluster-scoped) that jobs name in `spec.storage`.

A backend points at a StorageClass. For the backends Gryvia knows how to describe
(`local-path`, `nfs`, `csi`) the operator creates that class, owned by the backend; with
`existing` the class is made elsewhere and only checked. The status says whether the class
exists and whether its provisioner answers: every `probeSeconds` the operator creates a small
probe claim of the class (pinned to a Ready node, as the scheduler pins a claim of a
WaitForFirstConsumer class), records how long it took to bind, and deletes it. Per-tenant
limits (`quotas`) become one ResourceQuota per tenant namespace, on the class's
`<class>.storageclass.storage.k8s.io/requests.storage` (Kubernetes' per-class storage quota).

Job PVCs (`<job>-data`) of a job that names a backend take the backend's class and first
access mode. A job that names a plain StorageClass still gets it (a warning names the
difference).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final, Literal

from pydantic import Field, StringConstraints, model_validator

from gryvia_operator.api import resources
from gryvia_operator.api.base import (
    AGE_COLUMN,
    Conditions,
    GryviaModel,
    GryviaResource,
    KindInfo,
    NonNegativeInt32,
    PrinterColumn,
    SchemaExtra,
    Str63,
    Str253,
    Str1024,
)
from gryvia_operator.api.quantity import Quantity

StorageBackend = Literal["local-path", "nfs", "csi", "existing"]
"""`local-path`: a class of the local-path provisioner (`rancher.io/local-path`); `nfs`: a
class of the NFS CSI driver (`nfs.csi.k8s.io`) on `endpoint`; `csi`: a class of
`provisioner` with `parameters`; `existing`: a class made elsewhere, only checked."""
AccessMode = Literal["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]
"""A PersistentVolume access mode (Kubernetes API)."""
StoragePhase = Literal["Ready", "NotReady", "Invalid"]
"""Ready: the class exists and the last probe bound; NotReady: either does not hold
(`message` says which and the fix); Invalid: the spec is wrong."""
ProbeResult = Literal["Bound", "Pending", "Failed"]
"""Bound: the probe claim bound; Pending: it did not bind within the probe timeout; Failed:
it could not be created."""

PROVISIONERS: Final[dict[str, str]] = {
    "local-path": "rancher.io/local-path",
    "nfs": "nfs.csi.k8s.io",
}
"""The provisioner of each backend Gryvia describes itself (`csi` names its own)."""
DEFAULT_PROBE_SECONDS: Final = 300
DEFAULT_PROBE_TIMEOUT_SECONDS: Final = 60
PROBE_SIZE: Final = "1Mi"
"""What a probe claim requests."""
LABEL_STORAGE: Final = "gryvia.io/storage"
"""On every object a backend owns (class, probe claim, quotas): the backend's name."""
ANNOTATION_PROBE: Final = "gryvia.io/probe"
"""On a GryviaStorage: any new value asks for a probe now (`gryvia health storage` sets it to
the time it asked, RFC 3339 UTC)."""

_Int32 = SchemaExtra({"format": "int32"})
_Name = Annotated[
    str,
    StringConstraints(min_length=1, max_length=253, pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"),
]


def _default_access_modes() -> list[AccessMode]:
    return ["ReadWriteMany"]


class StorageTenantQuota(GryviaModel):
    """One tenant's limit on this backend, in each namespace of the tenant."""

    tenant: Str63
    """GryviaTenant name."""
    requests: Quantity
    """Total storage the tenant's claims of this class may request, per namespace (e.g.
    `2Ti`): the ResourceQuota's `<class>.storageclass.storage.k8s.io/requests.storage`."""
    claims: NonNegativeInt32 | None = None
    """Most claims of this class per namespace (`.../persistentvolumeclaims`); unset: no
    limit."""


class StorageSpec(GryviaModel):
    """The backend: its StorageClass, how claims of it are made, and who may use how much."""

    backend: StorageBackend
    """What makes the class (see `StorageBackend`)."""
    storage_class: _Name | None = None
    """The StorageClass name; unset: the backend's own name."""
    provisioner: Str253 | None = None
    """`csi`: the CSI driver name (required); others: set by the backend."""
    endpoint: Str1024 | None = None
    """`nfs`: the export as `server:/path` (required); others: informative (e.g. a URL)."""
    parameters: Annotated[dict[str, Str1024], Field(max_length=64)] | None = None
    """The class's parameters (`csi`; merged over what `nfs` sets)."""
    capacity: Quantity | None = None
    """Declared capacity (e.g. `100Ti`); `status.free` is this less what claims request."""
    access_modes: Annotated[list[AccessMode], Field(min_length=1, max_length=4)] = Field(
        default_factory=_default_access_modes
    )
    """Access modes of the claims made for jobs on it; the first is used."""
    mount_options: Annotated[list[Str253], Field(max_length=32)] | None = None
    """The class's `mountOptions` (e.g. `nfsvers=4.1`)."""
    reclaim_policy: Literal["Delete", "Retain"] = "Delete"
    """What happens to a volume when its claim goes."""
    volume_binding_mode: Literal["Immediate", "WaitForFirstConsumer"] = "WaitForFirstConsumer"
    """When claims bind: at once, or when the first pod using them is scheduled."""
    protocol: Literal["nfs", "local", "block", "object", "lustre"] | None = None
    """How nodes reach the data (informative)."""
    rdma: bool = False
    """Whether the backend is reached over RDMA (informative)."""
    quotas: Annotated[list[StorageTenantQuota], Field(max_length=256)] | None = None
    """Per-tenant limits; a tenant not listed has none from this backend."""
    probe_seconds: Annotated[int, Field(ge=10, le=86400, strict=True), _Int32] = (
        DEFAULT_PROBE_SECONDS
    )
    """Seconds between two probes of the provisioner, 10..86400."""
    probe_timeout_seconds: Annotated[int, Field(ge=5, le=3600, strict=True), _Int32] = (
        DEFAULT_PROBE_TIMEOUT_SECONDS
    )
    """How long a probe claim may stay unbound before the provisioner counts as not
    answering, 5..3600 s."""

    @model_validator(mode="after")
    def _backend_fields(self) -> StorageSpec:
        if self.backend == "csi" and not self.provisioner:
            raise ValueError("spec.provisioner is required with backend csi (the CSI driver name)")
        if self.backend == "nfs" and (not self.endpoint or ":/" not in self.endpoint):
            raise ValueError('spec.endpoint is required with backend nfs, as "server:/export"')
        names = [q.tenant for q in self.quotas or []]
        if len(names) != len(set(names)):
            raise ValueError("spec.quotas lists a tenant twice; give each tenant one entry")
        return self

    def class_provisioner(self) -> str | None:
        """The provisioner of the class Gryvia makes (None for `existing`)."""
        if self.backend == "csi":
            return self.provisioner
        return PROVISIONERS.get(self.backend)


class StorageProbe(GryviaModel):
    """The last probe of the provisioner."""

    claim: Str253
    """The probe claim's name (in the operator's namespace)."""
    started_at: datetime
    """When the probe claim was created (UTC)."""
    finished_at: datetime | None = None
    """When it bound, or when it was given up (UTC); unset while it runs."""
    result: ProbeResult | None = None
    """How it ended; unset while it runs."""
    bind_seconds: float | None = None
    """Seconds from creation to Bound."""
    message: Str1024 | None = None
    """Why it did not bind (the claim's last event), for people."""


class StorageStatus(GryviaModel):
    """Whether the backend can be used now, and how much of it is used."""

    phase: StoragePhase | None = None
    message: Str1024 | None = None
    """What is wrong and the fix, or a summary."""
    storage_class: Str253 | None = None
    """The class jobs get."""
    class_exists: bool | None = None
    """Whether that StorageClass exists."""
    provisioner: Str253 | None = None
    """The class's provisioner."""
    provisioner_answering: bool | None = None
    """Whether the last finished probe bound."""
    probe: StorageProbe | None = None
    """The running probe, or the last one."""
    claims: NonNegativeInt32 | None = None
    """Claims of the class in all namespaces."""
    used: Str63 | None = None
    """What the claims of the class request together (a quantity, e.g. `1536Gi`)."""
    free: Str63 | None = None
    """`capacity` less `used` (unset without capacity)."""
    quota_namespaces: NonNegativeInt32 | None = None
    """Tenant namespaces that hold a ResourceQuota of this backend."""
    last_probe_request: Str63 | None = None
    """The `gryvia.io/probe` value last honoured."""
    conditions: Conditions | None = None
    """`ClassAvailable`, `ProvisionerAnswering`, `Ready`."""


class GryviaStorage(GryviaResource):
    """A storage backend: a StorageClass jobs name, its provisioner's health, and per-tenant
    limits."""

    kind: Literal["GryviaStorage"] = "GryviaStorage"
    spec: StorageSpec
    status: StorageStatus | None = None

    def class_name(self) -> str:
        """The StorageClass this backend gives jobs."""
        return self.spec.storage_class or self.name


STORAGE_KIND = KindInfo(
    resource=resources.STORAGE,
    model=GryviaStorage,
    description=GryviaStorage.__doc__ or "",
    printer_columns=(
        PrinterColumn("Backend", ".spec.backend"),
        PrinterColumn("Class", ".status.storageClass"),
        PrinterColumn("Capacity", ".spec.capacity"),
        PrinterColumn("Used", ".status.used"),
        PrinterColumn("Phase", ".status.phase"),
        AGE_COLUMN,
        PrinterColumn("Provisioner", ".status.provisioner", priority=1),
        PrinterColumn("Claims", ".status.claims", "integer", priority=1),
    ),
    omitted=(
        "credentials: a CSI driver's secrets go in `parameters` "
        "(`csi.storage.k8s.io/provisioner-secret-name`)",
        "iops, performance: nothing here measures or enforces them",
    ),
)
GryviaStorage.kind_info = STORAGE_KIND
