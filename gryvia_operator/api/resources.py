"""The one table of API resources Gryvia touches: every Gryvia kind and the built-in kinds the
operator writes or the client reads, with what it takes to build their REST paths.

Pydantic-free on purpose, so the CLI's fast paths (`gryvia list jobs -o json`) need not build
the models. The Gryvia kinds' `KindInfo` (`api/base.py`) takes its names and scope from here;
the operator's API writer and the client's access layer both build paths with `Resource.path`,
which URL-quotes names in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

from gryvia_operator.api.names import GROUP, VERSION

Scope = Literal["Namespaced", "Cluster"]


@dataclass(frozen=True)
class Resource:
    """One API resource: kind, group (empty for the core group), version, plural, scope."""

    kind: str
    group: str
    version: str
    plural: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        """`group/version`, or `version` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        """Lower-case kind, e.g. `gryviaaijob`."""
        return self.kind.lower()

    @property
    def qualified(self) -> str:
        """`singular.group` as `kubectl -o name` prints it (e.g. `gryviaaijob.gryvia.io`)."""
        return f"{self.singular}.{self.group}" if self.group else self.singular

    @property
    def scope(self) -> Scope:
        """`Namespaced` or `Cluster`, as a CRD spells it."""
        return "Namespaced" if self.namespaced else "Cluster"

    def path(self, namespace: str | None = None, name: str | None = None, sub: str = "") -> str:
        """REST path of the collection (namespace None or "": all namespaces), of one object,
        and of a subresource (`status`, `log`); namespace and name are URL-quoted."""
        out = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            out += f"/namespaces/{quote(namespace, safe='')}"
        out += f"/{self.plural}"
        if name:
            out += f"/{quote(name, safe='')}"
        if sub:
            out += f"/{sub}"
        return out


def _gryvia(kind: str, short: str, *, namespaced: bool) -> Resource:
    return Resource(kind, GROUP, VERSION, f"{kind.lower()}s", namespaced, (short,))


AIJOB = _gryvia("GryviaAIJob", "gaj", namespaced=True)
GPUNODE = _gryvia("GryviaGpuNode", "ggn", namespaced=False)
GPUSKU = _gryvia("GryviaGpuSku", "gsku", namespaced=False)
TENANT = _gryvia("GryviaTenant", "gtn", namespaced=False)
QUOTA = _gryvia("GryviaQuota", "gqt", namespaced=False)
USAGE_RECORD = _gryvia("GryviaUsageRecord", "gur", namespaced=True)
RESERVATION = _gryvia("GryviaReservation", "grsv", namespaced=False)
BUDGET = _gryvia("GryviaBudget", "gbud", namespaced=False)
JOBHOOK = _gryvia("GryviaJobHook", "gjh", namespaced=True)
LEDGER_ENTRY = Resource("GryviaLedgerEntry", GROUP, VERSION, "gryvialedgerentries", False, ("gle",))
INVOICE = _gryvia("GryviaInvoice", "ginv", namespaced=False)
PRIORITY = Resource("GryviaPriority", GROUP, VERSION, "gryviapriorities", False, ("gprio",))
CHECKPOINT_GUARD = _gryvia("GryviaCheckpointGuard", "gckg", namespaced=True)
GPU_SHARING_POLICY = Resource(
    "GryviaGPUSharingPolicy", GROUP, VERSION, "gryviagpusharingpolicies", False, ("ggsp",)
)
WORKSPACE = _gryvia("GryviaWorkspace", "gws", namespaced=True)

WORKFLOW = _gryvia("GryviaWorkflow", "gwf", namespaced=True)
AUTOTUNER = _gryvia("GryviaAutoTuner", "gat", namespaced=True)
INFERENCE_SERVICE = _gryvia("GryviaInferenceService", "gisvc", namespaced=True)
MODEL_REGISTRY = Resource(
    "GryviaModelRegistry", GROUP, VERSION, "gryviamodelregistries", True, ("gmr",)
)
IDLE_POLICY = Resource("GryviaIdlePolicy", GROUP, VERSION, "gryviaidlepolicies", True, ("gip",))
CHARGEBACK = _gryvia("GryviaChargeback", "gcb", namespaced=False)
JOB_RECORD = _gryvia("GryviaJobRecord", "gjr", namespaced=True)
STORAGE = _gryvia("GryviaStorage", "gst", namespaced=False)
DATASET = _gryvia("GryviaDataset", "gds", namespaced=False)

GRYVIA: tuple[Resource, ...] = (
    AIJOB,
    GPUNODE,
    GPUSKU,
    TENANT,
    QUOTA,
    USAGE_RECORD,
    RESERVATION,
    BUDGET,
    JOBHOOK,
    LEDGER_ENTRY,
    INVOICE,
    PRIORITY,
    CHECKPOINT_GUARD,
    GPU_SHARING_POLICY,
    WORKFLOW,
    AUTOTUNER,
    WORKSPACE,
    INFERENCE_SERVICE,
    MODEL_REGISTRY,
    IDLE_POLICY,
    CHARGEBACK,
    JOB_RECORD,
    STORAGE,
    DATASET,
)
"""Every Gryvia kind, in the order the CRD reference lists them."""

