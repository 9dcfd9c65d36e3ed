"""Where each kind the CLI reads lives in the API: group, version, plural, scope, CLI nouns.

The Gryvia rows repeat what `gryvia_operator.api` declares so that fast paths (`list jobs -o
json`) need not build every pydantic model; `tests/unit/cli/test_resources.py` fails when they
drift from `kind_info()`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gryvia_cli.errors import UsageError


@dataclass(frozen=True)
class Resource:
    """One API resource: enough to build its REST paths and print its names."""

    kind: str
    group: str
    version: str
    plural: str
    namespaced: bool
    nouns: tuple[str, ...] = field(default=())
    short_names: tuple[str, ...] = field(default=())

    @property
    def api_version(self) -> str:
        """`group/version`, or `version` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """`singular.group` as `kubectl -o name` prints it (e.g. `gryviaaijob.gryvia.io`)."""
        singular = self.kind.lower()
        return f"{singular}.{self.group}" if self.group else singular

    @property
    def noun(self) -> str:
        """The short CLI noun (`job`, `node`), else the lower-case kind."""
        return self.nouns[0] if self.nouns else self.kind.lower()

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """REST path of the collection (namespace None: all namespaces) or of one object."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        return f"{base}/{name}" if name else base


AIJOB = Resource(
    "GryviaAIJob", "gryvia.io", "v1alpha1", "gryviaaijobs", True, ("job", "jobs"), ("gaj",)
)
GPUNODE = Resource(
    "GryviaGpuNode", "gryvia.io", "v1alpha1", "gryviagpunodes", False, ("node", "nodes"), ("ggn",)
)
GPUSKU = Resource(
    "GryviaGpuSku", "gryvia.io", "v1alpha1", "gryviagpuskus", False, ("sku", "skus"), ("gsku",)
)
TENANT = Resource(
    "GryviaTenant", "gryvia.io", "v1alpha1", "gryviatenants", False, ("tenant", "tenants"), ("gtn",)
)
QUOTA = Resource(
    "GryviaQuota", "gryvia.io", "v1alpha1", "gryviaquotas", False, ("quota", "quotas"), ("gqt",)
)
USAGE_RECORD = Resource(
    "GryviaUsageRecord",
    "gryvia.io",
    "v1alpha1",
    "gryviausagerecords",
    True,
    ("usagerecord", "usagerecords", "usage"),
    ("gur",),
)
RESERVATION = Resource(
    "GryviaReservation",
    "gryvia.io",
    "v1alpha1",
    "gryviareservations",
    False,
    ("reservation", "reservations"),
    ("grsv",),
)
BUDGET = Resource(
    "GryviaBudget",
    "gryvia.io",
    "v1alpha1",
    "gryviabudgets",
    False,
    ("budget", "budgets"),
    ("gbud",),
)
JOBHOOK = Resource(
    "GryviaJobHook",
    "gryvia.io",
    "v1alpha1",
    "gryviajobhooks",
    True,
    ("jobhook", "jobhooks", "job-hook", "job-hooks"),
    ("gjh",),
)

GRYVIA_RESOURCES: tuple[Resource, ...] = (
    AIJOB,
    GPUNODE,
    GPUSKU,
    TENANT,
    QUOTA,
    USAGE_RECORD,
    RESERVATION,
    BUDGET,
    JOBHOOK,
)
"""Every Gryvia kind, in `gryvia_operator.api.ALL_KINDS` order."""

POD = Resource("Pod", "", "v1", "pods", True, ("pod", "pods"))
NODE = Resource("Node", "", "v1", "nodes", False)
EVENT = Resource("Event", "", "v1", "events", True)
NAMESPACE = Resource("Namespace", "", "v1", "namespaces", False)
DEPLOYMENT = Resource("Deployment", "apps", "v1", "deployments", True)
JOB = Resource("Job", "batch", "v1", "jobs", True)
LEASE = Resource("Lease", "coordination.k8s.io", "v1", "leases", True)
VALIDATING_WEBHOOKS = Resource(
    "ValidatingWebhookConfiguration",
    "admissionregistration.k8s.io",
    "v1",
    "validatingwebhookconfigurations",
    False,
)
KOPF_PEERINGS = Resource("ClusterKopfPeering", "kopf.dev", "v1", "clusterkopfpeerings", False)


def lookup(noun: str) -> Resource:
    """Find a Gryvia kind by CLI noun, kind, plural, singular or short name (any case).

    Raises UsageError listing the accepted nouns when nothing matches.
    """
    wanted = noun.strip().lower()
    for res in GRYVIA_RESOURCES:
        names = {*res.nouns, *res.short_names, res.kind.lower(), res.plural, res.qualified}
        if wanted in names or wanted == f"{res.plural}.{res.group}":
            return res
    valid = ", ".join(res.noun for res in GRYVIA_RESOURCES)
    raise UsageError(f'unknown resource type "{noun}"', hint=f"use one of: {valid}")
