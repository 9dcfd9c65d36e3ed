"""`gryvia submit --explain` / `--dry-run=server`: read what the explanation needs, ask the API
server for a dry run of each create, explain each job (`core.explain`) and print it; also the
placement plan `gryvia submit` prints before creating, and the pricing inputs both read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gryvia_cli.errors import ConflictError, RejectedError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import MACHINE_FORMATS, OutputFormat, emit, render_data, warn
from gryvia_cli.views.reads import read_jobs, read_supply

if TYPE_CHECKING:
    from gryvia_cli.connection import Connection
    from gryvia_cli.core.explain import Explanation, ServerCheck
    from gryvia_operator.api import GryviaBudget, GryviaGpuSku, GryviaQuota, GryviaTenant


def server_check(access: Any, obj: dict[str, Any], namespace: str) -> ServerCheck:
    """The API server's verdict on creating `obj` (dryRun=All: nothing is stored)."""
    from gryvia_cli.core.explain import ServerCheck

    try:
        _, warnings = access.dry_run_create(r.AIJOB, obj, namespace)
    except (RejectedError, ConflictError) as exc:
        return ServerCheck(False, exc.message)
    return ServerCheck(True, "", tuple(warnings))


def explain_jobs(
    state: Connection,
    jobs: Sequence[dict[str, Any]],
    namespace: str,
    pricing: tuple[list[GryviaGpuSku], list[GryviaTenant], list[GryviaQuota], list[GryviaBudget]],
) -> list[Explanation]:
    """Explain every job (`namespace` for those without one); read failures become warnings."""
    from gryvia_cli.core.estimate import estimate_cost
    from gryvia_cli.core.explain import explain_job
    from gryvia_cli.core.jobs import summarize_job

    access = state.access()
    notes: list[str] = []
    supply = read_supply(access, warnings=notes)
    existing, _ = read_jobs(access, None, namespace)
    for text in notes:
        warn(f"explanation may be incomplete: {text}")
    skus, tenants, quotas, budgets = pricing
    out = []
    for obj in jobs:
        target = (obj.get("metadata") or {}).get("namespace") or namespace
        cost = estimate_cost(
            summarize_job(obj), target, skus, tenants, quotas, budgets, now=state.now()
        )
        out.append(
            explain_job(
                obj,
                target,
                nodes=supply.nodes,
                allocated=supply.allocated,
                pods=supply.pods or [],
                jobs=existing,
                quotas=quotas,
                skus=skus,
                cost=cost,
                server=server_check(access, obj, target),
                now=state.now(),
            )
        )
    return out


def read_pricing(
    state: Connection, namespaces: list[str], notes: list[str]
) -> tuple[list[GryviaGpuSku], list[GryviaTenant], list[GryviaQuota], list[GryviaBudget]]:
    """The catalog, the tenants (read only when a job goes to a `tenant-` namespace), the
    quotas and the budgets (the admission gate's inputs): one list call per kind; unreadable
    kinds become notes and empty lists."""
    from gryvia_cli.views.reads import read_optional, try_read
    from gryvia_operator.api import GryviaBudget, GryviaGpuSku, GryviaQuota, GryviaTenant
    from gryvia_operator.api.attribution import is_tenant_namespace
    from gryvia_operator.api.parse import parse_all

    access = state.access()

    def read(res: r.Resource, what: str) -> list[dict[str, Any]]:
        return try_read(lambda: read_optional(access, res), what, notes) or []

    skus, _ = parse_all(GryviaGpuSku, read(r.GPUSKU, "the GPU catalog"))
    tenants: list[GryviaTenant] = []
    if any(is_tenant_namespace(ns) for ns in namespaces):
        tenants, _ = parse_all(GryviaTenant, read(r.TENANT, "tenants"))
    quotas, _ = parse_all(GryviaQuota, read(r.QUOTA, "quotas"))
    budgets, _ = parse_all(GryviaBudget, read(r.BUDGET, "budgets"))
    return skus, tenants, quotas, budgets


def explain_manifests(
    state: Connection, jobs: Sequence[dict[str, Any]], namespace: str
) -> list[Explanation]:
    """`gryvia submit --explain`: the pricing inputs read for the jobs' namespaces (their own,
    else `namespace`), then every job explained (`explain_jobs`); creates nothing."""
    targets = [(obj.get("metadata") or {}).get("namespace") or namespace for obj in jobs]
    pricing = read_pricing(state, targets, [])
    return explain_jobs(state, jobs, namespace, pricing)


def render_explanations(items: Sequence[Explanation], fmt: OutputFormat) -> int:
    """Print the explanations (JSON/YAML: the documented document); return the exit code."""
    from gryvia_cli.core.explain import explain_document, overall_exit

    if fmt in MACHINE_FORMATS:
        render_data(explain_document(items), fmt)
    else:
        for item in items:
            for line in item.lines():
                emit(line)
    return overall_exit(items)