POD = Resource("Pod", "", "v1", "pods", short_names=("po",))
NODE = Resource("Node", "", "v1", "nodes", namespaced=False, short_names=("no",))
EVENT = Resource("Event", "", "v1", "events")
NAMESPACE = Resource("Namespace", "", "v1", "namespaces", namespaced=False)
SERVICE = Resource("Service", "", "v1", "services")
PVC = Resource("PersistentVolumeClaim", "", "v1", "persistentvolumeclaims")
PV = Resource("PersistentVolume", "", "v1", "persistentvolumes", namespaced=False)
RESOURCE_QUOTA = Resource("ResourceQuota", "", "v1", "resourcequotas")
STORAGE_CLASS = Resource(
    "StorageClass", "storage.k8s.io", "v1", "storageclasses", namespaced=False, short_names=("sc",)
)
LIMIT_RANGE = Resource("LimitRange", "", "v1", "limitranges")
CONFIG_MAP = Resource("ConfigMap", "", "v1", "configmaps")
SECRET = Resource("Secret", "", "v1", "secrets")
SERVICE_ACCOUNT = Resource("ServiceAccount", "", "v1", "serviceaccounts")
JOB = Resource("Job", "batch", "v1", "jobs")
STATEFULSET = Resource("StatefulSet", "apps", "v1", "statefulsets")
DEPLOYMENT = Resource("Deployment", "apps", "v1", "deployments")
HPA = Resource("HorizontalPodAutoscaler", "autoscaling", "v2", "horizontalpodautoscalers")
NETWORK_POLICY = Resource("NetworkPolicy", "networking.k8s.io", "v1", "networkpolicies")
ROLE_BINDING = Resource("RoleBinding", "rbac.authorization.k8s.io", "v1", "rolebindings")
LEASE = Resource("Lease", "coordination.k8s.io", "v1", "leases")
VALIDATING_WEBHOOKS = Resource(
    "ValidatingWebhookConfiguration",
    "admissionregistration.k8s.io",
    "v1",
    "validatingwebhookconfigurations",
    namespaced=False,
)
MUTATING_WEBHOOKS = Resource(
    "MutatingWebhookConfiguration",
    "admissionregistration.k8s.io",
    "v1",
    "mutatingwebhookconfigurations",
    namespaced=False,
)
PRIORITY_CLASS = Resource(
    "PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", namespaced=False
)
KOPF_PEERINGS = Resource("ClusterKopfPeering", "kopf.dev", "v1", "clusterkopfpeerings", False)

BUILTIN: tuple[Resource, ...] = (
    POD,
    NODE,
    EVENT,
    NAMESPACE,
    SERVICE,
    PVC,
    PV,
    RESOURCE_QUOTA,
    STORAGE_CLASS,
    LIMIT_RANGE,
    CONFIG_MAP,
    SECRET,
    SERVICE_ACCOUNT,
    JOB,
    STATEFULSET,
    DEPLOYMENT,
    HPA,
    NETWORK_POLICY,
    ROLE_BINDING,
    LEASE,
    VALIDATING_WEBHOOKS,
    MUTATING_WEBHOOKS,
    KOPF_PEERINGS,
    PRIORITY_CLASS,
)
"""The built-in (and kopf) kinds Gryvia reads or writes."""

_KUEUE_GROUP, _KUEUE_VERSION = "kueue.x-k8s.io", "v1beta2"
WORKLOAD = Resource("Workload", _KUEUE_GROUP, _KUEUE_VERSION, "workloads")
LOCAL_QUEUE = Resource("LocalQueue", _KUEUE_GROUP, _KUEUE_VERSION, "localqueues")
CLUSTER_QUEUE = Resource("ClusterQueue", _KUEUE_GROUP, _KUEUE_VERSION, "clusterqueues", False)
RESOURCE_FLAVOR = Resource("ResourceFlavor", _KUEUE_GROUP, _KUEUE_VERSION, "resourceflavors", False)
WORKLOAD_PRIORITY_CLASS = Resource(
    "WorkloadPriorityClass", _KUEUE_GROUP, _KUEUE_VERSION, "workloadpriorityclasses", False
)
KUEUE: tuple[Resource, ...] = (
    WORKLOAD,
    LOCAL_QUEUE,
    CLUSTER_QUEUE,
    RESOURCE_FLAVOR,
    WORKLOAD_PRIORITY_CLASS,
)
"""Kueue's kinds (v0.17, kueue.x-k8s.io/v1beta2) the optional Kueue integration writes or reads."""

_BY_KIND = {r.kind: r for r in (*GRYVIA, *BUILTIN, *KUEUE)}


def by_kind(kind: str) -> Resource:
    """The resource of a kind name (`Pod`, `GryviaAIJob`). Raises KeyError naming the kind."""
    try:
        return _BY_KIND[kind]
    except KeyError:
        raise KeyError(f"no resource for kind {kind!r} in gryvia_operator.api.resources") from None
