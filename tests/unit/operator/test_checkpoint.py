"""Checkpoint guards, pure: selection, pod template, commit lines, the ConfigMap record, losses."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from gryvia_operator.api.checkpointguard import GryviaCheckpointGuard
from gryvia_operator.api.core import LabelSelector, selector_matches
from gryvia_operator.api.jobstorage import DataClaim
from gryvia_operator.reconcile.checkpointguard import (
    ENV_DIR,
    ENV_INTERVAL,
    ENV_RESUME,
    SCHEDULING_GATE,
    CheckpointPlan,
    JobCheckpoints,
    build_configmap,
    is_guarded_pod,
    lost_pods,
    merge_commits,
    parse_commits,
    plan_for,
    pod_facts,
    read_state,
    siblings_to_evict,
    state_data,
)
from gryvia_operator.reconcile.checkpointguard_status import (
    GuardView,
    guard_status,
    reconcile_guard,
)
from gryvia_operator.reconcile.children import build_batch_job
from gryvia_operator.reconcile.config import ReconcileConfig
from tests.builders import JobBuilder

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
T = "2026-12-01T12:00:00Z"


def guard(name: str = "g", namespace: str = "ml", **spec: Any) -> GryviaCheckpointGuard:
    body = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaCheckpointGuard",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "jobSelector": {"matchLabels": {"checkpoint": "on"}},
            "checkpointPolicy": {"intervalSeconds": 60},
            **spec,
        },
    }
    return GryviaCheckpointGuard.model_validate(body)


def job(name: str = "train", labels: dict[str, str] | None = None, storage: bool = True) -> Any:
    b = JobBuilder(name).gpus(8).distributed(nodes=2)
    if storage:
        b = b.storage("standard", "10Gi")
    return b.meta(labels={"checkpoint": "on"} if labels is None else labels).model()


def pod(name: str, **over: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {"gryvia.io/job": "train"},
            "annotations": {"batch.kubernetes.io/job-completion-index": name[-1]},
        },
        "spec": {"containers": [{"name": "trainer", "env": [{"name": ENV_RESUME}]}]},
        "status": {"phase": "Running"},
    }
    for key, value in over.items():
        section, field = key.split("__")
        body[section][field] = value
    return body


def test_selector_matches_labels_and_expressions() -> None:
    sel = LabelSelector.model_validate(
        {
            "matchLabels": {"a": "1"},
            "matchExpressions": [
                {"key": "b", "operator": "In", "values": ["x", "y"]},
                {"key": "c", "operator": "DoesNotExist"},
            ],
        }
    )
    assert selector_matches(sel, {"a": "1", "b": "x"})
    assert not selector_matches(sel, {"a": "1", "b": "z"})
    assert not selector_matches(sel, {"a": "1", "b": "x", "c": ""})
    assert selector_matches(None, {}) and selector_matches(LabelSelector(), {"any": "x"})
    odd = LabelSelector.model_validate({"matchExpressions": [{"key": "a", "operator": "Gt"}]})
    assert not selector_matches(odd, {"a": "1"})


def test_plan_needs_a_matching_guard_in_the_namespace_and_the_jobs_pvc() -> None:
    plan = plan_for(job(), [guard("b"), guard("a", checkpointPolicy={"directory": "ck/x"})])
    assert plan == CheckpointPlan("a", 600, "/data/ck/x", claim="train-data")  # first by name
    assert plan_for(job(labels={}), [guard()]) is None
    assert plan_for(job(), [guard(namespace="other")]) is None
    assert plan_for(job(storage=False), [guard()]) is None  # checkpoints live on the PVC
    off = plan_for(job(), [guard(restore={"enabled": False, "wholeJob": False})])
    assert off is not None and not off.restore and not off.whole_job


def test_on_a_shared_claim_each_job_checkpoints_into_its_own_folder() -> None:
    shared = DataClaim("fast-nfs", "ReadWriteMany", backend="fast-nfs")
    plan = plan_for(job(), [guard()], shared)
    assert plan is not None
    assert (plan.directory, plan.claim, plan.storage) == (
        "/data/checkpoints/train",
        "gryvia-data-fast-nfs",
        "fast-nfs",
    )
    once = plan_for(job(), [guard()], DataClaim("local", "ReadWriteOnce", backend="local"))
    assert once is not None and (once.directory, once.claim) == ("/data/checkpoints", "train-data")
    data = state_data(JobCheckpoints(steps=(10, 20)), plan=plan)
    assert data["directory"] == "/data/checkpoints/train" and data["storage"] == "fast-nfs"
    assert data["claim"] == "gryvia-data-fast-nfs" and data["resumeStep"] == "20"
    assert "directory" not in state_data(JobCheckpoints())


def test_guard_spec_is_validated() -> None:
    with pytest.raises(ValidationError):
        guard(checkpointPolicy={"intervalSeconds": 5})
    with pytest.raises(ValidationError):
        guard(checkpointPolicy={"directory": "/abs"})
    with pytest.raises(ValidationError):
        guard(checkpointPolicy={"directory": "../up"})


def test_guarded_job_pods_get_env_from_the_configmap_and_the_gate() -> None:
    j = job()
    plan = plan_for(j, [guard()])
    template = build_batch_job(j, ReconcileConfig(checkpoint=plan))["spec"]["template"]
    env = {e["name"]: e for e in template["spec"]["containers"][0]["env"]}
    assert env[ENV_DIR]["value"] == "/data/checkpoints"
    assert env[ENV_INTERVAL]["value"] == "60"
    assert env[ENV_RESUME]["valueFrom"]["configMapKeyRef"] == {
        "name": "train-checkpoint",
        "key": "resumeStep",
        "optional": True,
    }
    assert template["spec"]["schedulingGates"] == [{"name": SCHEDULING_GATE}]
    assert is_guarded_pod(template)
    plain = build_batch_job(j)["spec"]["template"]
    assert "schedulingGates" not in plain["spec"] and not is_guarded_pod(plain)


def test_commit_lines_are_parsed_whole_lines_only() -> None:
    log = (
        "step 1 loss 0.9\n"
        "GRYVIA_CHECKPOINT_COMMITTED step=10\n"
        "echo GRYVIA_CHECKPOINT_COMMITTED step=11\n"
        "GRYVIA_CHECKPOINT_COMMITTED step=20  \n"
        "GRYVIA_CHECKPOINT_COMMITTED step=x\n"
    )
    assert parse_commits(log) == [10, 20]


def test_the_record_merges_commits_and_round_trips_through_configmap_data() -> None:
    empty = read_state(None)
    assert empty.resume_step is None and not empty.started
    state = merge_commits(empty, [30, 10, 20, 20], NOW)
    assert state.steps == (10, 20, 30) and state.resume_step == 30
    assert state.last_commit == "2026-12-01T12:00:00Z"
    assert merge_commits(state, [10], NOW) is state
    data = state_data(state)
    assert data == {
        "resumeStep": "30",
        "committedSteps": "10,20,30",
        "lastCommitTime": "2026-12-01T12:00:00Z",
        "restores": "0",
    }
    assert read_state(data) == JobCheckpoints(state.steps, state.last_commit, 0, started=True)
    assert state_data(state, resume=False)["resumeStep"] == ""
    assert read_state({"committedSteps": "a,,3", "restores": "x"}).steps == (3,)
    many = merge_commits(empty, range(100), NOW)
    assert len(many.steps) == 20 and many.steps[-1] == 99
    cm = build_configmap(JobBuilder("train").obj(), state)
    assert cm["metadata"]["name"] == "train-checkpoint"
    assert cm["metadata"]["ownerReferences"][0]["uid"] == "uid-train"


def test_pod_facts_and_loss_reasons() -> None:
    gated = pod_facts(pod("t-0", spec__schedulingGates=[{"name": "x"}, {"name": SCHEDULING_GATE}]))
    assert gated.gated and gated.gate_index == 1 and not gated.live and not gated.started
    running = pod_facts(pod("t-1"))
    assert running.live and running.started and running.loss_reason is None
    deleted = pod_facts(pod("t-2", metadata__deletionTimestamp="2026-12-01T12:00:00Z"))
    assert deleted.loss_reason == "PodDeleted" and not deleted.live
    evicted = pod_facts(
        pod(
            "t-3",
            metadata__deletionTimestamp="2026-12-01T12:00:00Z",
            status__conditions=[
                {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager"}
            ],
        )
    )
    assert evicted.loss_reason == "NodeLost"
    assert [p.name for p in lost_pods([gated, running, deleted, evicted])] == ["t-2", "t-3"]


def test_a_loss_evicts_the_other_live_ranks_unless_elastic_or_off() -> None:
    pods = [pod_facts(pod(n)) for n in ("t-0", "t-1", "t-2")]
    lost = pods[0]
    plan = CheckpointPlan("g", 60, "/data/checkpoints")
    assert siblings_to_evict(pods, lost, plan, elastic=False) == ["t-1", "t-2"]
    assert siblings_to_evict(pods, lost, plan, elastic=True) == []
    off = CheckpointPlan("g", 60, "/data/checkpoints", whole_job=False)
    assert siblings_to_evict(pods, lost, off, elastic=False) == []


def test_guard_status_lists_jobs_and_the_last_restore() -> None:
    view = GuardView(
        jobs={"b": JobCheckpoints((5,), T, 1, True), "a": JobCheckpoints()},
        last_restore={"job": "b", "pod": "b-0-x", "step": 5, "reason": "PodDeleted", "time": T},
    )
    status = guard_status(view, NOW)
    assert [j["job"] for j in status["jobs"]] == ["a", "b"]
    assert status["jobs"][1] == {"job": "b", "steps": [5], "lastCommitTime": T, "restores": 1}
    assert status["lastRestore"]["step"] == 5
    assert status["conditions"][0]["reason"] == "Valid"
    GryviaCheckpointGuard.model_validate({**guard().model_dump(by_alias=True), "status": status})


def test_a_guard_status_is_written_again_only_when_more_than_the_time_changed() -> None:
    view = GuardView(jobs={"a": JobCheckpoints((5,), T, 0, True)})
    first = reconcile_guard({}, view, NOW)
    later = NOW.replace(minute=NOW.minute + 1)
    assert reconcile_guard(first, view, later) == first  # same jobs: the old stamp stays
    view.jobs["a"] = JobCheckpoints((5, 6), T, 0, True)
    moved = reconcile_guard(first, view, later)
    assert moved["jobs"][0]["steps"] == [5, 6]
    assert (
        moved["conditions"][0]["lastTransitionTime"] != first["conditions"][0]["lastTransitionTime"]
    )
    invalid = {"conditions": [{**first["conditions"][0], "status": "False", "reason": "Invalid"}]}
    assert (
        reconcile_guard(invalid, GuardView(jobs=dict(view.jobs)), later)["conditions"][0]["reason"]
        == "Valid"
    )


def test_the_newest_restore_outlives_an_operator_restart() -> None:
    restore = {"job": "a", "pod": "a-0-x", "step": 5, "reason": "PodDeleted", "time": T}
    before = reconcile_guard({}, GuardView(jobs={}, last_restore=restore), NOW)
    after_restart = reconcile_guard(before, GuardView(), NOW.replace(hour=13))
    assert after_restart == before
    newer = {**restore, "step": 7}
    assert reconcile_guard(before, GuardView(last_restore=newer), NOW)["lastRestore"] == newer
