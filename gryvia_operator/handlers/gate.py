"""The opt-in admission gate (`--admission-gate`, chart value `aiOperator.admissionGate`).

Before anything of a Pending or Queued GPU job is created, the gate prices it and refuses it
(phase Rejected, reason BudgetExceeded, the budget, its spend and limit in the message) when
the estimate would take a hard budget over its limit. The rule is
`gryvia_operator.api.budgetgate.check_budgets`, the same function `gryvia submit` shows the
budget impact with; this module only reads its inputs from the watches:

- the catalog from the GryviaGpuSku index; a SKU object the operator cannot parse makes the
  catalog unreadable (it could be the one that prices the job);
- hard budgets: covering GryviaQuotas with `budget.hardLimit` (spend from the usage
  records, as quota status has it) and GryviaBudgets enforced with `block` (spend from their
  `status.usage`, written by the budget controller).

When it cannot check a job, `--admission-fail-open` (default) admits it with condition
AdmissionUnchecked and a Warning event AdmissionUnchecked; `--no-admission-fail-open` holds
it Queued (condition Admitted=False, reason AdmissionUnchecked) and checks it again when a
SKU or budget changes, and at least every `HOLD_RETRY_SECONDS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import kopf

from gryvia_operator.api import GROUP, VERSION, DurationError, GryviaAIJob, GryviaBudget
from gryvia_operator.api.attribution import namespace_tenant
from gryvia_operator.api.budgetgate import BudgetCheck, check_budgets, estimate_job, hard_budgets
from gryvia_operator.api.gpusku import GryviaGpuSku
from gryvia_operator.api.parse import parse_all, parse_valid
from gryvia_operator.api.pricing import select_rate
from gryvia_operator.controller import policies
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import GATE_BUDGETS, SKUS, USAGE
from gryvia_operator.reconcile.admission import AdmissionDecision
from gryvia_operator.reconcile.names import Cond
from gryvia_operator.reconcile.quotas import governing, job_view
from gryvia_operator.reconcile.status import JobEvent, get_condition

REJECT_REASON = "BudgetExceeded"
HOLD_REASON = "AdmissionUnchecked"
HOLD_RETRY_SECONDS = 30.0
"""A job held because the gate could not check it is checked again at least this often."""


def catalog_problem(rt: Runtime) -> str:
    """Why the catalog cannot be read ("" when it can): the SKUs that do not parse."""
    _, problems = parse_all(GryviaGpuSku, rt.indices.all_values(SKUS))
    if not problems:
        return ""
    return "the GPU catalog cannot be read (GryviaGpuSku " + "; ".join(problems) + ")"


def check_job(rt: Runtime, job: GryviaAIJob, body: Mapping[str, Any]) -> BudgetCheck | None:
    """The gate's finding for `job`, None when the gate does not apply (CPU-only, or a
    timeout that does not parse: the reconciler fails such a job itself)."""
    view = job_view(body)
    if view.gpus == 0:
        return None
    try:
        seconds = job.spec.timeout_seconds()
    except DurationError:
        return None
    namespace = job.namespace
    known = policies.tenants(rt)
    tenant_name = namespace_tenant(namespace, known)
    tenant = known.get(tenant_name) if tenant_name else None
    problem = catalog_problem(rt)
    skus = parse_valid(GryviaGpuSku, rt.indices.all_values(SKUS))
    allowed = tenant.spec.allowed_skus if tenant is not None else None
    rate = None if problem else select_rate(view.gpu_type, skus, allowed)
    estimate = estimate_job(
        view.gpus,
        seconds,
        rate,
        default_hours=Decimal(str(rt.config.admission_default_hours)),
        price_problem=problem,
    )
    now = rt.clock()
    records = rt.indices.all_values(USAGE)
    quotas = [
        (q, policies.spend(records, q.spec.namespaces, now)[1])
        for q in governing(namespace, policies.quotas(rt))
    ]
    budgets = parse_valid(GryviaBudget, rt.indices.all_values(GATE_BUDGETS))
    hard = hard_budgets(namespace, tenant_name, quotas, budgets, now, view.user, view.project)
    return check_budgets(estimate, hard)


def combine(
    rt: Runtime, job: GryviaAIJob, body: Mapping[str, Any], quota: AdmissionDecision
) -> AdmissionDecision:
    """The admission decision with the gate on top of the quota gate's `quota` decision:
    a gate refusal, then a quota refusal, then a gate hold (fail closed), then a quota hold;
    else the quota's admission, marked unchecked when the gate failed open."""
    if not rt.config.admission_gate:
        return quota
    check = check_job(rt, job, body)
    if check is None:
        return quota
    if check.refused:
        return AdmissionDecision("reject", REJECT_REASON, check.message())
    if quota.verdict == "reject":
        return quota
    if not check.checked and not rt.config.admission_fail_open:
        why = check.message() + "; the job waits until they can be read"
        return AdmissionDecision("queue", HOLD_REASON, why)
    if quota.verdict != "allow" or check.checked:
        return quota
    return AdmissionDecision("allow", quota.reason, quota.message, unchecked=check.message())


def is_hold(decision: AdmissionDecision) -> bool:
    """True for the gate's own hold (checked again every HOLD_RETRY_SECONDS)."""
    return decision.verdict == "queue" and decision.reason == HOLD_REASON


def unchecked_event(before: Mapping[str, Any], after: Mapping[str, Any]) -> JobEvent | None:
    """The Warning event AdmissionUnchecked when a status write adds that condition."""
    new = get_condition(after.get("conditions") or [], Cond.ADMISSION_UNCHECKED)
    if new is None or new.get("status") != "True":
        return None
    old = get_condition(before.get("conditions") or [], Cond.ADMISSION_UNCHECKED)
    if old is not None and old.get("status") == "True":
        return None
    return JobEvent("Warning", Cond.ADMISSION_UNCHECKED, str(new.get("message") or ""))


def requeue_all_held(rt: Runtime) -> None:
    """Queue every Pending or Queued job for another decision (a SKU or budget changed)."""
    namespaces = {(b.get("metadata") or {}).get("namespace") for b in policies.known_jobs(rt)}
    policies.requeue_held(rt, [ns for ns in namespaces if ns])


def register(registry: kopf.OperatorRegistry, rt: Runtime) -> None:
    """With the gate on: index GryviaBudgets and re-check held jobs when a SKU or budget
    changes. With it off nothing is registered (no budget watch)."""
    if not rt.config.admission_gate:
        return

    @kopf.index(GROUP, VERSION, "gryviabudgets", id=GATE_BUDGETS, registry=registry)
    async def budget_index(body: kopf.Body, name: str, **_: Any) -> Any:
        """Keep each budget's spec and status."""
        return {
            name: {
                "metadata": {"name": name},
                "spec": dict(body.get("spec") or {}),
                "status": dict(body.get("status") or {}),
            }
        }

    @kopf.on.event(GROUP, VERSION, "gryviabudgets", id="gryvia_gate_budgets", registry=registry)
    async def budget_event(**_: Any) -> None:
        """A budget's limits or spend changed: decide held jobs again."""
        requeue_all_held(rt)

    @kopf.on.event(GROUP, VERSION, "gryviagpuskus", id="gryvia_gate_skus", registry=registry)
    async def sku_event(**_: Any) -> None:
        """The catalog changed (maybe readable again): decide held jobs again."""
        requeue_all_held(rt)
