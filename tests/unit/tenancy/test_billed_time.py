"""Billed running time: from the first app container's start to the last one's finish."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.reconcile.metering import (
    RunWindow,
    billed_start,
    build_usage_record,
    run_window,
)
from gryvia_operator.reconcile.views import PodView

T0 = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)


def _at(seconds: float) -> str:
    return (T0 + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ended(start: float, end: float, code: int = 0) -> dict[str, Any]:
    return {"terminated": {"exitCode": code, "startedAt": _at(start), "finishedAt": _at(end)}}


def _pod(*containers: dict[str, Any], init: dict[str, Any] | None = None) -> PodView:
    status: dict[str, Any] = {"phase": "Running", "containerStatuses": list(containers)}
    if init is not None:
        status["initContainerStatuses"] = [{"name": "init", "state": init}]
    return PodView.from_pod(
        {
            "metadata": {"name": "p", "namespace": "tenant-a", "labels": {"gryvia.io/job": "j"}},
            "spec": {"containers": [{"name": c["name"]} for c in containers]},
            "status": status,
        }
    )


def _ctr(state: dict[str, Any], last: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": f"c{id(state)}", "state": state}
    if last is not None:
        out["lastState"] = last
    return out


def _job(phase: str = "Running", gpus: int = 2, completed: float | None = None) -> GryviaAIJob:
    status: dict[str, Any] = {"phase": phase, "startTime": _at(0)}
    if completed is not None:
        status["completionTime"] = _at(completed)
    return GryviaAIJob.model_validate(
        {
            "metadata": {"name": "j", "namespace": "tenant-a", "uid": "u-1"},
            "spec": {"type": "training", "gpus": gpus, "gpuType": "H100", "image": "img"},
            "status": status,
        }
    )


def _seconds(record: dict[str, Any] | None) -> float:
    assert record is not None
    spec = record["spec"]
    return round(float(spec["gpuHours"]) * 3600 / spec["gpus"], 1)  # gpuHours has 6 decimals


def test_init_containers_and_waiting_are_not_billed() -> None:
    """The batch Job started at 0, the init container ran 0-30 s, the container 30-150 s."""
    pod = _pod(_ctr(_ended(30, 150)), init=_ended(0, 30))
    assert pod.started_at == _at(30) and pod.finished_at == _at(150) and not pod.running
    record = build_usage_record(
        _job("Succeeded", completed=151),
        tenant="a",
        rate=None,
        gpu_type="H100",
        now=T0 + dt.timedelta(hours=1),
        window=run_window([pod]),
    )
    assert record is not None and record["spec"]["final"] is True
    assert record["spec"]["start"] == _at(30) and record["spec"]["end"] == _at(150)
    assert _seconds(record) == pytest.approx(120)


def test_a_container_not_started_yet_bills_nothing() -> None:
    waiting = _pod({"name": "c", "state": {"waiting": {"reason": "PodInitializing"}}})
    assert waiting.started_at == "" and not waiting.running
    assert billed_start(run_window([waiting]), None, T0) is None
    none = build_usage_record(
        _job(), tenant="a", rate=None, gpu_type="H100", now=T0, window=run_window([waiting])
    )
    assert none is None


def test_still_running_bills_up_to_now() -> None:
    pod = _pod(_ctr({"running": {"startedAt": _at(40)}}))
    assert pod.running
    now = T0 + dt.timedelta(seconds=100)
    record = build_usage_record(
        _job(), tenant="a", rate=None, gpu_type="H100", now=now, window=run_window([pod])
    )
    assert record is not None and record["spec"]["final"] is False
    assert _seconds(record) == pytest.approx(60)


def test_replicas_span_first_start_to_last_finish() -> None:
    pods = [_pod(_ctr(_ended(10, 70))), _pod(_ctr(_ended(25, 95)), _ctr(_ended(12, 90)))]
    window = run_window(pods)
    assert window == RunWindow(
        T0 + dt.timedelta(seconds=10), T0 + dt.timedelta(seconds=95), False, 2
    )
    record = build_usage_record(
        _job("Succeeded", completed=99),
        tenant="a",
        rate=None,
        gpu_type="H100",
        now=T0 + dt.timedelta(hours=1),
        window=window,
    )
    assert _seconds(record) == pytest.approx(85)


def test_restarts_count_from_the_first_start_and_the_recorded_start_is_kept() -> None:
    """lastState holds the previous run; a start recorded earlier (older restarts, a deleted
    pod) wins over what the pods still show."""
    restarted = _pod(_ctr({"running": {"startedAt": _at(80)}}, last=_ended(20, 75, code=1)))
    assert restarted.started_at == _at(20) and restarted.finished_at == _at(75)
    assert restarted.running
    window = run_window([restarted])
    assert billed_start(window, None, T0) == T0 + dt.timedelta(seconds=20)
    recorded = T0 + dt.timedelta(seconds=5)
    assert billed_start(window, recorded, T0) == recorded
    now = T0 + dt.timedelta(seconds=100)
    record = build_usage_record(
        _job(),
        tenant="a",
        rate=None,
        gpu_type="H100",
        now=now,
        window=window,
        recorded_start=recorded,
    )
    assert _seconds(record) == pytest.approx(95)


def test_without_pods_the_job_times_are_the_fallback() -> None:
    """Pods gone (deleted by hand, or the job deleted): the recorded start, else the batch
    Job's start; the end is completionTime."""
    job = _job("Failed", completed=50)
    record = build_usage_record(job, tenant="a", rate=None, gpu_type="H100", now=T0, window=None)
    assert _seconds(record) == pytest.approx(50)
    later = T0 + dt.timedelta(seconds=20)
    record = build_usage_record(
        job, tenant="a", rate=None, gpu_type="H100", now=T0, recorded_start=later
    )
    assert _seconds(record) == pytest.approx(30)
