"""GryviaWorkflow: the model's checks and the pure reconcile (ordering, conditions, failure,
parameters, retry, cancel, schedule and concurrency, history)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from gryvia_operator.api.workflow import GryviaWorkflow
from gryvia_operator.reconcile.workflow import (
    StepJob,
    WorkflowPlan,
    cron_times,
    descendants,
    reconcile_workflow,
)

T0 = datetime(2026, 12, 1, 10, 0, 30, tzinfo=UTC)


def step(name: str, *deps: str, condition: str = "afterok", script: str = "true") -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "template": {
            "type": "training",
            "gpus": 0,
            "image": "none",
            "command": ["sh", "-c", script],
        },
    }
    if deps:
        out["dependsOn"] = list(deps)
        out["condition"] = condition
    return out


def workflow(
    *steps: dict[str, Any],
    status: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> GryviaWorkflow:
    body: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaWorkflow",
        "metadata": {
            "name": "wf",
            "namespace": "ns",
            "uid": "u-1",
            "creationTimestamp": "2026-12-01T10:00:00Z",
            "annotations": annotations or {},
        },
        "spec": {"steps": list(steps), **spec},
    }
    if status is not None:
        body["status"] = status
    return GryviaWorkflow.model_validate(body)


PIPE = (step("prepare"), step("train", "prepare"), step("eval", "train"))


def again(
    wf: GryviaWorkflow, plan: WorkflowPlan, annotations: dict[str, str] | None = None, **kw: Any
) -> GryviaWorkflow:
    """The workflow as the next pass sees it: the plan's status written back."""
    body = wf.model_dump(mode="json", by_alias=True, exclude_none=True)
    body["status"] = plan.status
    if annotations is not None:
        body["metadata"]["annotations"] = annotations
    body["spec"].update(kw)
    return GryviaWorkflow.model_validate(body)


def annotate(wf: GryviaWorkflow, annotations: dict[str, str]) -> GryviaWorkflow:
    """The same workflow with `annotations` (a retry or cancel request)."""
    body = wf.model_dump(mode="json", by_alias=True, exclude_none=True)
    body["metadata"]["annotations"] = annotations
    return GryviaWorkflow.model_validate(body)


def names(plan: WorkflowPlan) -> list[str]:
    return [j["metadata"]["name"] for j in plan.create]


def states(plan: WorkflowPlan, run: int = -1) -> dict[str, str]:
    return {s["name"]: s["state"] for s in plan.status["runs"][run]["steps"]}


def test_steps_run_in_dependency_order_and_the_run_succeeds() -> None:
    wf = workflow(*PIPE)
    plan = reconcile_workflow(wf, [], T0)
    assert names(plan) == ["wf-1-prepare"]
    job = plan.create[0]
    assert job["metadata"]["labels"] == {
        "gryvia.io/workflow": "wf",
        "gryvia.io/workflow-run": "1",
        "gryvia.io/workflow-step": "prepare",
    }
    assert job["metadata"]["ownerReferences"][0]["uid"] == "u-1"
    assert plan.status["phase"] == "Running" and plan.status["lastRun"] == 1
    assert states(plan) == {"prepare": "Pending", "train": "Waiting", "eval": "Waiting"}
    wf = again(wf, plan)
    jobs = [StepJob("wf-1-prepare", "Running", run=1)]
    assert names(reconcile_workflow(wf, jobs, T0)) == []
    jobs = [StepJob("wf-1-prepare", "Succeeded", run=1)]
    plan = reconcile_workflow(wf, jobs, T0)
    assert names(plan) == ["wf-1-train"]
    wf = again(wf, plan)
    jobs += [StepJob("wf-1-train", "Succeeded", run=1)]
    plan = reconcile_workflow(wf, jobs, T0)
    assert names(plan) == ["wf-1-eval"]
    wf = again(wf, plan)
    jobs += [StepJob("wf-1-eval", "Succeeded", run=1)]
    plan = reconcile_workflow(wf, jobs, T0)
    assert plan.status["phase"] == "Succeeded" and not plan.create
    assert plan.status["runs"][0]["completionTime"] == "2026-12-01T10:00:30Z"


