"""Tenancy indexes (quotas, tenants, catalog, usage records, namespace labels) and the quota
gate's verdict for one job, read from them.

The verdict itself is pure (`gryvia_operator.reconcile.quotas.decide`); this module only
gathers its inputs from what the watches hold.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

import kopf
from pydantic import ValidationError

from gryvia_operator.api import GROUP, VERSION, GryviaGpuSku, GryviaQuota, GryviaTenant
from gryvia_operator.api.pricing import gpu_types_with_sku
from gryvia_operator.handlers.runtime import Runtime
from gryvia_operator.handlers.store import (
    AIJOBS,
    NAMESPACE_LABELS,
    QUOTAS,
    SKUS,
    TENANTS,
    USAGE,
)
from gryvia_operator.reconcile.admission import ALLOW, AdmissionDecision
from gryvia_operator.reconcile.quotas import (
    QuotaState,
    decide,
    governing,
    job_view,
    quota_state,
)


def _slim(body: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in body.items() if k != "metadata"}
    out["metadata"] = {k: v for k, v in body["metadata"].items() if k != "managedFields"}
    return out


def quotas(rt: Runtime) -> list[GryviaQuota]:
    """Every GryviaQuota the watch holds (invalid ones skipped)."""
    out = []
    for body in rt.indices.all_values(QUOTAS):
        try:
            out.append(GryviaQuota.model_validate(body))
        except ValidationError:
            continue
    return out


def tenants(rt: Runtime) -> dict[str, GryviaTenant]:
    """Every GryviaTenant by name."""
    out = {}
    for body in rt.indices.all_values(TENANTS):
        try:
            tenant = GryviaTenant.model_validate(body)
        except ValidationError:
            continue
        out[tenant.name] = tenant
    return out


def skus(rt: Runtime) -> list[GryviaGpuSku]:
    """The GPU price catalog."""
    out = []
    for body in rt.indices.all_values(SKUS):
        try:
            out.append(GryviaGpuSku.model_validate(body))
        except ValidationError:
            continue
    return out


def namespace_labels(rt: Runtime, namespace: str) -> Mapping[str, str]:
    """Labels of a namespace ({} when unknown)."""
    found = rt.indices.first(NAMESPACE_LABELS, namespace)
    return found if isinstance(found, Mapping) else {}


def tenant_for_namespace(namespace: str, known: Mapping[str, GryviaTenant]) -> str | None:
    """The tenant owning namespace `tenant-<x>` when GryviaTenant `x` exists, else None."""
    if namespace.startswith("tenant-") and namespace[len("tenant-") :] in known:
        return namespace[len("tenant-") :]
    return None


def month_start(now: dt.datetime) -> dt.datetime:
    """Midnight UTC of the first day of `now`'s month."""
    return now.astimezone(dt.UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def spend(
    records: Iterable[Mapping[str, Any]], namespaces: Iterable[str], since: dt.datetime
) -> tuple[float, float]:
    """Return (GPU-hours, cost) of usage records in `namespaces` that started since `since`."""
    wanted = set(namespaces)
    hours = cost = 0.0
    for rec in records:
        spec = rec.get("spec") or {}
        if (rec.get("metadata") or {}).get("namespace") not in wanted:
            continue
        start = str(spec.get("start") or "")
        if not start or dt.datetime.fromisoformat(start.replace("Z", "+00:00")) < since:
            continue
        hours += float(spec.get("gpuHours") or 0.0)
        cost += float(spec.get("cost") or 0.0)
    return hours, cost


def quota_states(rt: Runtime, only: Iterable[GryviaQuota] | None = None) -> list[QuotaState]:
    """The current state of each quota (all, or `only`) from the jobs and usage the watches
    hold."""
    selected = list(only) if only is not None else quotas(rt)
    if not selected:
        return []
    since = month_start(rt.clock())
    records = rt.indices.all_values(USAGE)
    wanted = {ns for q in selected for ns in q.spec.namespaces}
    views = [
        job_view(b)
        for b in rt.indices.all_values(AIJOBS)
        if (b.get("metadata") or {}).get("namespace") in wanted
    ]
    return [quota_state(q, views, spend(records, q.spec.namespaces, since)[1]) for q in selected]


def admission_for(rt: Runtime, body: Mapping[str, Any]) -> AdmissionDecision:
    """The quota gate's verdict for a Pending or Queued job body."""
    namespace = str((body.get("metadata") or {}).get("namespace", ""))
    known = tenants(rt)
    tenant_name = tenant_for_namespace(namespace, known)
    tenant = known.get(tenant_name) if tenant_name else None
    restricted = tenant is not None and bool(tenant.spec.allowed_skus)
    governed = governing(namespace, quotas(rt))
    if not governed and not restricted:
        return ALLOW
    enabled = (
        gpu_types_with_sku(skus(rt), tenant.spec.allowed_skus)
        if tenant is not None and restricted
        else None
    )
    return decide(
        job_view(body), quota_states(rt, governed), tenant=tenant_name, enabled_types=enabled
    )


def register(registry: kopf.OperatorRegistry, rt: Runtime) -> None:
    """Register the tenancy indexes and re-queue held jobs when a quota or tenant changes."""

    @kopf.index(GROUP, VERSION, "gryviaquotas", id=QUOTAS, registry=registry)
    async def quota_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each quota's body."""
        return {name: _slim(body)}

    @kopf.index(GROUP, VERSION, "gryviatenants", id=TENANTS, registry=registry)
    async def tenant_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each tenant's body."""
        return {name: _slim(body)}

    @kopf.index(GROUP, VERSION, "gryviagpuskus", id=SKUS, registry=registry)
    async def sku_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep the catalog."""
        return {name: _slim(body)}

    @kopf.index(GROUP, VERSION, "gryviausagerecords", id=USAGE, registry=registry)
    async def usage_index(body: kopf.Body, namespace: str | None, name: str, **_: Any) -> Any:
        """Keep each usage record's metadata and spec."""
        return {
            (namespace or "", name): {
                "metadata": {"name": name, "namespace": namespace},
                "spec": dict(body.get("spec") or {}),
            }
        }

    @kopf.index("", "v1", "namespaces", id=NAMESPACE_LABELS, registry=registry)
    async def namespace_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each namespace's labels (usage attribution)."""
        return {name: dict(body.get("metadata", {}).get("labels") or {})}

    @kopf.on.event(GROUP, VERSION, "gryviaquotas", id="gryvia_quota_events", registry=registry)
    async def quota_event(body: kopf.Body, **_: Any) -> None:
        """A quota changed: its held jobs may fit now (or no longer)."""
        requeue_held(rt, (body.get("spec") or {}).get("namespaces") or [])


def requeue_held(rt: Runtime, namespaces: Iterable[str]) -> None:
    """Queue every Pending or Queued job in `namespaces` for another gate decision."""
    wanted = set(namespaces)
    for body in rt.indices.all_values(AIJOBS):
        meta = body.get("metadata") or {}
        phase = (body.get("status") or {}).get("phase") or "Pending"
        if meta.get("namespace") in wanted and phase in ("Pending", "Queued"):
            rt.jobs.add((meta["namespace"], meta["name"]))
