"""Tenancy indexes: quotas, tenants, the GPU catalog, usage records, namespace labels and
StorageClasses (read through `gryvia_operator.controller.policies`); a changed quota re-queues
its held jobs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import kopf

from gryvia_operator.api import GROUP, VERSION
from gryvia_operator.api.resources import by_kind
from gryvia_operator.controller.policies import requeue_held
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import (
    NAMESPACE_LABELS,
    QUOTAS,
    SKUS,
    STORAGE_CLASSES,
    TENANTS,
    USAGE,
    slim_body,
)


def usage_index(body: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """A usage record under (namespace, name): its name, namespace and spec (the informer of
    usage records keeps them, not kopf: a cluster holds one per metered run, issue 42)."""
    meta = body.get("metadata") or {}
    namespace, name = meta.get("namespace"), str(meta.get("name") or "")
    return {
        (namespace or "", name): {
            "metadata": {"name": name, "namespace": namespace},
            "spec": dict(body.get("spec") or {}),
        }
    }


def register(registry: kopf.OperatorRegistry, rt: Runtime) -> None:
    """Register the tenancy indexes and re-queue held jobs when a quota or tenant changes."""

    @kopf.index(GROUP, VERSION, "gryviaquotas", id=QUOTAS, registry=registry)
    async def quota_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each quota's body."""
        return {name: slim_body(body)}

    @kopf.index(GROUP, VERSION, "gryviatenants", id=TENANTS, registry=registry)
    async def tenant_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each tenant's body."""
        return {name: slim_body(body)}

    @kopf.index(GROUP, VERSION, "gryviagpuskus", id=SKUS, registry=registry)
    async def sku_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep the catalog."""
        return {name: slim_body(body)}

    rt.informer(by_kind("GryviaUsageRecord").path()).add_index(USAGE, usage_index)

    @kopf.index("", "v1", "namespaces", id=NAMESPACE_LABELS, registry=registry)
    async def namespace_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each namespace's labels (usage attribution)."""
        return {name: dict(body.get("metadata", {}).get("labels") or {})}

    @kopf.index("storage.k8s.io", "v1", "storageclasses", id=STORAGE_CLASSES, registry=registry)
    async def storage_class_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each StorageClass's provisioner (the webhook checks a job's spec.storage)."""
        return {name: str(body.get("provisioner") or "")}

    @kopf.on.event(GROUP, VERSION, "gryviaquotas", id="gryvia_quota_events", registry=registry)
    async def quota_event(body: kopf.Body, **_: Any) -> None:
        """A quota changed: its held jobs may fit now (or no longer)."""
        requeue_held(rt, (body.get("spec") or {}).get("namespaces") or [])
