"""The API permissions the operator needs, and the start-up check that it has them.

`required(settings)` is pure: the (API group, resource, verb, resource name) tuples the
operator's handlers call with the given settings, the same rules the chart's ClusterRole
`<release>-operator` grants (charts/gryvia/templates/rbac/operator-clusterrole.yaml;
tests/unit/test_chart_permissions.py checks the chart grants each of them). `missing(api, ...)`
asks the API server with one SelfSubjectAccessReview per permission (authorization.k8s.io/v1),
so an account without one is found at start, by name, instead of as a 403 in some handler
hours later on a real cluster.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from gryvia_operator.api.registry import ALL_KINDS
from gryvia_operator.settings import OperatorSettings

READ = ("get", "list", "watch")
CRUD = (*READ, "create", "update", "patch", "delete")
TENANT_ROLES = ("gryvia-tenant-viewer", "gryvia-tenant-member", "gryvia-tenant-admin")
"""The tenant ClusterRoles the operator binds in tenant namespaces (the chart's names)."""

ROLE_HINT = (
    "grant it in the operator's ClusterRole (chart: templates/rbac/operator-clusterrole.yaml, "
    "docs/chart.md)"
)


@dataclass(frozen=True, order=True)
class Permission:
    """One verb on one resource: `group` "" is the core API; `name` limits it to one object."""

    group: str
    resource: str
    verb: str
    name: str = ""

    def __str__(self) -> str:
        """kubectl's spelling, e.g. `delete pods`, `create jobs.batch`, `bind clusterroles...
        (gryvia-tenant-admin)`."""
        what = f"{self.resource}.{self.group}" if self.group else self.resource
        return f"{self.verb} {what}" + (f" ({self.name})" if self.name else "")


def _grant(group: str, resources: Iterable[str], verbs: Iterable[str]) -> set[Permission]:
    return {Permission(group, r, v) for r in resources for v in verbs}


def required(s: OperatorSettings) -> frozenset[Permission]:
    """Every permission the operator uses with settings `s` (features off need none of theirs).

    Cluster-wide permissions; a namespaced operator (`-n`) is checked in each served namespace
    for namespaced resources. Source: the handlers' calls, mirrored by the chart's ClusterRole.
    """
    gryvia = ALL_KINDS[0].group
    kinds = [k.plural for k in ALL_KINDS]
    with_status = [k.plural for k in ALL_KINDS if "status" in k.model.model_fields]
    p = _grant(gryvia, kinds, (*READ, "patch"))
    p |= _grant(gryvia, [f"{k}/status" for k in with_status], ("get", "update", "patch"))
    p |= _grant(
        gryvia, ("gryviausagerecords", "gryviagpunodes", "gryviaquotas"), ("create", "update")
    )
    p |= _grant(gryvia, ("gryviausagerecords", "gryviagpunodes", "gryviaquotas"), ("delete",))
    p |= _grant(gryvia, ("gryviagpuskus",), ("create",))  # the default price catalog
    p |= _grant("batch", ("jobs",), CRUD) | _grant("apps", ("statefulsets",), CRUD)
    p |= _grant("", ("services", "persistentvolumeclaims"), (*READ, "create", "patch", "delete"))
    p |= _grant("", ("pods",), (*READ, "create", "patch", "delete"))
    p |= _grant("", ("pods/log",), ("get",)) | _grant("", ("pods/eviction",), ("create",))
    p |= _grant("", ("configmaps",), ("get", "create", "patch"))
    p |= _grant("", ("nodes",), (*READ, "patch"))
    p |= _grant("", ("namespaces",), (*READ, "create", "patch", "delete"))
    p |= _grant("", ("resourcequotas", "limitranges"), CRUD)
    p |= _grant("storage.k8s.io", ("storageclasses",), READ)  # jobs' spec.storage, backends
    p |= _grant("networking.k8s.io", ("networkpolicies",), CRUD)
    p |= _grant("rbac.authorization.k8s.io", ("rolebindings",), CRUD)
    p |= {Permission("rbac.authorization.k8s.io", "clusterroles", "bind", n) for n in TENANT_ROLES}
    p |= _grant("", ("secrets",), ("get",))
    p |= _grant("", ("events",), ("create", "patch", "list"))
    p |= _grant("events.k8s.io", ("events",), ("create",))
    p |= _grant("apiextensions.k8s.io", ("customresourcedefinitions",), READ)
    p |= _grant("metrics.k8s.io", ("pods",), ("get", "list"))  # workspaces' CPU, when served
    if s.peering:
        p |= _grant("kopf.dev", ("clusterkopfpeerings", "kopfpeerings"), (*READ, "patch"))
    p |= _optional(s, gryvia)
    return frozenset(p)


def _optional(s: OperatorSettings, gryvia: str) -> set[Permission]:
    """The permissions of the opt-in features (operator flags)."""
    p: set[Permission] = set()
    if s.billing_ledger:
        p |= _grant(gryvia, ("gryvialedgerentries",), ("create",))
    if s.enable_workflows:
        p |= _grant(gryvia, ("gryviaaijobs",), ("create", "delete"))
    if s.enable_autotuners:
        p |= _grant(gryvia, ("gryviaaijobs",), ("create",))
    if s.enable_inference:
        p |= _grant("apps", ("deployments",), (*READ, "create", "patch", "delete"))
        p |= _grant("", ("services",), ("get", "create", "patch", "delete"))
        p |= _grant("autoscaling", ("horizontalpodautoscalers",), (*READ, "create", "patch"))
        p |= _grant("autoscaling", ("horizontalpodautoscalers",), ("delete",))
    if s.enable_model_registry:  # autoServe: the registry's own inference service
        p |= _grant(gryvia, ("gryviainferenceservices",), ("create",))
    if s.enable_priorities:
        p |= _grant(gryvia, ("gryviapriorities",), ("create",))
        p |= _grant("scheduling.k8s.io", ("priorityclasses",), (*READ, "create", "patch", "delete"))
    if s.enable_kueue:
        queues = ("clusterqueues", "localqueues", "resourceflavors", "workloadpriorityclasses")
        p |= _grant("kueue.x-k8s.io", queues, CRUD)
        p |= _grant("kueue.x-k8s.io", ("workloads",), READ)
    if s.simulate_device_plugin:  # sandbox only: what the device plugin's kubelet does
        p |= _grant("", ("nodes/status",), ("patch",))
    if s.leader_election:
        p |= _grant("coordination.k8s.io", ("leases",), ("get", "create", "update"))
    if s.webhook_port and s.webhook_self_register:
        configs = ("validatingwebhookconfigurations", "mutatingwebhookconfigurations")
        p |= _grant("admissionregistration.k8s.io", configs, (*READ, "create", "update", "patch"))
    return p


CLUSTER_SCOPED = frozenset(
    {
        "nodes",
        "namespaces",
        "clusterroles",
        "customresourcedefinitions",
        "clusterkopfpeerings",
        "priorityclasses",
        "clusterqueues",
        "resourceflavors",
        "workloadpriorityclasses",
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
        *(k.plural for k in ALL_KINDS if not k.resource.namespaced),
    }
)
"""Resources checked cluster-wide even for a namespaced operator."""


def review(p: Permission, namespace: str | None) -> dict[str, Any]:
    """The SelfSubjectAccessReview body asking whether the caller may do `p` (in `namespace`,
    or cluster-wide when None)."""
    resource, _, sub = p.resource.partition("/")
    attrs: dict[str, Any] = {"group": p.group, "resource": resource, "verb": p.verb}
    if sub:
        attrs["subresource"] = sub
    if p.name:
        attrs["name"] = p.name
    if namespace:
        attrs["namespace"] = namespace
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attrs},
    }