def test_a_failed_step_stops_what_depends_on_it_and_the_run_names_it() -> None:
    wf = workflow(*PIPE, status={"lastRun": 1, "runs": [{"number": 1, "steps": []}]})
    jobs = [StepJob("wf-1-prepare", "Succeeded", run=1)]
    plan = reconcile_workflow(wf, jobs, T0)
    wf = again(wf, plan)
    jobs += [StepJob("wf-1-train", "Failed", "exit code 3", run=1)]
    plan = reconcile_workflow(wf, jobs, T0)
    assert not plan.create
    assert states(plan) == {"prepare": "Succeeded", "train": "Failed", "eval": "Skipped"}
    assert plan.status["phase"] == "Failed" and plan.status["failedStep"] == "train"
    assert plan.status["message"] == "step train failed: exit code 3"
    eval_step = plan.status["runs"][0]["steps"][2]
    assert eval_step["message"] == "dependency train Failed (afterok)"


@pytest.mark.parametrize(
    ("condition", "outcome", "runs"),
    [
        ("afterok", "Succeeded", True),
        ("afterok", "Failed", False),
        ("afterany", "Succeeded", True),
        ("afterany", "Failed", True),
        ("afterany", "Cancelled", True),
        ("afternotok", "Failed", True),
        ("afternotok", "Succeeded", False),
    ],
)
def test_conditions_follow_sbatch_dependency(condition: str, outcome: str, runs: bool) -> None:
    wf = workflow(step("a"), step("b", "a", condition=condition))
    wf = again(wf, reconcile_workflow(wf, [], T0))
    plan = reconcile_workflow(wf, [StepJob("wf-1-a", outcome, run=1)], T0)
    assert names(plan) == (["wf-1-b"] if runs else [])
    assert states(plan)["b"] == ("Pending" if runs else "Skipped")


def test_afterok_waits_for_every_dependency_and_independent_branches_go_on() -> None:
    wf = workflow(step("a"), step("b"), step("c", "a", "b"), step("d", "b"))
    plan = reconcile_workflow(wf, [], T0)
    assert names(plan) == ["wf-1-a", "wf-1-b"]
    wf = again(wf, plan)
    jobs = [StepJob("wf-1-a", "Running", run=1), StepJob("wf-1-b", "Succeeded", run=1)]
    plan = reconcile_workflow(wf, jobs, T0)
    assert names(plan) == ["wf-1-d"]  # c waits for a
    wf = again(wf, plan)
    jobs = [
        StepJob("wf-1-a", "Failed", run=1),
        StepJob("wf-1-b", "Succeeded", run=1),
        StepJob("wf-1-d", "Pending", run=1),
    ]
    plan = reconcile_workflow(wf, jobs, T0)
    assert names(plan) == []
    assert states(plan)["c"] == "Skipped" and states(plan)["d"] == "Pending"


def test_parameters_and_workflow_placeholders_are_substituted() -> None:
    tpl = step("train", script="echo lr=$(parameters.lr) run=$(workflow.run) $(date)")
    wf = workflow(tpl, parameters={"lr": "0.01"})
    job = reconcile_workflow(wf, [], T0).create[0]
    assert job["spec"]["command"][2] == "echo lr=0.01 run=1 $(date)"
    env = {e["name"]: e["value"] for e in job["spec"]["env"]}
    assert env == {
        "GRYVIA_WORKFLOW": "wf",
        "GRYVIA_WORKFLOW_RUN": "1",
        "GRYVIA_WORKFLOW_STEP": "train",
    }


