"""Reads of the tenancy indexes (quotas, tenants, catalog, usage records, namespace labels,
budgets) that several controllers share, the quota and budget gate's verdict for one job read
from them, and the re-queueing of the jobs whose verdict or estimate may move.

The verdicts themselves are pure (`gryvia_operator.reconcile.quotas.decide`,
`reconcile.budget_gate`); this module only gathers their inputs from what the watches hold.
The indexes are registered by `gryvia_operator.handlers.policy`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from gryvia_operator.api import (
    GryviaBudget,
    GryviaGpuSku,
    GryviaQuota,
    GryviaTenant,
)
from gryvia_operator.api.attribution import namespace_tenant
from gryvia_operator.api.budgetscope import resolve_scope
from gryvia_operator.api.jobfacts import JobFacts, job_facts
from gryvia_operator.api.parse import parse_valid
from gryvia_operator.api.periods import MeteredRun, period_window, spend_in_window
from gryvia_operator.api.pricing import gpu_types_with_sku
from gryvia_operator.api.storage import GryviaStorage
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import (
    AIJOBS,
    BUDGETS,
    JOB_FACTS,
    NAMESPACE_LABELS,
    QUOTAS,
    SKUS,
    STORAGE_CLASSES,
    STORAGES,
    TENANTS,
    USAGE,
)
from gryvia_operator.reconcile import budget_gate
from gryvia_operator.reconcile.admission import ALLOW, AdmissionDecision
from gryvia_operator.reconcile.quotas import (
    QuotaState,
    decide,
    governing,
    job_view,
    quota_state,
)
from gryvia_operator.reconcile.status import JobEvent
from gryvia_operator.webhook.review import PolicyContext

_BUDGET_WARNED: set[str] = set()
"""Jobs (uid) warned about a budget by this process: one Warning event each."""


def quotas(rt: Runtime) -> list[GryviaQuota]:
    """Every GryviaQuota the watch holds (invalid ones skipped)."""
    return parse_valid(GryviaQuota, rt.indices.all_values(QUOTAS))


def tenants(rt: Runtime) -> dict[str, GryviaTenant]:
    """Every GryviaTenant by name (invalid ones skipped)."""
    return {t.name: t for t in parse_valid(GryviaTenant, rt.indices.all_values(TENANTS))}


def skus(rt: Runtime) -> list[GryviaGpuSku]:
    """The GPU price catalog (invalid SKUs skipped)."""
    return parse_valid(GryviaGpuSku, rt.indices.all_values(SKUS))


def namespace_labels(rt: Runtime, namespace: str) -> Mapping[str, str]:
    """Labels of a namespace ({} when unknown)."""
    found = rt.indices.first(NAMESPACE_LABELS, namespace)
    return found if isinstance(found, Mapping) else {}


def spend(
    records: Iterable[Mapping[str, Any]], namespaces: Iterable[str], now: dt.datetime
) -> tuple[Decimal, Decimal]:
    """(GPU-hours, cost) of the usage records in `namespaces` inside the UTC month of `now`,
    runs crossing the 1st counted for their part, summed in Decimal
    (`api.periods.spend_in_window`): the quota gate and the admission gate compare the cost
    with hard limits, reaching one exactly being allowed. Malformed records are skipped."""
    wanted = set(namespaces)
    mine = [r for r in records if (r.get("metadata") or {}).get("namespace") in wanted]
    start, end = period_window("month", now)
    runs = [run for run in map(MeteredRun.of_raw, mine) if run is not None]
    return spend_in_window(runs, start, end)


def known_job_facts(rt: Runtime) -> list[JobFacts]:
    """`known_jobs` projected to `JobFacts`: the job informer's projection of the same
    resourceVersion (`store.JOB_FACTS`) where it has one, else projected here (a job this
    operator wrote later than the watch delivered). Costs a look-up per job, not a projection."""
    out = []
    for body in known_jobs(rt):
        meta = body.get("metadata") or {}
        key = (str(meta.get("namespace", "")), str(meta.get("name", "")))
        version = str(meta.get("resourceVersion") or "")
        held = rt.indices.first(JOB_FACTS, key)
        out.append(held[1] if version and held and held[0] == version else job_facts(body))
    return out


def known_jobs(rt: Runtime) -> list[Mapping[str, Any]]:
    """Every GryviaAIJob body the watch holds, each replaced by this operator's own later
    write while the watch has not delivered it yet (`rt.recent_jobs`).

    Quota status and admission both count from this view: a job the operator has just admitted
    counts as holding its GPUs at once, not as queued until its watch event arrives (a status of
    "1 queued, 0 GPUs allocated" while the job already held 8 was issue 13's wrong output).
    """
    bodies = []
    for body in rt.indices.all_values(AIJOBS):
        meta = body.get("metadata") or {}
        key = (str(meta.get("namespace", "")), str(meta.get("name", "")))
        bodies.append(rt.recent_jobs.get(key) or body)
    return bodies


def quota_states(rt: Runtime, only: Iterable[GryviaQuota] | None = None) -> list[QuotaState]:
    """The current state of each quota (all, or `only`) from the jobs and usage the watches
    hold."""
    selected = list(only) if only is not None else quotas(rt)
    if not selected:
        return []
    now = rt.clock()
    records = rt.indices.all_values(USAGE)
    wanted = {ns for q in selected for ns in q.spec.namespaces}
    views = [
        job_view(b) for b in known_jobs(rt) if (b.get("metadata") or {}).get("namespace") in wanted
    ]
    return [quota_state(q, views, spend(records, q.spec.namespaces, now)[1]) for q in selected]


def budget_views(rt: Runtime) -> list[budget_gate.BudgetView]:
    """Every valid GryviaBudget the watch holds, with its resolved scope."""
    teams: dict[str, list[str]] = {}
    for quota in quotas(rt):
        teams.setdefault(quota.spec.team, []).extend(quota.spec.namespaces)
    known = list(tenants(rt))
    found = parse_valid(GryviaBudget, rt.indices.all_values(BUDGETS))
    return [budget_gate.BudgetView(b, resolve_scope(b, teams, known)) for b in found]


def admission_for(rt: Runtime, body: Mapping[str, Any]) -> AdmissionDecision:
    """The gate's verdict for a Pending or Queued job body: the quotas' and the enforced
    budgets' (`reconcile.budget_gate`) combined; a budget warning posts one Warning event."""
    decision = quota_admission_for(rt, body)
    views = budget_views(rt)
    if not views or decision.verdict == "reject":
        return decision
    throttled = any(
        v.budget.spec.enforcement and v.budget.spec.enforcement.action == "throttle" for v in views
    )
    jobs = [job_view(b) for b in known_jobs(rt)] if throttled else []
    verdict = budget_gate.combine(decision, budget_gate.decide(job_view(body), views, jobs))
    uid = str((body.get("metadata") or {}).get("uid") or "")
    if verdict.reason == "BudgetWarning" and uid and uid not in _BUDGET_WARNED:
        _BUDGET_WARNED.add(uid)
        rt.post_event(body, JobEvent("Warning", "BudgetWarning", verdict.message))
    return verdict


def quota_admission_for(rt: Runtime, body: Mapping[str, Any]) -> AdmissionDecision:
    """The quota gate's verdict for a Pending or Queued job body."""
    namespace = str((body.get("metadata") or {}).get("namespace", ""))
    known = tenants(rt)
    tenant_name = namespace_tenant(namespace, known)
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


def policy_context(rt: Runtime, namespace: str) -> PolicyContext:
    """What the webhook's quota policy needs for a job in `namespace`: the quotas governing it,
    its tenant (from the namespace, `api.attribution`), the GPU price catalog, and the storage
    backends and StorageClasses a job's spec.storage may name."""
    known = tenants(rt)
    owner = namespace_tenant(namespace, known)
    index = STORAGE_CLASSES
    classes = {str(k): str(v) for k in rt.indices.keys(index) for v in rt.indices.values(index, k)}
    return PolicyContext(
        quotas=tuple(governing(namespace, quotas(rt))),
        tenant=known.get(owner) if owner else None,
        skus=tuple(skus(rt)),
        storages=tuple(parse_valid(GryviaStorage, rt.indices.all_values(STORAGES))),
        storage_classes=classes,
    )


def requeue_held(rt: Runtime, namespaces: Iterable[str]) -> None:
    """Queue every Pending or Queued job in `namespaces` for another gate decision."""
    wanted = set(namespaces)
    for body in rt.indices.all_values(AIJOBS):
        meta = body.get("metadata") or {}
        phase = (body.get("status") or {}).get("phase") or "Pending"
        if meta.get("namespace") in wanted and phase in ("Pending", "Queued"):
            rt.jobs.add((meta["namespace"], meta["name"]))


def requeue_waiting(rt: Runtime, body: Mapping[str, Any]) -> None:
    """A job started or ended: every job waiting for nodes, and the held jobs of the quotas
    governing its namespace, get their blocker and estimate recomputed."""
    spec = body.get("spec") or {}
    if not spec.get("gpus"):  # a CPU-only job frees no GPU: no estimate moves (and a
        return  # 500-element CPU array would re-queue every waiting job 500 times)
    rt.kick_waiting()
    namespace = str((body.get("metadata") or {}).get("namespace", ""))
    governed = governing(namespace, quotas(rt))
    spaces = {ns for q in governed for ns in q.spec.namespaces}
    if spaces:
        requeue_held(rt, spaces)
