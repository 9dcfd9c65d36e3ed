"""Checkpoint guards with `restore.wholeJob: false` (`gryvia checkpoint create
--lost-pods-only`): only the lost pod is replaced, and it resumes from the last committed step
(the pure rules, then one guard pass of handlers/checkpointguard.py over an in-memory API)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.api.checkpointguard import KEY_RESUME, configmap_name
from gryvia_operator.controller.runtime import Runtime
from gryvia_operator.handlers.checkpointguard import GuardedJobs
from gryvia_operator.reconcile.checkpointguard import (
    ENV_RESUME,
    SCHEDULING_GATE,
    CheckpointPlan,
    JobCheckpoints,
    build_configmap,
    checkpoint_env,
    lost_pods,
    merge_commits,
    parse_commits,
    pod_facts,
    pods_to_read,
    siblings_to_evict,
    state_data,
)
from gryvia_operator.reconcile.status import JobEvent
from tests.builders import JobBuilder
from tests.unit.operator.fakeapi import FakeApi

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
LOST_ONLY = CheckpointPlan("g", 60, "/data/checkpoints", whole_job=False)


def _pod(name: str, *, gated: bool = False, deleting: bool = False, **status: Any) -> dict:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "uid": f"uid-{name}",
            "labels": {"gryvia.io/job": "train"},
            "annotations": {"batch.kubernetes.io/job-completion-index": name.split("-")[1]},
        },
        "spec": {
            "containers": [{"name": "trainer", "env": checkpoint_env("train", LOST_ONLY)}],
            "schedulingGates": [{"name": SCHEDULING_GATE}] if gated else [],
        },
        "status": {"phase": "Pending" if gated else "Running", **status},
    }
    if deleting:
        body["metadata"]["deletionTimestamp"] = "2026-12-01T11:59:00Z"
    return body


def _commits(*steps: int) -> str:
    return "".join(f"GRYVIA_CHECKPOINT_COMMITTED step={s}\n" for s in steps)


def test_the_pure_rules_replace_only_the_lost_pod_and_resume_it_from_the_last_commit() -> None:
    lost = pod_facts(_pod("train-0-a", deleting=True))
    other = pod_facts(_pod("train-1-b"))
    fresh = pod_facts(_pod("train-0-c", gated=True))
    assert lost_pods([lost, other, fresh]) == [lost]
    assert siblings_to_evict([lost, other, fresh], lost, LOST_ONLY, elastic=False) == []
    state = merge_commits(JobCheckpoints((2, 4)), parse_commits(_commits(5, 6)), NOW)
    data = state_data(state)
    assert data[KEY_RESUME] == "6"  # what the replacement's GRYVIA_RESUME_STEP reads
    env = {e["name"]: e for e in checkpoint_env("train", LOST_ONLY)}
    ref = env[ENV_RESUME]["valueFrom"]["configMapKeyRef"]
    assert (ref["name"], ref["key"]) == (configmap_name("train"), KEY_RESUME)
    body = {"metadata": {"name": "train", "namespace": "ml", "uid": "u"}}
    assert build_configmap(body, state)["data"][KEY_RESUME] == "6"
    assert state_data(state, resume=False)[KEY_RESUME] == ""  # restore.enabled false


def test_an_ended_pod_is_read_once_a_running_or_going_pod_every_pass() -> None:
    running = pod_facts(_pod("train-1-b"))
    going = pod_facts(_pod("train-0-a", deleting=True, phase="Failed"))
    crashed = pod_facts(_pod("train-0-c", phase="Failed"))
    gated = pod_facts(_pod("train-0-d", gated=True))
    pods = [running, going, crashed, gated]
    assert pods_to_read(pods, set()) == [running, going, crashed]
    assert pods_to_read(pods, {crashed.uid, going.uid}) == [running, going]


def _runtime(api: FakeApi, events: list[JobEvent]) -> Runtime:
    return Runtime(
        api=cast(Any, api), clock=lambda: NOW, post_event=lambda _obj, e: events.append(e)
    )


async def _pass(guards: GuardedJobs, api: FakeApi, *pods: dict[str, Any]) -> None:
    for p in pods:
        api.put(p)
        guards.on_pod("MODIFIED", p)
    builder = JobBuilder("train").gpus(8).distributed(nodes=2).storage("standard", "10Gi")
    body = builder.uid("job-uid").meta(labels={"checkpoint": "on"}).obj()
    await guards._job_pass(("ml", "train"), body, GryviaAIJob.model_validate(body), LOST_ONLY)


async def test_a_lost_pod_alone_is_replaced_and_resumes_from_the_last_committed_step() -> None:
    api, events = FakeApi(), []
    guards = GuardedJobs(_runtime(api, events))
    # both ranks released and running; rank 0 commits steps 1..4
    api.logs[("ml", "train-0-a")] = _commits(1, 2, 3, 4)
    api.logs[("ml", "train-1-b")] = "rank 1 starting fresh\n"
    await _pass(guards, api, _pod("train-0-a"), _pod("train-1-b"))
    cm = api.objects[("ConfigMap", "ml", configmap_name("train"))]
    assert cm["data"][KEY_RESUME] == "4"

    # rank 0 is deleted after committing 5 and 6; its replacement waits behind the gate
    api.logs[("ml", "train-0-a")] = _commits(1, 2, 3, 4, 5, 6)
    await _pass(guards, api, _pod("train-0-a", deleting=True), _pod("train-0-c", gated=True))
    assert not [c for c in api.calls if c[0] == "evict"]  # rank 1 keeps running
    data = api.objects[("ConfigMap", "ml", configmap_name("train"))]["data"]
    assert data[KEY_RESUME] == "6" and data["restores"] == "1"
    released = api.objects[("Pod", "ml", "train-0-c")]
    assert released["spec"]["schedulingGates"] == []
    assert [e.reason for e in events] == ["CheckpointRestored"]
    assert "train-0-c resumes from committed step 6 (PodDeleted)" in events[0].message

    # the replacement runs on from 6 and commits 7: recorded, rank 1 untouched
    api.logs[("ml", "train-0-c")] = "rank 0 resumed from step 6\n" + _commits(7)
    guards.on_pod("DELETED", _pod("train-0-a", deleting=True))
    released["status"]["phase"] = "Running"
    await _pass(guards, api, released)
    data = api.objects[("ConfigMap", "ml", configmap_name("train"))]["data"]
    assert data[KEY_RESUME] == "7" and data["restores"] == "1"
    assert not [c for c in api.calls if c[0] == "evict"]


async def test_a_replacement_gated_after_the_lost_pod_went_resumes_from_its_last_commit() -> None:
    """The Job replaces a pod only once it failed (podFailurePolicy), after a back-off: the
    lost pod may be gone before its replacement appears."""
    api, events = FakeApi(), []
    guards = GuardedJobs(_runtime(api, events))
    api.logs[("ml", "train-0-a")] = _commits(1, 2)
    await _pass(guards, api, _pod("train-0-a"), _pod("train-1-b"))
    api.logs[("ml", "train-0-a")] = _commits(1, 2, 3)
    await _pass(guards, api, _pod("train-0-a", deleting=True, phase="Failed"))
    guards.on_pod("DELETED", _pod("train-0-a", deleting=True))
    del api.objects[("Pod", "ml", "train-0-a")]
    await _pass(guards, api, _pod("train-0-c", gated=True))
    data = api.objects[("ConfigMap", "ml", configmap_name("train"))]["data"]
    assert data[KEY_RESUME] == "3" and data["restores"] == "1"
    assert api.objects[("Pod", "ml", "train-0-c")]["spec"]["schedulingGates"] == []
    assert "resumes from committed step 3 (PodDeleted)" in events[-1].message


async def test_a_pod_that_failed_after_a_commit_is_read_once_before_its_retry_is_released() -> None:
    """A trainer that crashed (phase Failed, not deleted) may have committed after the last
    poll: its log is read before the Job's retry is released, then no more."""
    api, events = FakeApi(), []
    guards = GuardedJobs(_runtime(api, events))
    api.logs[("ml", "train-0-a")] = _commits(1, 2)
    await _pass(guards, api, _pod("train-0-a"), _pod("train-1-b"))
    api.logs[("ml", "train-0-a")] = _commits(1, 2, 3)
    await _pass(guards, api, _pod("train-0-a", phase="Failed"), _pod("train-0-c", gated=True))
    data = api.objects[("ConfigMap", "ml", configmap_name("train"))]["data"]
    assert data[KEY_RESUME] == "3" and data["restores"] == "1"
    reads = sum(1 for c in api.calls if c == ("log", "Pod", "train-0-a"))
    await _pass(guards, api)
    assert sum(1 for c in api.calls if c == ("log", "Pod", "train-0-a")) == reads