@pytest.mark.parametrize(
    ("steps", "extra", "expected"),
    [
        ((step("a"), step("a")), {}, "step names must be unique; a repeated"),
        ((step("a", "zz"),), {}, "spec.steps[0].dependsOn: no step named 'zz'"),
        ((step("a", "b"), step("b", "a")), {}, "dependsOn makes a cycle among a, b"),
        ((step("a", script="$(parameters.x)"),), {}, "unknown placeholder $(parameters.x)"),
        (({"name": "a", "template": {"type": "training"}},), {}, "spec.steps[0].template.gpus"),
        ((step("a"),), {"schedule": {"cron": "* * *"}}, "spec.schedule.cron: '* * *' has 3"),
    ],
)
def test_invalid_specs_name_the_field(
    steps: tuple[dict[str, Any], ...], extra: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ValidationError) as err:
        workflow(*steps, **extra)
    assert expected in str(err.value)


def test_descendants_follow_dependencies_transitively() -> None:
    wf = workflow(*PIPE, step("report", "prepare"))
    assert descendants(wf.spec.steps, "train") == {"train", "eval"}
    assert descendants(wf.spec.steps, "prepare") == {"prepare", "train", "eval", "report"}


def failed_run() -> tuple[GryviaWorkflow, list[StepJob]]:
    wf = workflow(*PIPE, status={"lastRun": 1, "runs": [{"number": 1, "steps": []}]})
    jobs = [StepJob("wf-1-prepare", "Succeeded", run=1)]
    wf = again(wf, reconcile_workflow(wf, jobs, T0))
    jobs += [StepJob("wf-1-train", "Failed", run=1)]
    plan = reconcile_workflow(wf, jobs, T0)
    assert plan.status["phase"] == "Failed"
    return again(wf, plan), jobs


def test_retry_from_a_step_reuses_the_succeeded_steps_before_it() -> None:
    wf, jobs = failed_run()
    request = {"gryvia.io/workflow-retry": "r1:1:train"}
    plan = reconcile_workflow(annotate(wf, request), jobs, T0)
    assert names(plan) == ["wf-2-train"]
    run2 = plan.status["runs"][1]
    assert run2["trigger"] == "Retry" and run2["retryOf"] == 1 and run2["fromStep"] == "train"
    assert run2["steps"][0] == {
        "name": "prepare",
        "state": "Succeeded",
        "job": "wf-1-prepare",
        "reused": True,
    }
    assert plan.status["handledRetry"] == "r1" and plan.status["lastRun"] == 2
    wf = again(wf, plan, request)
    assert names(reconcile_workflow(wf, jobs, T0)) == ["wf-2-train"]  # idempotent until seen
    jobs += [StepJob("wf-2-train", "Succeeded", run=2)]
    plan = reconcile_workflow(wf, jobs, T0)
    assert plan.status["lastRun"] == 2, "a handled request is not acted on twice"
    assert names(plan) == ["wf-2-eval"]
    wf = again(wf, plan, request)
    jobs += [StepJob("wf-2-eval", "Succeeded", run=2)]
    plan = reconcile_workflow(wf, jobs, T0)
    assert plan.status["phase"] == "Succeeded" and plan.status["failedStep"] is None


def test_retry_of_a_running_run_or_an_unknown_step_is_refused_with_a_message() -> None:
    wf = workflow(*PIPE)
    wf = again(wf, reconcile_workflow(wf, [], T0), {"gryvia.io/workflow-retry": "x:1:train"})
    plan = reconcile_workflow(wf, [], T0)
    assert plan.status["lastRun"] == 1
    assert "retry of run 1 ignored" in plan.status["message"]
    failed, jobs = failed_run()
    bad = annotate(failed, {"gryvia.io/workflow-retry": "y:1:nope"})
    plan = reconcile_workflow(bad, jobs, T0)
    assert plan.status["message"] == "retry ignored: no step named nope"


