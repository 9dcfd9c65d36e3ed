"""`gryvia submit --explain` / `--dry-run=server`: read what the explanation needs, ask the API
server for a dry run of each create, explain each job (`core.explain`) and print it."""

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
