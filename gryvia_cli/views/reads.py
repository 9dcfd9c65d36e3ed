"""Reads several commands share: optional kinds, GPU supply, jobs across namespaces, usage
records.

Listing all namespaces falls back to one namespace when forbidden.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from gryvia_cli.errors import ApiError, ForbiddenError, NotFoundError, NotInstalledError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import warn

if TYPE_CHECKING:
    from datetime import datetime

    from gryvia_cli.core.spend import JobCost
    from gryvia_operator.api import GryviaGpuSku, GryviaQuota, GryviaTenant, GryviaUsageRecord

ACTIVE_PODS = "status.phase!=Succeeded,status.phase!=Failed"
"""Field selector of pods that may hold resources."""
T = TypeVar("T")


def read_optional(
    access: Any, res: r.Resource, namespace: str | None = None, **kw: Any
) -> list[dict[str, Any]]:
    """`access.items(...)`, or [] when the kind is not installed on this cluster."""
    try:
        return access.items(res, namespace, **kw)  # type: ignore[no-any-return]
    except NotInstalledError:
        return []


def try_read(read: Callable[[], T], what: str, warnings: list[str] | None = None) -> T | None:
    """Run `read`; on forbidden, not installed, not found or API errors record (or print) a
    warning `could not read <what>: ...` and return None."""
    try:
        return read()
    except (ForbiddenError, NotInstalledError, NotFoundError, ApiError) as exc:
        text = f"could not read {what}: {exc.message}"
        if warnings is None:
            warn(text)
        else:
            warnings.append(text)
        return None


@dataclass
class Supply:
    """GPU nodes, the unfinished pods (None if unreadable) and GPUs held per node."""

    nodes: list[Any]
    pods: list[dict[str, Any]] | None
    allocated: dict[str, int]


def get_namespaced(access: Any, res: r.Resource, name: str, namespace: str) -> dict[str, Any]:
    """`access.get` of a namespaced object; when it is not in `namespace`, the NotFoundError
    names the namespaces where an object of that name exists (one cluster-wide list by name;
    the plain hint stays when that list is not allowed)."""
    from gryvia_cli.errors import wrong_namespace_hint
    from gryvia_cli.kube.resources import noun

    try:
        return access.get(res, name, namespace)  # type: ignore[no-any-return]
    except NotFoundError as exc:
        try:
            found = access.items(res, None, field_selector=f"metadata.name={name}")
        except (ForbiddenError, ApiError, NotInstalledError):
            raise exc from None
        spaces = sorted(
            {str((o.get("metadata") or {}).get("namespace")) for o in found} - {namespace}
        )
        hint = wrong_namespace_hint(name, spaces, noun(res))
        if hint is None:
            raise
        raise NotFoundError(exc.message, hint=hint, details=exc.details) from None


def concurrently(*reads: Callable[[], Any]) -> list[Any]:
    """Run independent reads (API round trips) at once, one thread each; their results in
    order. The first exception raised by a read is raised here, after every read ended."""
    from concurrent.futures import ThreadPoolExecutor

    if len(reads) < 2:
        return [read() for read in reads]
    with ThreadPoolExecutor(max_workers=len(reads)) as pool:
        futures = [pool.submit(read) for read in reads]
    return [f.result() for f in futures]


def read_supply(
    access: Any, jobs: list[Any] | None = None, warnings: list[str] | None = None
) -> Supply:
    """Read GPU nodes (GryviaGpuNodes, Nodes) and unfinished pods of all namespaces.

    When pods are unreadable, GPUs held are estimated from placed jobs' `nodesAllocated`.
    """
    from gryvia_cli.core.nodes import allocated_by_node, gpu_nodes

    registrations, nodes, pods = concurrently(
        lambda: try_read(lambda: read_optional(access, r.GPUNODE), "GryviaGpuNodes", warnings),
        lambda: try_read(lambda: access.items(r.NODE), "Nodes", warnings),
        lambda: try_read(
            lambda: access.items(r.POD, None, field_selector=ACTIVE_PODS), "pods", warnings
        ),
    )
    allocated = allocated_by_node(pods) if pods is not None else {}
    return read_supply_from_jobs(
        Supply(gpu_nodes(registrations or [], nodes), pods, allocated), jobs or []
    )


def read_supply_from_jobs(supply: Supply, jobs: list[Any]) -> Supply:
    """`supply` with GPUs held taken from the jobs' `nodesAllocated` when its pods were
    unreadable (the one place that fallback is made: `read_supply` and `queue`, which reads
    the jobs beside the supply)."""
    from gryvia_cli.core.capacity import allocated_from_jobs

    if supply.pods is not None:
        return supply
    return Supply(supply.nodes, None, allocated_from_jobs(jobs))


def read_jobs(
    access: Any, namespace: str | None, fallback: str = "default"
) -> tuple[list[dict[str, Any]], str | None]:
    """GryviaAIJobs of `namespace` (None: all). When listing all namespaces is forbidden,
    reads the namespaces the user may (`readable.list_readable`: `fallback` and the tenants');
    returns (jobs, the namespace read, or None for all or several)."""
    from gryvia_cli.views.readable import list_readable

    if namespace is not None:
        return access.items(r.AIJOB, namespace), namespace
    data, read = list_readable(access, r.AIJOB, fallback)
    items: list[dict[str, Any]] = data.get("items") or []
    for item in items:
        item.setdefault("kind", r.AIJOB.kind)
        item.setdefault("apiVersion", r.AIJOB.api_version)
    return items, read[0] if read and len(read) == 1 else None


def read_usage_records(access: Any, tenant: str | None) -> list[GryviaUsageRecord]:
    """Every GryviaUsageRecord (all namespaces; only `tenant-<tenant>` when listing all is
    forbidden and a tenant is given); invalid records are skipped with a warning."""
    from gryvia_operator.api import GryviaUsageRecord
    from gryvia_operator.api.attribution import tenant_namespace
    from gryvia_operator.api.parse import parse_all

    try:
        items = access.items(r.USAGE_RECORD, None)
    except ForbiddenError:
        if tenant is None:
            raise
        warn(f"cannot list usage records in all namespaces; reading {tenant_namespace(tenant)}")
        items = access.items(r.USAGE_RECORD, tenant_namespace(tenant))
    records, problems = parse_all(GryviaUsageRecord, items)
    for problem in problems:
        warn(f"skipped an invalid usage record: {problem}")
    return records


def read_tenant_names(access: Any) -> set[str]:
    """Names of the GryviaTenants; an empty set when they are not installed or the user may
    not list them (tenant attribution then goes by labels and namespaces alone)."""
    try:
        items = read_optional(access, r.TENANT)
    except ForbiddenError:
        return set()
    return {str((i.get("metadata") or {}).get("name")) for i in items}


def read_billable_tenants(access: Any) -> set[str] | None:
    """Names of the existing GryviaTenants for billing ({} when none exist or the kind is not
    installed: no usage is then invoiced, `api.attribution.billable`); None, with a warning,
    when the user may not list them (usage then stays with the tenant its records name)."""
    try:
        items = read_optional(access, r.TENANT)
    except ForbiddenError:
        warn("cannot list tenants; usage is shown under the tenant each record names")
        return None
    return {str((i.get("metadata") or {}).get("name")) for i in items}


def read_namespace_labels(access: Any) -> dict[str, dict[str, str]]:
    """Labels of every namespace by name; {} when the user may not list namespaces."""
    try:
        items = access.items(r.NAMESPACE)
    except ForbiddenError:
        return {}
    return {
        str((i.get("metadata") or {}).get("name")): dict(
            (i.get("metadata") or {}).get("labels") or {}
        )
        for i in items
    }


@dataclass
class Pricing:
    """What pricing a job's cost needs: usage records, SKUs, tenants and quotas (each []
    when unreadable or not installed)."""

    records: list[GryviaUsageRecord]
    skus: list[GryviaGpuSku]
    tenants: list[GryviaTenant]
    quotas: list[GryviaQuota]

    def job_cost(self, obj: dict[str, Any], now: datetime) -> JobCost:
        """The cost so far of one GryviaAIJob object (`core.spend.job_cost`)."""
        from gryvia_cli.core.jobs import summarize_job
        from gryvia_cli.core.spend import job_cost

        uid = str((obj.get("metadata") or {}).get("uid") or "")
        return job_cost(
            summarize_job(obj), uid, self.records, self.skus, self.tenants, self.quotas, now
        )


def read_pricing(access: Any, warnings: list[str] | None = None) -> Pricing:
    """Read usage records, SKUs, tenants and quotas for job costs; an unreadable kind is a
    warning (recorded in `warnings`, else printed) and counts as empty; invalid objects are
    skipped."""
    from gryvia_operator.api import GryviaGpuSku, GryviaQuota, GryviaTenant, GryviaUsageRecord
    from gryvia_operator.api.parse import parse_all

    def read(res: r.Resource, model: Any, what: str) -> list[Any]:
        raw = try_read(lambda: read_optional(access, res), what, warnings) or []
        return parse_all(model, raw)[0]

    return Pricing(
        read(r.USAGE_RECORD, GryviaUsageRecord, "usage records"),
        read(r.GPUSKU, GryviaGpuSku, "the GPU catalog"),
        read(r.TENANT, GryviaTenant, "tenants"),
        read(r.QUOTA, GryviaQuota, "quotas"),
    )


def read_job_pods(
    access: Any, namespace: str | None, warnings: list[str] | None = None
) -> list[dict[str, Any]]:
    """The pods of `namespace` (None: all) for `core.jobs.bound_nodes`, which keeps those of
    Gryvia jobs; [] with a warning when unreadable."""
    return try_read(lambda: access.items(r.POD, namespace), "pods", warnings) or []