def test_cancel_stops_the_running_steps_and_starts_nothing_more() -> None:
    wf = workflow(*PIPE)
    plan = reconcile_workflow(wf, [], T0)
    wf = again(wf, plan, {"gryvia.io/workflow-cancel": "c1:1"})
    plan = reconcile_workflow(wf, [StepJob("wf-1-prepare", "Running", run=1)], T0)
    assert plan.cancel == ["wf-1-prepare"] and not plan.create
    assert plan.status["phase"] == "Cancelled"
    assert set(states(plan).values()) == {"Cancelled"}
    wf = again(wf, plan, {"gryvia.io/workflow-cancel": "c1:1"})
    plan = reconcile_workflow(wf, [StepJob("wf-1-prepare", "Succeeded", run=1)], T0)
    assert plan.status["phase"] == "Cancelled" and not plan.create and not plan.cancel


def test_cron_times_give_the_latest_due_and_the_next() -> None:
    due, nxt = cron_times("*/1 * * * *", T0 - timedelta(minutes=3), T0)
    assert due == datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
    assert nxt == datetime(2026, 12, 1, 10, 1, tzinfo=UTC)
    due, nxt = cron_times("0 12 * * *", T0, T0)
    assert due is None and nxt == datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def test_a_schedule_starts_one_run_per_cron_time() -> None:
    wf = workflow(step("a"), schedule={"cron": "*/1 * * * *"})
    plan = reconcile_workflow(wf, [], T0 - timedelta(seconds=15))  # 10:00:15, nothing due yet
    assert not plan.create and plan.status["phase"] == "Waiting"
    assert plan.status["nextScheduleTime"] == "2026-12-01T10:01:00Z"
    assert plan.wake_at == datetime(2026, 12, 1, 10, 1, tzinfo=UTC)
    wf = again(wf, plan)
    t1 = datetime(2026, 12, 1, 10, 1, 2, tzinfo=UTC)
    plan = reconcile_workflow(wf, [], t1)
    assert names(plan) == ["wf-1-a"]
    assert plan.status["runs"][0]["scheduledTime"] == "2026-12-01T10:01:00Z"
    wf = again(wf, plan)
    running = [StepJob("wf-1-a", "Running", run=1)]
    assert not reconcile_workflow(wf, running, t1 + timedelta(seconds=30)).create  # same minute
    plan = reconcile_workflow(
        wf, [StepJob("wf-1-a", "Succeeded", run=1)], t1 + timedelta(minutes=1)
    )
    assert names(plan) == ["wf-2-a"] and plan.status["lastRun"] == 2
    assert plan.status["runs"][0]["phase"] == "Succeeded"


@pytest.mark.parametrize(
    ("policy", "created", "cancelled"),
    [("Allow", ["wf-2-a"], []), ("Forbid", [], []), ("Replace", ["wf-2-a"], ["wf-1-a"])],
)
def test_concurrency_policy_decides_about_a_run_still_running(
    policy: str, created: list[str], cancelled: list[str]
) -> None:
    wf = workflow(step("a"), schedule={"cron": "*/1 * * * *", "concurrencyPolicy": policy})
    t1 = datetime(2026, 12, 1, 10, 1, 2, tzinfo=UTC)
    wf = again(wf, reconcile_workflow(wf, [], t1))
    running = [StepJob("wf-1-a", "Running", run=1)]
    plan = reconcile_workflow(wf, running, t1 + timedelta(minutes=1))
    assert names(plan) == created and plan.cancel == cancelled
    if policy == "Forbid":
        assert "skipped: run 1 is still running (Forbid)" in plan.status["message"]
        assert plan.status["lastScheduleTime"] == "2026-12-01T10:02:00Z"
    if policy == "Replace":
        assert plan.status["runs"][0]["phase"] == "Cancelled"


def test_a_suspended_schedule_starts_nothing() -> None:
    wf = workflow(step("a"), schedule={"cron": "*/1 * * * *", "suspend": True})
    assert not reconcile_workflow(wf, [], T0 + timedelta(minutes=5)).create


