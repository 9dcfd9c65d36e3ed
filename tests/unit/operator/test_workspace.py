"""GryviaWorkspace's pure reconcile: children, phases, idle and lifetime stops, metering."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from gryvia_operator.api.pricing import Rate
from gryvia_operator.api.workspace import ANNOTATION_SESSION_AT, GryviaWorkspace
from gryvia_operator.handlers.workspace import cpu_samples
from gryvia_operator.reconcile.workspace import (
    Observed,
    build_pod,
    build_pvc,
    decide,
    next_check,
    stop_due,
)
from gryvia_operator.reconcile.workspace_usage import build_workspace_usage

T0 = dt.datetime(2026, 12, 2, 10, 0, tzinfo=dt.UTC)


def stamp(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def make_ws(
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
) -> GryviaWorkspace:
    body: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaWorkspace",
        "metadata": {"name": "dev", "namespace": "ml", "uid": "u-1"},
        "spec": {"image": "busybox", **(spec or {})},
    }
    if annotations:
        body["metadata"]["annotations"] = annotations
    if status is not None:
        body["status"] = status
    return GryviaWorkspace.model_validate(body)


def pod(phase: str = "Running", deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "dev-0", "namespace": "ml"}
    if deleting:
        meta["deletionTimestamp"] = stamp(T0)
    return {"metadata": meta, "status": {"phase": phase}}


def running(started: dt.datetime, last: dt.datetime | None = None, runs: int = 1) -> dict[str, Any]:
    return {
        "phase": "Running",
        "startedAt": stamp(started),
        "lastActivityAt": stamp(last or started),
        "runs": runs,
    }


def test_pod_mounts_the_home_pvc_at_home_and_runs_sleep_by_default() -> None:
    ws = make_ws({"cpu": "2", "memory": "4Gi", "gpus": 1, "gpuType": "h100"})
    built = build_pod(ws)
    assert built["metadata"]["name"] == "dev-0"
    assert built["metadata"]["ownerReferences"][0]["kind"] == "GryviaWorkspace"
    ctr = built["spec"]["containers"][0]
    assert ctr["command"] == ["sleep", "infinity"]
    assert ctr["workingDir"] == "/home/gryvia"
    assert {"name": "HOME", "value": "/home/gryvia"} in ctr["env"]
    assert ctr["volumeMounts"] == [{"name": "home", "mountPath": "/home/gryvia"}]
    assert built["spec"]["volumes"][0]["persistentVolumeClaim"] == {"claimName": "dev-home"}
    assert ctr["resources"]["limits"] == {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}
    assert built["spec"]["nodeSelector"] == {"gryvia.io/gpu": "H100"}
    assert "affinity" not in built["spec"]


def test_cpu_workspace_prefers_cpu_nodes_and_pvc_takes_size_and_class() -> None:
    ws = make_ws({"storage": {"size": "1Gi", "storageClassName": "fast"}})
    assert "affinity" in build_pod(ws)["spec"]
    pvc = build_pvc(ws)
    assert pvc["metadata"]["name"] == "dev-home"
    assert pvc["spec"]["resources"]["requests"]["storage"] == "1Gi"
    assert pvc["spec"]["storageClassName"] == "fast"
    assert "storageClassName" not in build_pvc(make_ws())["spec"]


def test_new_workspace_creates_pvc_and_pod_and_is_pending() -> None:
    d = decide(make_ws(), Observed(), T0)
    assert (d.create_pvc, d.create_pod, d.delete_pod, d.stop) == (True, True, False, None)
    assert d.status["phase"] == "Pending"


def test_first_running_pass_starts_a_run() -> None:
    d = decide(make_ws(status={"phase": "Pending"}), Observed(pod=pod(), pvc=True), T0)
    assert d.status["phase"] == "Running"
    assert d.status["runs"] == 1
    assert d.status["startedAt"] == stamp(T0)
    assert not (d.create_pod or d.create_pvc or d.delete_pod)


def test_idle_timeout_stops_without_session_or_cpu() -> None:
    ws = make_ws({"idleTimeoutMinutes": 1}, running(T0))
    early = decide(ws, Observed(pod=pod(), pvc=True), T0 + dt.timedelta(seconds=59))
    assert early.stop is None and early.status["phase"] == "Running"
    late = decide(ws, Observed(pod=pod(), pvc=True), T0 + dt.timedelta(seconds=60))
    assert late.stop == "Idle" and late.delete_pod
    assert late.status["phase"] == "Stopped"
    assert late.status["stopReason"] == "Idle"


def test_a_session_heartbeat_keeps_it_running() -> None:
    beat = T0 + dt.timedelta(seconds=50)
    ws = make_ws({"idleTimeoutMinutes": 1}, running(T0), {ANNOTATION_SESSION_AT: stamp(beat)})
    d = decide(ws, Observed(pod=pod(), pvc=True), T0 + dt.timedelta(seconds=90))
    assert d.stop is None
    assert d.status["lastActivityAt"] == stamp(beat)
    assert decide(ws, Observed(pod=pod(), pvc=True), beat + dt.timedelta(minutes=1)).stop == "Idle"


def test_a_heartbeat_from_before_the_run_does_not_count() -> None:
    old = T0 - dt.timedelta(hours=1)
    ws = make_ws({"idleTimeoutMinutes": 1}, running(T0), {ANNOTATION_SESSION_AT: stamp(old)})
    d = decide(ws, Observed(pod=pod(), pvc=True), T0 + dt.timedelta(minutes=1))
    assert d.stop == "Idle"


@pytest.mark.parametrize(("cpu", "stops"), [(None, True), (100.0, True), (250.0, False)])
def test_cpu_above_the_threshold_is_activity(cpu: float | None, stops: bool) -> None:
    ws = make_ws({"idleTimeoutMinutes": 1}, running(T0))
    d = decide(ws, Observed(pod=pod(), pvc=True, cpu_millicores=cpu), T0 + dt.timedelta(minutes=2))
    assert (d.stop == "Idle") is stops


def test_max_lifetime_stops_even_when_busy() -> None:
    ws = make_ws({"maxLifetimeHours": 2}, running(T0))
    now = T0 + dt.timedelta(hours=2)
    d = decide(ws, Observed(pod=pod(), pvc=True, cpu_millicores=4000.0), now)
    assert d.stop == "MaxLifetime"
    assert stop_due(ws, T0, now, now - dt.timedelta(seconds=1)) is None


def test_user_stop_deletes_the_pod_only_and_start_clears_the_reason() -> None:
    ws = make_ws({"stopped": True}, running(T0))
    d = decide(ws, Observed(pod=pod(), pvc=True), T0 + dt.timedelta(minutes=5))
    assert d.delete_pod and not d.create_pvc and d.stop is None
    assert d.status["phase"] == "Stopped" and d.status["stopReason"] == "User"
    gone = decide(make_ws({"stopped": True}, d.status), Observed(pvc=True), T0)
    assert not gone.delete_pod and gone.status["stopReason"] == "User"
    idle = {**d.status, "stopReason": "Idle"}
    again = decide(make_ws({"stopped": False}, idle), Observed(pvc=True), T0)
    assert again.create_pod and again.status["stopReason"] is None
    assert again.status["phase"] == "Pending"


def test_second_run_counts_and_restarts_the_clock() -> None:
    stopped = {"phase": "Pending", "runs": 1, "startedAt": stamp(T0)}
    later = T0 + dt.timedelta(hours=3)
    d = decide(make_ws(status=stopped), Observed(pod=pod(), pvc=True), later)
    assert d.status["runs"] == 2 and d.status["startedAt"] == stamp(later)


def test_ended_pod_is_replaced_and_terminating_pod_awaited() -> None:
    failed = decide(make_ws(status=running(T0)), Observed(pod=pod("Failed"), pvc=True), T0)
    assert failed.delete_pod and failed.status["phase"] == "Pending"
    waiting = decide(make_ws(), Observed(pod=pod(deleting=True), pvc=True), T0)
    assert not (waiting.delete_pod or waiting.create_pod)


def test_next_check_is_the_earliest_due_stop() -> None:
    ws = make_ws({"idleTimeoutMinutes": 10, "maxLifetimeHours": 1})
    status = running(T0, T0 + dt.timedelta(minutes=55))
    assert next_check(ws, status, T0 + dt.timedelta(minutes=30)) == 30 * 60
    assert next_check(make_ws(), status, T0) is None
    assert next_check(ws, {"phase": "Stopped"}, T0) is None


def test_usage_record_per_run_open_then_sealed() -> None:
    ws = make_ws({"gpus": 2, "gpuType": "H100"})
    rate = Rate("h100", "H100", 3.0)
    live = build_workspace_usage(
        ws, running(T0, runs=2), tenant="t", rate=rate, now=T0 + dt.timedelta(hours=1)
    )
    assert live is not None
    assert live["metadata"]["name"] == "usage-u-1-1"
    assert live["metadata"]["labels"]["gryvia.io/workspace"] == "dev"
    assert (live["spec"]["gpuHours"], live["spec"]["cost"], live["spec"]["final"]) == (
        2.0,
        6.0,
        False,
    )
    done = {"phase": "Stopped", "runs": 1, "startedAt": stamp(T0)}
    done["stoppedAt"] = stamp(T0 + dt.timedelta(minutes=30))
    sealed = build_workspace_usage(ws, done, tenant="t", rate=None, now=T0 + dt.timedelta(days=1))
    assert sealed is not None
    assert sealed["metadata"]["name"] == "usage-u-1"
    assert sealed["spec"]["final"] and sealed["spec"]["gpuHours"] == 1.0
    assert sealed["spec"]["cost"] == 0.0
    assert build_workspace_usage(ws, {"phase": "Pending"}, tenant="t", rate=None, now=T0) is None


def test_cpu_samples_sum_containers_in_millicores() -> None:
    items = [
        {
            "metadata": {"namespace": "ml", "name": "dev-0"},
            "containers": [{"usage": {"cpu": "250m"}}, {"usage": {"cpu": "1"}}],
        }
    ]
    assert cpu_samples(items) == {("ml", "dev-0"): 1250.0}