def _guard(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaCheckpointGuard",
        "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
        "spec": spec,
    }


async def test_the_guard_controller_releases_pods_then_writes_each_guard_status_once() -> None:
    """One pass of the kind controller: the guarded job's gated pod is released after its
    ConfigMap is written, the guard's status lists the job (written once while nothing
    changes), and a guard whose spec the model refuses gets the invalid status."""
    from gryvia_operator.controller.store import AIJOBS, CHECKPOINT_GUARDS
    from gryvia_operator.handlers.checkpointguard import controller

    api, events = FakeApi(), []
    good = _guard("g", {"jobSelector": {}, "checkpointPolicy": {"intervalSeconds": 60}})
    bad = _guard("h", {"jobSelector": {}, "checkpointPolicy": {"intervalSeconds": -1}})
    job = JobBuilder("train").gpus(8).distributed(nodes=2).storage("standard", "10Gi").obj()
    for body in (good, bad, job):
        api.put(body)
    rt = _runtime(api, events)
    rt.indices.attach(
        {
            CHECKPOINT_GUARDS: {("ml", "g"): [good], ("ml", "h"): [bad]},
            AIJOBS: {("ml", "train"): [job]},
        }
    )
    kind = controller(rt)
    gated = _pod("train-0-a", gated=True)
    api.put(gated)
    assert kind.spec.jobs.on_pod("ADDED", gated)  # a gated pod asks for a pass now
    await kind.one_pass()
    order = [c[:2] for c in api.calls if c[0] in ("create", "json_patch")]
    assert order == [("create", "ConfigMap"), ("json_patch", "Pod")]
    status = api.objects[("GryviaCheckpointGuard", "ml", "g")]["status"]
    assert status["jobs"] == [{"job": "train", "steps": [], "restores": 0}]
    assert status["conditions"][0]["message"] == "guarding 1 job(s)"
    invalid = api.objects[("GryviaCheckpointGuard", "ml", "h")]["status"]
    assert invalid == {"phase": "Invalid", "message": "Input should be greater than or equal to 10"}
    writes = [c for c in api.calls if c[0] == "patch/status"]
    await kind.one_pass()
    assert [c for c in api.calls if c[0] == "patch/status"] == writes
