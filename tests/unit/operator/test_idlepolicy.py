"""GryviaIdlePolicy: the model's checks and the pure reconcile (warn after the window, act
after the grace, fresh samples only, exempt jobs, job types, other policies' jobs, restarts)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from gryvia_operator.api.dcgm import FIELD_ENGINE_ACTIVE
from gryvia_operator.api.idlepolicy import ANNOTATION_IDLE, GryviaIdlePolicy
from gryvia_operator.api.jobmetrics import JobGpuMetrics
from gryvia_operator.reconcile.idlepolicy import (
    CoveredJob,
    IdlePlan,
    IdleRecord,
    reconcile_idle_policy,
)
from gryvia_operator.reconcile.status import put_conditions

T0 = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)


def policy(status: dict[str, Any] | None = None, **spec: Any) -> GryviaIdlePolicy:
    body: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaIdlePolicy",
        "metadata": {"name": "idle", "namespace": "ml"},
        "spec": {"windowSeconds": 60, "graceSeconds": 30, **spec},
    }
    if status is not None:
        body["status"] = status
    return GryviaIdlePolicy.model_validate(body)


def job(
    activity: float | None,
    at: datetime,
    name: str = "j1",
    record: IdleRecord | None = None,
    **kw: Any,
) -> CoveredJob:
    metrics = None
    if activity is not None:
        metrics = JobGpuMetrics(
            field=FIELD_ENGINE_ACTIVE,
            samples=10,
            last_sample_time=at,
            last_activity_percent=activity,
            mean_activity_percent=activity,
        )
    fields: dict[str, Any] = {"job_type": "training", "exempt": False} | kw
    return CoveredJob("ml", name, metrics=metrics, record=record, **fields)


class Cluster:
    """A policy's passes over one job: job patches land on the job's record, the status on the
    policy, as the API server would keep them."""

    def __init__(self, **spec: Any) -> None:
        self.spec = spec
        self.status: dict[str, Any] | None = None
        self.record: IdleRecord | None = None
        self.writes: list[dict[str, Any]] = []
        self.reasons: list[str] = []
        self.conditions: list[dict[str, Any]] = []
        self.condition_writes = 0

    def tick(self, activity: float | None, at: datetime, **kw: Any) -> IdlePlan:
        body = {"status": {"conditions": self.conditions}}
        one = job(activity, at, record=self.record, body=body, **kw)
        plan = reconcile_idle_policy(policy(self.status, **self.spec), [one], at)
        self.status = plan.status
        for _, _, patch in plan.patches:
            self.writes.append(patch)
            self.record = IdleRecord.parse(patch["metadata"]["annotations"][ANNOTATION_IDLE])
        for _, _, wanted in plan.conditions:
            self.conditions = put_conditions(wanted, self.conditions)
            self.condition_writes += 1
        self.reasons += [event.reason for _, event in plan.job_events]
        return plan

    def condition(self, kind: str) -> dict[str, Any]:
        return next(c for c in self.conditions if c["type"] == kind)


def test_spec_defaults_and_bounds() -> None:
    spec = GryviaIdlePolicy.model_validate(
        {"metadata": {"name": "p", "namespace": "ml"}, "spec": {}}
    ).spec
    assert (spec.threshold_percent, spec.window_seconds, spec.grace_seconds) == (5.0, 1800, 600)
    assert (spec.action, spec.scope, spec.job_types) == ("warn", "Namespace", None)
    for bad in ({"windowSeconds": 59}, {"thresholdPercent": 101}, {"action": "kill"}):
        with pytest.raises(ValidationError):
            policy(**bad)


def test_warned_once_after_the_window_then_suspended_after_the_grace() -> None:
    c = Cluster(action="suspend")
    for s in range(0, 60, 15):
        c.tick(1.0, T0 + timedelta(seconds=s))
    assert c.writes == [] and c.status is not None
    assert c.status["jobs"][0]["idleSince"] == "2026-12-01T10:00:00Z"
    plan = c.tick(2.0, T0 + timedelta(seconds=60))
    assert c.reasons == ["IdleGPUs"]
    assert c.record is not None and c.record.warned_at == T0 + timedelta(seconds=60)
    assert c.record.activity_percent == 2.0 and c.record.action is None
    assert plan.wake_at == T0 + timedelta(seconds=90)
    text = plan.job_events[0][1].message
    assert "at most 2.0%" in text and FIELD_ENGINE_ACTIVE in text and "suspended" in text
    c.tick(1.0, T0 + timedelta(seconds=75))
    assert len(c.writes) == 1, "the warning is not repeated"
    c.tick(1.0, T0 + timedelta(seconds=90))
    assert c.reasons == ["IdleGPUs", "IdleJobSuspended"]
    assert c.writes[-1]["spec"] == {"suspend": True}
    assert c.record is not None and c.record.action == "suspend"
    c.tick(1.0, T0 + timedelta(seconds=120))
    assert len(c.writes) == 2, "the action is not repeated"
    assert c.status["jobs"][0]["action"] == "suspend"


def test_cancel_writes_the_cancel_annotation_with_the_record() -> None:
    c = Cluster(action="cancel", graceSeconds=0)
    c.tick(0.0, T0)
    c.tick(0.0, T0 + timedelta(seconds=60))
    assert c.reasons == ["IdleGPUs", "IdleJobCancelled"]
    notes = c.writes[-1]["metadata"]["annotations"]
    assert notes["gryvia.io/cancel"] == "true" and ANNOTATION_IDLE in notes


def test_warn_only_never_acts() -> None:
    c = Cluster(action="warn")
    for s in range(0, 600, 30):
        c.tick(0.0, T0 + timedelta(seconds=s))
    assert c.reasons == ["IdleGPUs"] and "spec" not in c.writes[-1]


def test_one_active_sample_restarts_the_period_and_clears_the_warning() -> None:
    c = Cluster(action="suspend", graceSeconds=600)
    c.tick(0.0, T0)
    c.tick(0.0, T0 + timedelta(seconds=60))
    assert c.record is not None
    c.tick(50.0, T0 + timedelta(seconds=70))
    assert c.record is None and c.status is not None and c.status["jobs"] == []
    c.tick(0.0, T0 + timedelta(seconds=80))
    c.tick(0.0, T0 + timedelta(seconds=130))
    assert c.reasons == ["IdleGPUs"], "idle again for 50 s only: no second warning yet"
    c.tick(0.0, T0 + timedelta(seconds=140))
    assert c.reasons == ["IdleGPUs", "IdleGPUs"]


def test_no_sample_or_an_old_one_proves_nothing() -> None:
    p = policy()
    assert reconcile_idle_policy(p, [job(None, T0)], T0 + timedelta(hours=5)).patches == []
    stale = job(0.0, T0)
    plan = reconcile_idle_policy(p, [stale], T0 + timedelta(seconds=301))
    assert plan.patches == [] and plan.status["jobs"] == [] and plan.status["coveredJobs"] == 1


def test_exempt_jobs_other_types_and_other_policies_jobs_are_left_alone() -> None:
    old = T0 - timedelta(hours=1)
    status = {
        "jobs": [
            {"job": n, "namespace": "ml", "idleSince": old, "activityPercent": 0.0, "message": ""}
            for n in ("exempt", "eval", "theirs", "mine")
        ]
    }
    theirs = IdleRecord("other", T0 - timedelta(minutes=5), 0.0)
    jobs = [
        job(0.0, T0, "exempt", exempt=True),
        job(0.0, T0, "eval", job_type="evaluation"),
        job(0.0, T0, "theirs", record=theirs),
        job(0.0, T0, "mine"),
    ]
    plan = reconcile_idle_policy(policy(status, jobTypes=["training"]), jobs, T0)
    assert [name for _, name, _ in plan.patches] == ["mine"]
    assert plan.status["coveredJobs"] == 2
    assert [j["job"] for j in plan.status["jobs"]] == ["mine"]


def test_a_restart_reads_the_record_back_and_acts_on_what_fell_due() -> None:
    warned = IdleRecord("idle", T0, 1.0)
    # a restarted operator: no policy status, the job's annotation says it was warned at T0
    plan = reconcile_idle_policy(
        policy(action="suspend"),
        [job(1.0, T0 + timedelta(seconds=45), record=warned)],
        T0 + timedelta(seconds=45),
    )
    assert [e.reason for _, e in plan.job_events] == ["IdleJobSuspended"]
    done = IdleRecord.parse(plan.patches[0][2]["metadata"]["annotations"][ANNOTATION_IDLE])
    assert done is not None and done.warned_at == T0 and done.action == "suspend"


def test_the_status_stands_in_for_an_index_that_has_not_seen_the_warning_yet() -> None:
    c = Cluster(action="suspend", graceSeconds=600)
    c.tick(0.0, T0)
    c.tick(0.0, T0 + timedelta(seconds=60))
    c.record = None  # the job index still holds the job as it was before the warning
    c.tick(0.0, T0 + timedelta(seconds=75))
    assert c.reasons == ["IdleGPUs"], "not warned twice"


def test_record_round_trip_and_foreign_values() -> None:
    done = IdleRecord("p", T0, 3.14159, "cancel", T0 + timedelta(seconds=5))
    back = IdleRecord.parse(done.to_annotation())
    assert back == replace(done, activity_percent=3.1)
    for text in (None, "", "yes", "[]", '{"policy": "p"}', '{"policy":"p","warnedAt":"x"}'):
        assert IdleRecord.parse(text) is None


def test_status_lists_idle_jobs_idle_longest_first() -> None:
    status = {
        "jobs": [
            {
                "job": "b",
                "namespace": "ml",
                "idleSince": T0 - timedelta(seconds=30),
                "activityPercent": 0.0,
                "message": "",
            }
        ]
    }
    plan = reconcile_idle_policy(policy(status), [job(0.0, T0, "a"), job(0.0, T0, "b")], T0)
    assert [j["job"] for j in plan.status["jobs"]] == ["b", "a"]
    assert plan.status["message"] == "2 of 2 covered running jobs idle"
    assert plan.wake_at == T0 + timedelta(seconds=30)


def test_a_tenant_policy_covers_the_running_jobs_of_its_tenants_namespaces() -> None:
    from typing import cast

    from gryvia_operator.controller.runtime import Runtime
    from gryvia_operator.controller.store import AIJOBS, NAMESPACE_LABELS, TENANTS
    from gryvia_operator.handlers.idlepolicy import covered_jobs

    def running(ns: str, name: str, phase: str = "Running") -> dict[str, Any]:
        meta = {"namespace": ns, "name": name}
        return {"metadata": meta, "spec": {"type": "training"}, "status": {"phase": phase}}

    jobs = [
        running("tenant-acme", "a"),
        running("acme-dev", "b"),
        running("other", "c"),
        running("tenant-acme", "done", "Succeeded"),
    ]
    tenant = {"apiVersion": "gryvia.io/v1alpha1", "kind": "GryviaTenant"}
    tenant |= {"metadata": {"name": "acme"}, "spec": {"displayName": "Acme"}}
    rt = Runtime(api=cast(Any, None), clock=lambda: T0)
    rt.indices.attach(
        {
            AIJOBS: {(j["metadata"]["namespace"], j["metadata"]["name"]): [j] for j in jobs},
            TENANTS: {"acme": [tenant]},
            NAMESPACE_LABELS: {"acme-dev": [{"gryvia.io/tenant": "acme"}]},
        }
    )
    whole = GryviaIdlePolicy.model_validate(
        {"metadata": {"name": "p", "namespace": "tenant-acme"}, "spec": {"scope": "Tenant"}}
    )
    assert sorted(j.name for j in covered_jobs(rt, whole)) == ["a", "b"]
    own = GryviaIdlePolicy.model_validate(
        {"metadata": {"name": "p", "namespace": "tenant-acme"}, "spec": {}}
    )
    assert [j.name for j in covered_jobs(rt, own)] == ["a"]


def test_the_warning_and_the_action_set_conditions_naming_the_policy_activity_and_window() -> None:
    c = Cluster(action="suspend")
    c.tick(1.0, T0)
    assert c.conditions == [], "a job never warned gets no idle condition"
    c.tick(2.0, T0 + timedelta(seconds=60))
    warned = c.condition("IdleGPUs")
    assert (warned["status"], warned["reason"]) == ("True", "IdleWarning")
    assert warned["lastTransitionTime"] == "2026-12-01T10:01:00Z"
    for part in ("idle policy idle", "at most 2.0%", "60 s window", "threshold 5%", "30 s"):
        assert part in warned["message"], warned["message"]
    c.tick(1.0, T0 + timedelta(seconds=75))
    assert c.condition_writes == 1, "the conditions are written once"
    c.tick(1.0, T0 + timedelta(seconds=90))
    acted = c.condition("IdleAction")
    assert (acted["status"], acted["reason"]) == ("True", "IdleJobSuspended")
    assert acted["lastTransitionTime"] == "2026-12-01T10:01:30Z"
    assert "idle policy idle" in acted["message"] and "60 s window" in acted["message"]
    assert acted["message"].endswith("suspended"), acted["message"]
    assert c.condition("IdleGPUs")["lastTransitionTime"] == "2026-12-01T10:01:00Z"
    c.tick(90.0, T0 + timedelta(seconds=100))  # resumed by someone and busy again
    assert c.record is None
    assert [(x["type"], x["status"], x["reason"]) for x in c.conditions] == [
        ("IdleGPUs", "False", "NotIdle"),
        ("IdleAction", "False", "NotIdle"),
    ]
    writes = c.condition_writes
    c.tick(90.0, T0 + timedelta(seconds=110))
    assert c.condition_writes == writes


def test_a_restart_after_the_action_writes_its_conditions_with_the_records_times() -> None:
    done = IdleRecord("idle", T0, 1.0, "cancel", T0 + timedelta(seconds=30))
    stopped = job(None, T0, "stopped", record=done, running=False)
    theirs = job(None, T0, "theirs", record=replace(done, policy="other"), running=False)
    plan = reconcile_idle_policy(
        policy(action="cancel"), [stopped, theirs], T0 + timedelta(hours=1)
    )
    assert plan.patches == [] and plan.job_events == [] and plan.status["coveredJobs"] == 0
    ((ns, name, wanted),) = plan.conditions
    assert (ns, name) == ("ml", "stopped")
    assert [(x["type"], x["reason"], x["lastTransitionTime"]) for x in wanted] == [
        ("IdleGPUs", "IdleWarning", "2026-12-01T10:00:00Z"),
        ("IdleAction", "IdleJobCancelled", "2026-12-01T10:00:30Z"),
    ]
    shown = job(None, T0, "stopped", record=done, running=False)
    shown.body["status"] = {"conditions": wanted}
    assert reconcile_idle_policy(policy(action="cancel"), [shown], T0).conditions == []


def test_an_index_behind_the_action_neither_acts_again_nor_moves_its_time() -> None:
    c = Cluster(action="suspend", graceSeconds=0)
    c.tick(0.0, T0)
    c.tick(0.0, T0 + timedelta(seconds=60))
    assert c.reasons == ["IdleGPUs", "IdleJobSuspended"] and len(c.writes) == 2
    c.record = replace(c.record, action=None, acted_at=None) if c.record else None
    c.tick(0.0, T0 + timedelta(seconds=75))  # the index still shows the warning only
    assert c.reasons == ["IdleGPUs", "IdleJobSuspended"] and len(c.writes) == 2
    assert c.condition("IdleAction")["lastTransitionTime"] == "2026-12-01T10:01:00Z"