def test_history_limit_drops_old_runs_and_their_jobs() -> None:
    wf = workflow(step("a"), schedule={"cron": "*/1 * * * *"}, historyLimit=2)
    jobs: list[StepJob] = []
    now = datetime(2026, 12, 1, 10, 1, 2, tzinfo=UTC)
    for n in range(1, 4):
        plan = reconcile_workflow(wf, jobs, now)
        wf = again(wf, plan)
        jobs.append(StepJob(f"wf-{n}-a", "Succeeded", run=n))
        now += timedelta(minutes=1)
    assert [r["number"] for r in plan.status["runs"]] == [2, 3]
    assert plan.delete == ["wf-1-a"]


# -- the handler's pass, over the in-memory API --------------------------------------------


async def test_a_pass_creates_step_jobs_writes_status_and_repeats_nothing() -> None:
    from typing import cast

    from gryvia_operator.controller.runtime import Runtime
    from gryvia_operator.controller.store import AIJOBS, WORKFLOWS
    from gryvia_operator.handlers.workflow import controller
    from tests.unit.operator.fakeapi import FakeApi

    api = FakeApi()
    body = workflow(*PIPE).model_dump(mode="json", by_alias=True, exclude_none=True)
    api.put(body)
    jobs: dict[Any, list[Any]] = {}
    rt = Runtime(api=cast(Any, api), clock=lambda: T0)
    rt.indices.attach({WORKFLOWS: {("ns", "wf"): [body]}, AIJOBS: jobs})
    loop = controller(rt)
    assert await loop.one_pass() == 10.0  # no schedule: the longest wait
    created = [c for c in api.calls if c[0] == "create"]
    assert created == [("create", "GryviaAIJob", "wf-1-prepare")]
    status = api.objects[("GryviaWorkflow", "ns", "wf")]["status"]
    assert status["phase"] == "Running" and status["lastRun"] == 1
    # The index still shows the workflow without status: the written one is used.
    await loop.one_pass()
    again_created = ("create", "GryviaAIJob", "wf-1-prepare")  # AlreadyExists, fine
    assert [c for c in api.calls if c[0] == "create"] == [*created, again_created]
    job = api.objects[("GryviaAIJob", "ns", "wf-1-prepare")]
    job["status"] = {"phase": "Succeeded"}
    jobs[("ns", "wf-1-prepare")] = [job]
    await loop.one_pass()
    assert ("create", "GryviaAIJob", "wf-1-train") in api.calls
    steps = api.objects[("GryviaWorkflow", "ns", "wf")]["status"]["runs"][0]["steps"]
    assert [s["state"] for s in steps] == ["Succeeded", "Pending", "Waiting"]
    writes = len([c for c in api.calls if c[0] == "patch/status"])
    jobs[("ns", "wf-1-train")] = [api.objects[("GryviaAIJob", "ns", "wf-1-train")]]
    await loop.one_pass()
    assert len([c for c in api.calls if c[0] == "patch/status"]) == writes, "nothing changed"


async def test_an_invalid_workflow_gets_phase_invalid() -> None:
    from typing import cast

    from gryvia_operator.controller.runtime import Runtime
    from gryvia_operator.controller.store import WORKFLOWS
    from gryvia_operator.handlers.workflow import controller
    from tests.unit.operator.fakeapi import FakeApi

    api = FakeApi()
    body = workflow(*PIPE).model_dump(mode="json", by_alias=True, exclude_none=True)
    body["spec"]["steps"][1]["dependsOn"] = ["nope"]
    api.put(body)
    rt = Runtime(api=cast(Any, api), clock=lambda: T0)
    rt.indices.attach({WORKFLOWS: {("ns", "wf"): [body]}})
    await controller(rt).one_pass()
    status = api.objects[("GryviaWorkflow", "ns", "wf")]["status"]
    assert status["phase"] == "Invalid"
    assert "spec.steps[1].dependsOn: no step named 'nope'" in status["message"]
    assert not [c for c in api.calls if c[0] == "create"]
