"""GryviaIdlePolicy on the kind controller (always on): a policy observes the running jobs of
its scope in the job index (with their `status.metrics` and `gryvia.io/idle` record) and
passes when a policy changes, when a warning or an action falls due, and at least every
PASS_SECONDS (the sampling interval); `reconcile.idlepolicy.reconcile_idle_policy` decides.
Jobs are not its children (it owns none): it patches them in their own namespaces, puts its
conditions (`IdleGPUs`, `IdleAction`) into their status and posts its Events on them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import ValidationError

from gryvia_operator.api.attribution import tenant_of
from gryvia_operator.api.helpers import JobPhase
from gryvia_operator.api.idlepolicy import (
    ANNOTATION_IDLE,
    ANNOTATION_IDLE_EXEMPT,
    IDLE_POLICY_KIND,
    GryviaIdlePolicy,
)
from gryvia_operator.api.jobmetrics import JobGpuMetrics
from gryvia_operator.controller import policies
from gryvia_operator.controller.kindcontroller import KindController, KindSpec, Outcome
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.controller.store import AIJOBS, IDLE_POLICIES
from gryvia_operator.reconcile.idlepolicy import CoveredJob, IdleRecord, reconcile_idle_policy

PASS_SECONDS = 15.0
"""Longest wait between two passes (half the operator's 30 s sampling interval)."""


def _metrics(status: dict[str, Any]) -> JobGpuMetrics | None:
    try:
        raw = status.get("metrics")
        return None if raw is None else JobGpuMetrics.model_validate(raw)
    except ValidationError:
        return None


def covered_jobs(rt: Runtime, policy: GryviaIdlePolicy) -> list[CoveredJob]:
    """The running jobs of `policy`'s scope the job index holds (and those no longer running
    that hold its record, for their conditions): its namespace's, or with
    scope Tenant those of every namespace of its namespace's tenant (the one attribution rule,
    `api.attribution.tenant_of`, by namespace: `tenant-<x>` of tenant x, else the namespace's
    `gryvia.io/tenant` label, else its name)."""
    names = list(policies.tenants(rt))

    def tenant_of_namespace(ns: str) -> str:
        return tenant_of(ns, None, policies.namespace_labels(rt, ns), names)

    tenant = tenant_of_namespace(policy.namespace) if policy.spec.scope == "Tenant" else None
    out = []
    for body in rt.indices.all_values(AIJOBS):
        meta = body.get("metadata") or {}
        ns = str(meta.get("namespace") or "")
        if ns != policy.namespace and (tenant is None or tenant_of_namespace(ns) != tenant):
            continue
        status = body.get("status") or {}
        notes = meta.get("annotations") or {}
        record = IdleRecord.parse(notes.get(ANNOTATION_IDLE))
        running = status.get("phase") == JobPhase.RUNNING
        if meta.get("deletionTimestamp") or not (
            running or (record is not None and record.policy == policy.name)
        ):
            continue
        out.append(
            CoveredJob(
                namespace=ns,
                name=str(meta.get("name")),
                job_type=str((body.get("spec") or {}).get("type") or ""),
                exempt=str(notes.get(ANNOTATION_IDLE_EXEMPT, "")).lower() == "true",
                metrics=_metrics(status),
                record=record,
                body=body,
                running=running,
            )
        )
    return out


class IdleSpec(KindSpec[GryviaIdlePolicy, list[CoveredJob]]):
    """An idle policy observes the running jobs of its scope."""

    info = IDLE_POLICY_KIND
    controller = "idlepolicy"
    index_id = IDLE_POLICIES
    children = ()
    idle_seconds = PASS_SECONDS

    async def observe(self, rt: Runtime, obj: GryviaIdlePolicy) -> list[CoveredJob]:
        """The running jobs it covers."""
        return covered_jobs(rt, obj)

    def reconcile(
        self, obj: GryviaIdlePolicy, observed: list[CoveredJob], now: datetime
    ) -> Outcome:
        """The plan as an outcome: job patches in their namespaces, then their conditions,
        Events on them."""
        plan = reconcile_idle_policy(obj, observed, now)
        wake = None if plan.wake_at is None else (plan.wake_at - now).total_seconds()
        return Outcome(
            status=plan.status,
            patch_in=[("GryviaAIJob", ns, name, patch) for ns, name, patch in plan.patches],
            conditions_in=[("GryviaAIJob", ns, name, c) for ns, name, c in plan.conditions],
            events_on=[(job.body, event) for job, event in plan.job_events],
            events=plan.events,
            requeue_after=None if wake is None else max(wake, 0.0) + 0.2,
        )


def controller(rt: Runtime) -> KindController[GryviaIdlePolicy, list[CoveredJob]]:
    """The idle policy controller over `rt`."""
    return KindController(rt, IdleSpec())