REVIEW_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


async def missing(
    api: Any, needed: Iterable[Permission], namespaces: Sequence[str] = ()
) -> list[tuple[Permission, str | None]]:
    """The permissions of `needed` the API server denies the operator's account, sorted, each
    with the namespace it was asked in (None: cluster-wide). `api` is a KubeApi (its `post`).

    Raises KubeError when the API server cannot be asked at all.
    """
    asks: list[tuple[Permission, str | None]] = []
    for p in sorted(needed):
        if namespaces and p.resource.split("/")[0] not in CLUSTER_SCOPED:
            asks += [(p, ns) for ns in namespaces]
        else:
            asks.append((p, None))
    answers = await asyncio.gather(*(api.post(REVIEW_PATH, review(p, ns)) for p, ns in asks))
    return [ask for ask, ans in zip(asks, answers, strict=True) if not _allowed(ans)]


def _allowed(answer: dict[str, Any]) -> bool:
    return bool(answer.get("status", {}).get("allowed"))


def describe(denied: Sequence[tuple[Permission, str | None]]) -> list[str]:
    """One line per denied permission, naming it and the fix."""
    return [
        f"missing permission: the operator's account may not {p}"
        f"{f' in namespace {ns}' if ns else ' (cluster-wide)'}; {ROLE_HINT}"
        for p, ns in denied
    ]
