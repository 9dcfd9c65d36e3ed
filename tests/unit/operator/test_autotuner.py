"""GryviaAutoTuner: the model's checks and the pure reconcile (sampling from the seed, grid
enumeration, metric lines, parallelism, best trial, median and ASHA stopping)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from gryvia_operator.api.autotuner import EarlyStopping, GryviaAutoTuner
from gryvia_operator.reconcile.autotuner import (
    TrialJob,
    best_trial,
    parse_metrics,
    reconcile_tuner,
)
from gryvia_operator.reconcile.tunersearch import grid_size, sample, total_trials
from gryvia_operator.reconcile.tunerstop import asha_stop, median_stop

T0 = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)
SPACE = [
    {"name": "lr", "type": "logUniform", "min": 0.0001, "max": 0.1},
    {"name": "batch", "type": "choice", "values": ["32", "64", "128"]},
    {"name": "layers", "type": "int", "min": 2, "max": 8, "step": 2},
    {"name": "dropout", "type": "uniform", "min": 0.0, "max": 0.5},
]


def tuner(status: dict[str, Any] | None = None, **spec: Any) -> GryviaAutoTuner:
    body: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAutoTuner",
        "metadata": {"name": "sweep", "namespace": "ml", "uid": "u-1"},
        "spec": {
            "jobTemplate": {
                "type": "training",
                "image": "none",
                "gpus": 0,
                "command": ["sh", "-c", "train --lr $(parameters.lr) # $(trial.name)"],
            },
            "parameterSpace": SPACE,
            "objective": {"name": "acc"},
            "maxTrials": 6,
            "parallelism": 2,
            **spec,
        },
    }
    if status is not None:
        body["status"] = status
    return GryviaAutoTuner.model_validate(body)


# --- the model ---


def test_spec_problems_name_the_field_and_the_fix() -> None:
    with pytest.raises(ValidationError) as err:
        tuner(parameterSpace=[{"name": "lr", "type": "uniform", "min": 1}])
    assert "spec.parameterSpace[0]: a uniform range needs min and max" in str(err.value)
    with pytest.raises(ValidationError) as err:
        tuner(parameterSpace=[{"name": "lr", "type": "logUniform", "min": 0, "max": 1}])
    assert "logUniform range needs min > 0" in str(err.value)
    with pytest.raises(ValidationError) as err:
        tuner(
            jobTemplate={
                "type": "training",
                "image": "x",
                "gpus": 0,
                "command": ["$(parameters.nope)"],
            }
        )
    assert "unknown placeholder $(parameters.nope)" in str(err.value)
    with pytest.raises(ValidationError) as err:
        tuner(parameterSpace=[*SPACE, SPACE[0]])
    assert "names must be unique; lr repeated" in str(err.value)


# --- sampling ---


def test_random_sampling_is_reproducible_from_the_seed_and_in_range() -> None:
    spec = tuner(searchAlgorithm={"type": "random", "seed": 42}).spec
    first = [sample(spec, i) for i in range(20)]
    assert first == [sample(spec, i) for i in range(20)]
    other = tuner(searchAlgorithm={"type": "random", "seed": 43}).spec
    assert first != [sample(other, i) for i in range(20)]
    for params in first:
        assert 0.0001 <= float(params["lr"]) <= 0.1
        assert params["batch"] in {"32", "64", "128"}
        assert int(params["layers"]) in {2, 4, 6, 8}
        assert 0.0 <= float(params["dropout"]) <= 0.5
    assert len({p["lr"] for p in first}) == 20, "draws differ between trials"


def test_log_uniform_spreads_over_decades() -> None:
    spec = tuner(
        maxTrials=400,
        parameterSpace=[{"name": "lr", "type": "logUniform", "min": 0.0001, "max": 1}],
    ).spec
    decades = {math.floor(math.log10(float(sample(spec, i)["lr"]))) for i in range(400)}
    assert decades == {-4, -3, -2, -1}


def test_grid_enumerates_every_combination_in_product_order() -> None:
    spec = tuner(
        searchAlgorithm={"type": "grid"},
        jobTemplate={"type": "training", "image": "none", "gpus": 0, "command": ["true"]},
        maxTrials=100,
        parameterSpace=[
            {"name": "a", "type": "choice", "values": ["x", "y"]},
            {"name": "b", "type": "int", "min": 1, "max": 3},
            {"name": "c", "type": "uniform", "min": 0, "max": 1, "gridPoints": 2},
        ],
    ).spec
    assert grid_size(spec) == 12
    assert total_trials(spec) == 12
    combos = [sample(spec, i) for i in range(12)]
    assert combos[0] == {"a": "x", "b": "1", "c": "0"}
    assert combos[1] == {"a": "x", "b": "1", "c": "1"}
    assert combos[-1] == {"a": "y", "b": "3", "c": "1"}
    assert len({tuple(c.values()) for c in combos}) == 12
    with pytest.raises(IndexError):
        sample(spec, 12)


def test_grid_of_a_log_range_is_geometric() -> None:
    spec = tuner(
        searchAlgorithm={"type": "grid"},
        parameterSpace=[{"name": "lr", "type": "logUniform", "min": 0.001, "max": 0.1}],
    ).spec
    assert [sample(spec, i)["lr"] for i in range(3)] == ["0.001", "0.01", "0.1"]
    assert total_trials(spec) == 3, "maxTrials 6, but the grid has 3"


# --- metric lines ---


def test_parse_metrics_reads_steps_and_the_last_value() -> None:
    log = "\n".join(
        [
            "epoch 1",
            "GRYVIA_METRIC acc=0.5 loss=1.2 step=1",
            "GRYVIA_METRIC loss=0.9 step=2",
            "GRYVIA_METRIC acc=0.6 step=2\r",
            "GRYVIA_METRIC acc=nan step=3",
            "GRYVIA_METRIC acc=bad step=3",
            "  GRYVIA_METRIC acc=0.99 step=4",
            "GRYVIA_METRIC acc=0.7",
        ]
    )
    m = parse_metrics(log, "acc")
    assert m.reports == ((1, 0.5), (2, 0.6))
    assert m.last == 0.7
    assert parse_metrics(log, "loss").reports == ((1, 1.2), (2, 0.9))
    assert parse_metrics("nothing here", "acc").last is None


# --- early stopping ---

MEDIAN = EarlyStopping(algorithm="median", min_trials=2, start_step=1)


def test_median_stops_a_trial_below_the_median_of_completed_trials() -> None:
    completed = [((1, 0.8), (2, 0.9)), ((1, 0.6), (2, 0.7)), ((1, 0.7),)]
    assert median_stop([(1, 0.2)], completed, "maximize", MEDIAN) is not None
    assert median_stop([(1, 0.7)], completed, "maximize", MEDIAN) is None, "equal stays"
    # at step 2 the running averages are 0.85, 0.65, 0.7: median 0.7; best so far counts
    assert median_stop([(1, 0.75), (2, 0.1)], completed, "maximize", MEDIAN) is None
    assert median_stop([(1, 0.2)], completed, "minimize", MEDIAN) is None
    assert median_stop([(1, 0.9)], completed, "minimize", MEDIAN) is not None


def test_median_waits_for_min_trials_and_start_step() -> None:
    one = [((1, 0.8),)]
    assert median_stop([(1, 0.0)], one, "maximize", MEDIAN) is None
    late = EarlyStopping(algorithm="median", min_trials=1, start_step=3)
    assert median_stop([(1, 0.0), (2, 0.0)], one, "maximize", late) is None
    assert median_stop([], one, "maximize", MEDIAN) is None


ASHA = EarlyStopping(algorithm="asha", min_step=1, reduction_factor=3)


def test_asha_keeps_the_top_third_at_each_rung() -> None:
    others = [((1, 0.9),), ((1, 0.8),), ((1, 0.7),), ((1, 0.6),), ((1, 0.5),)]
    # 6 values at rung 0 (step 1): the top 2 stay
    assert asha_stop([(1, 0.85)], others, None, "maximize", ASHA) == (0, None)
    rung, why = asha_stop([(1, 0.75)], others, None, "maximize", ASHA)
    assert rung == 0 and why is not None and "top 2 of 6" in why
    # judged once per rung: not again at rung 0; judged at rung 1 (step 3) later
    assert asha_stop([(1, 0.1), (2, 0.1)], others, 0, "maximize", ASHA) == (0, None)
    rung, why = asha_stop([(1, 0.1), (3, 0.1)], [((3, 0.5),), ((3, 0.6),)], 0, "maximize", ASHA)
    assert rung == 1 and why is not None


def test_asha_keeps_the_first_trial_at_a_rung_and_minimizes() -> None:
    assert asha_stop([(1, 5.0)], [], None, "maximize", ASHA) == (0, None)
    assert asha_stop([(1, 0.1)], [((1, 0.9),)], None, "minimize", ASHA) == (0, None)
    assert asha_stop([(1, 0.9)], [((1, 0.1),)], None, "minimize", ASHA)[1] is not None


def test_best_trial_is_the_true_max_or_min() -> None:
    trials = [
        {"index": 0, "name": "t0", "value": 0.3},
        {"index": 1, "name": "t1"},
        {"index": 2, "name": "t2", "value": 0.9},
        {"index": 3, "name": "t3", "value": 0.9},
        {"index": 4, "name": "t4", "value": -1.0},
    ]
    assert best_trial(trials, "maximize")["index"] == 2  # type: ignore[index]
    assert best_trial(trials, "minimize")["index"] == 4  # type: ignore[index]
    assert best_trial([{"index": 0}], "maximize") is None


# --- the pass ---


def job(index: int, phase: str, completed: str = "") -> TrialJob:
    return TrialJob(name=f"sweep-t{index}", index=index, phase=phase, completed=completed)


def test_first_pass_creates_parallelism_trials_owned_and_labelled() -> None:
    plan = reconcile_tuner(tuner(), [], {}, T0)
    assert [j["metadata"]["name"] for j in plan.create] == ["sweep-t0", "sweep-t1"]
    body = plan.create[1]
    assert body["metadata"]["labels"] == {"gryvia.io/tuner": "sweep", "gryvia.io/tuner-trial": "1"}
    assert body["metadata"]["ownerReferences"][0]["kind"] == "GryviaAutoTuner"
    params = plan.status["trials"][1]["parameters"]
    assert params == sample(tuner().spec, 1)
    command = body["spec"]["command"][2]
    assert command == f"train --lr {params['lr']} # sweep-t1"
    env = {e["name"]: e["value"] for e in body["spec"]["env"]}
    assert env["GRYVIA_PARAM_LR"] == params["lr"] and env["GRYVIA_TRIAL_INDEX"] == "1"
    assert plan.status["phase"] == "Running" and plan.status["peakRunning"] == 2


def _advance(t: GryviaAutoTuner, jobs: list[TrialJob], logs: dict[str, str]) -> Any:
    plan = reconcile_tuner(t, jobs, logs, T0)
    return plan, tuner(status=plan.status)


def test_never_more_than_parallelism_trials_and_the_best_is_the_max() -> None:
    t = tuner(status=reconcile_tuner(tuner(), [], {}, T0).status)
    values = {0: 0.4, 1: 0.9, 2: 0.1, 3: 0.95, 4: 0.5, 5: 0.2}
    phases: dict[int, str] = {}
    for index in range(6):
        # every pass: the jobs created so far; one trial ends per pass
        phases = {i: phases.get(i, "Running") for i in range(len(t.status.trials or []))}  # type: ignore[union-attr]
        phases[index] = "Succeeded"
        logs = {f"sweep-t{index}": f"GRYVIA_METRIC acc={values[index]}"}
        jobs = [job(i, p) for i, p in phases.items()]
        plan, t = _advance(t, jobs, logs)
        running = [i for i, p in phases.items() if p != "Succeeded"]
        assert len(running) + len(plan.create) <= 2
        assert plan.status["running"] <= 2
    assert t.status is not None
    assert t.status.phase == "Succeeded"
    assert t.status.best is not None and t.status.best.index == 3 and t.status.best.value == 0.95
    assert t.status.peak_running == 2
    assert len(t.status.trials or []) == 6


def test_an_early_stopped_trial_still_counts_until_its_job_ends() -> None:
    es = {"algorithm": "median", "minTrials": 2, "startStep": 1}
    status = {
        "trialsCreated": 4,
        "trials": [
            {
                "index": i,
                "name": f"sweep-t{i}",
                "parameters": {},
                "state": "Succeeded",
                "value": 1.0,
                "reports": [{"step": 1, "value": 1.0}],
            }
            for i in range(3)
        ]
        + [{"index": 3, "name": "sweep-t3", "parameters": {}, "state": "Running"}],
    }
    t = tuner(status=status, earlyStopping=es, parallelism=1)
    jobs = [job(0, "Succeeded"), job(1, "Succeeded"), job(2, "Succeeded"), job(3, "Running")]
    plan = reconcile_tuner(t, jobs, {"sweep-t3": "GRYVIA_METRIC acc=0 step=1\n"}, T0)
    assert plan.stop == ["sweep-t3"]
    assert plan.create == [], "its job has not ended yet"
    stopped = plan.status["trials"][3]
    assert stopped["state"] == "EarlyStopped" and "median" in stopped["message"]
    t = tuner(status=plan.status, earlyStopping=es, parallelism=1)
    jobs[3] = job(3, "Cancelled", "2026-12-01T10:00:05Z")
    plan = reconcile_tuner(t, jobs, {}, T0)
    assert plan.status["trials"][3]["state"] == "EarlyStopped"
    assert plan.status["trials"][3]["completionTime"] == "2026-12-01T10:00:05Z"
    assert [j["metadata"]["name"] for j in plan.create] == ["sweep-t4"]


def test_failed_and_silent_trials_and_a_tuner_without_results() -> None:
    t = tuner(status=reconcile_tuner(tuner(maxTrials=2), [], {}, T0).status, maxTrials=2)
    jobs = [job(0, "Failed"), job(1, "Succeeded")]
    plan = reconcile_tuner(t, jobs, {"sweep-t1": "no metric here"}, T0)
    states = [x["state"] for x in plan.status["trials"]]
    assert states == ["Failed", "MetricsUnavailable"]
    assert plan.status["phase"] == "Failed"
    assert "no trial reported acc" in plan.status["message"]


# --- one pass of the handler over an in-memory API ---


async def test_a_handler_pass_reads_trial_logs_stops_a_poor_trial_and_writes_status() -> None:
    from typing import cast

    from gryvia_operator.controller.runtime import Runtime
    from gryvia_operator.controller.store import AIJOBS, AUTOTUNERS, PODS_BY_JOB
    from gryvia_operator.handlers.autotuner import controller
    from gryvia_operator.reconcile.views import PodView
    from tests.unit.operator.fakeapi import FakeApi

    api = FakeApi()
    rt = Runtime(api=cast(Any, api), clock=lambda: T0, post_event=lambda _o, _e: None)
    es = {"algorithm": "median", "minTrials": 2, "startStep": 1}
    done = {"state": "Succeeded", "value": 1.5, "reports": [{"step": 1, "value": 1.0}]}
    body = tuner(
        status={
            "trialsCreated": 3,
            "trials": [
                {"index": 0, "name": "sweep-t0", "parameters": {"x": "1"}, **done},
                {"index": 1, "name": "sweep-t1", "parameters": {"x": "1"}, **done},
                {"index": 2, "name": "sweep-t2", "parameters": {"x": "1"}, "state": "Running"},
            ],
        },
        earlyStopping=es,
        parallelism=1,
    ).model_dump(by_alias=True, exclude_none=True, mode="json")
    api.put(body)

    def trial(i: int, phase: str) -> dict[str, Any]:
        labels = {"gryvia.io/tuner": "sweep", "gryvia.io/tuner-trial": str(i)}
        meta = {"name": f"sweep-t{i}", "namespace": "ml", "labels": labels}
        return {"kind": "GryviaAIJob", "metadata": meta, "status": {"phase": phase}}

    jobs = [trial(0, "Succeeded"), trial(1, "Succeeded"), trial(2, "Running")]
    pod = PodView(namespace="ml", name="sweep-t2-abc", phase="Running", job="sweep-t2")
    api.logs[("ml", "sweep-t2-abc")] = (
        "GRYVIA_METRIC score=9 step=0\nGRYVIA_METRIC acc=0.2 step=1\n"
    )
    rt.indices.attach(
        {
            AUTOTUNERS: {("ml", "sweep"): [body]},
            AIJOBS: {("ml", j["metadata"]["name"]): [j] for j in jobs},
            PODS_BY_JOB: {("ml", "sweep-t2"): [pod]},
        }
    )
    loop = controller(rt)
    await loop.one_pass()
    cancelled = api.objects[("GryviaAIJob", "ml", "sweep-t2")]
    assert cancelled["metadata"]["annotations"]["gryvia.io/cancel"] == "true"
    status = api.objects[("GryviaAutoTuner", "ml", "sweep")]["status"]
    assert status["trials"][2]["state"] == "EarlyStopped"
    assert status["trials"][2]["value"] == 0.2
    assert status["running"] == 1, "the stopped trial counts until its job ends"
    assert not [c for c in api.calls if c[0] == "create"]
    assert status["best"]["index"] == 0 and status["best"]["value"] == 1.5
