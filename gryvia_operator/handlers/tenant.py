"""GryviaTenant handlers: keep the tenant's namespace and policy objects as the spec says, and
on deletion keep (labels removed) or delete the namespace per `spec.deletionPolicy`.
"""

from __future__ import annotations

import logging
from typing import Any

import kopf

from gryvia_operator.api import GROUP, VERSION, GryviaTenant
from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.names import (
    LABEL_DATA_CLASSIFICATION,
    LABEL_DISPLAY_NAME,
    LABEL_TENANT,
    LABEL_TENANT_MANAGED_BY,
)
from gryvia_operator.api.parse import parse_all
from gryvia_operator.controller import kueuequeues
from gryvia_operator.controller.kubeapi import (
    Invalid,
    KubeApi,
    KubeError,
    NotFound,
    create_or_patch,
)
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.reconcile.tenancy import (
    MANAGED_BY,
    build_children,
    build_namespace,
    stale_children,
)

log = logging.getLogger("gryvia.operator.tenant")
PLURAL = "gryviatenants"
MANAGED_KINDS = ("ResourceQuota", "LimitRange", "NetworkPolicy", "RoleBinding")
KUEUE_REFRESH_SECONDS = 120.0
"""How often a tenant's Kueue queues are re-applied (the original's period)."""
RETRY_SECONDS = 60.0
"""Delay before kopf runs a tenant handler again after a failed API call (kopf's default
backoff, kept)."""


async def ensure_tenant(api: KubeApi, tenant: GryviaTenant) -> list[str]:
    """Make the tenant's namespace and children match its spec; return what was removed."""
    await create_or_patch(api, build_namespace(tenant))
    ns = tenant_namespace(tenant.name)
    for child in build_children(tenant):
        await create_or_patch(api, child)
    existing: list[tuple[str, str]] = []
    selector = f"{LABEL_TENANT}={tenant.name},{LABEL_TENANT_MANAGED_BY}={MANAGED_BY}"
    for kind in MANAGED_KINDS:
        for obj in await api.list(kind, ns, label_selector=selector):
            existing.append((kind, obj["metadata"]["name"]))
    removed = []
    for kind, name in stale_children(tenant, existing):
        await api.delete(kind, name, ns)
        removed.append(f"{kind}/{name}")
    return removed


async def release_namespace(api: KubeApi, tenant: GryviaTenant) -> str:
    """Apply the deletion policy to the tenant's namespace; return what happened."""
    ns = tenant_namespace(tenant.name)
    if tenant.spec.deletion_policy == "Delete":
        gone = await api.delete("Namespace", ns)
        return f"deleted namespace {ns}" if gone else f"namespace {ns} was already gone"
    labels = {
        key: None
        for key in (
            LABEL_TENANT,
            LABEL_TENANT_MANAGED_BY,
            LABEL_DISPLAY_NAME,
            LABEL_DATA_CLASSIFICATION,
        )
    }
    try:
        await api.patch("Namespace", ns, {"metadata": {"labels": labels}})
    except NotFound:
        return f"namespace {ns} was already gone"
    return f"kept namespace {ns} (deletionPolicy Retain); removed its tenant labels"


def _tenant(body: kopf.Body) -> GryviaTenant:
    """The tenant model of `body`; an invalid one is given up on (kopf.PermanentError) until
    its spec changes."""
    tenant, problems = parse_all(GryviaTenant, [body])
    if not tenant:
        raise kopf.PermanentError(f"invalid GryviaTenant: {'; '.join(problems)}")
    return tenant[0]


def _failed(what: str, exc: KubeError) -> kopf.PermanentError | kopf.TemporaryError:
    """The kopf outcome of a failed API call: the API server refusing an object (422) is given
    up on until the spec changes; anything else is retried after RETRY_SECONDS."""
    if isinstance(exc, Invalid):
        return kopf.PermanentError(f"{what}: {exc}")
    return kopf.TemporaryError(f"{what}: {exc}", delay=RETRY_SECONDS)


def register(registry: kopf.OperatorRegistry, rt: Runtime) -> None:
    """Register the tenant lifecycle handlers."""
    applied: dict[str, list[dict[str, Any]]] = {}
    """The Kueue objects applied last per tenant: the refresh sends only what changed."""

    @kopf.on.resume(GROUP, VERSION, PLURAL, id="gryvia_tenant_resume", registry=registry)
    @kopf.on.create(GROUP, VERSION, PLURAL, id="gryvia_tenant_create", registry=registry)
    @kopf.on.update(
        GROUP, VERSION, PLURAL, id="gryvia_tenant_update", registry=registry, field="spec"
    )
    async def tenant_changed(body: kopf.Body, **_: Any) -> None:
        """Create or update the namespace, quota, limits, isolation and role bindings."""
        tenant = _tenant(body)
        try:
            removed = await ensure_tenant(rt.api, tenant)
        except KubeError as exc:
            raise _failed(f"tenant {tenant.name}", exc) from exc
        if removed:
            log.info("tenant %s: removed %s", tenant.name, ", ".join(removed))
        if rt.config.kueue.enabled:
            try:
                await kueuequeues.ensure_tenant_queues(rt, tenant)
                applied[tenant.name] = kueuequeues.tenant_queue_objects(rt, tenant)
            except KubeError as exc:
                raise _failed(f"tenant {tenant.name}: Kueue queues", exc) from exc

    if rt.config.kueue.enabled:

        @kopf.timer(
            GROUP,
            VERSION,
            PLURAL,
            id="gryvia_tenant_kueue_refresh",
            registry=registry,
            interval=KUEUE_REFRESH_SECONDS,
            initial_delay=KUEUE_REFRESH_SECONDS,
        )
        async def tenant_kueue_refresh(body: kopf.Body, **_: Any) -> None:
            """Re-apply the tenant's Kueue queues when a quota or the nodes' GPU types changed
            them (those changes do not trigger the tenant handlers): planned from the indexes,
            sent only when different from what was applied last, so an idle cluster costs no
            request."""
            tenant = _tenant(body)
            try:
                await kueuequeues.ensure_tenant_queues(rt, tenant, applied)
            except KubeError as exc:
                log.warning("tenant %s: Kueue queues not applied: %s", tenant.name, exc)

    @kopf.on.delete(GROUP, VERSION, PLURAL, id="gryvia_tenant_delete", registry=registry)
    async def tenant_deleted(body: kopf.Body, **_: Any) -> None:
        """Keep or delete the namespace as the tenant's deletionPolicy says."""
        tenant = _tenant(body)
        try:
            if rt.config.kueue.enabled:
                await kueuequeues.remove_tenant_queues(rt.api, tenant.name)
            outcome = await release_namespace(rt.api, tenant)
        except KubeError as exc:
            raise _failed(f"tenant {tenant.name} deleted", exc) from exc
        log.info("tenant %s deleted: %s", tenant.name, outcome)
