"""Workspaces idle by GPU activity: the sampler's readings of a GPU workspace's pod, the time
its GPUs were last above `idleGPUActivityPercent`, and the idle stop judged by it (CPU only
when there are no GPU readings)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gryvia_operator.api.dcgm import FIELD_ENGINE_ACTIVE, FIELD_GPU_UTIL, GpuReading
from gryvia_operator.reconcile.workspace import Observed, decide
from gryvia_operator.reconcile.workspace_gpu import (
    WorkspaceGpu,
    advance,
    gpu_workspace_pods,
    record_pass,
    workspace_activity,
)
from tests.unit.operator.test_workspace import T0, make_ws, pod, running, stamp

MIN = dt.timedelta(minutes=1)


def _gpu(pod: str, gpu: int, value: float, namespace: str = "ml") -> GpuReading:
    return GpuReading("node", gpu, f"GPU-{gpu}", namespace=namespace, pod=pod,
                      values={FIELD_ENGINE_ACTIVE: value})  # fmt: skip


def _body(name: str, gpus: int, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ml"}, "spec": {"gpus": gpus, **spec}}


def test_a_workspaces_activity_is_the_mean_over_its_pods_gpus() -> None:
    readings = [
        _gpu("dev-0", 0, 0.5),
        _gpu("dev-0", 1, 0.1),
        _gpu("dev-0", 2, 0.0, namespace="other"),  # same pod name elsewhere: not it
        GpuReading("node", 3, "GPU-3", namespace="ml", pod="dev-0", values={FIELD_GPU_UTIL: 60}),
        _gpu("train-0", 4, 1.0),
    ]
    assert workspace_activity(readings, {("ml", "dev-0"): "dev"}) == {("ml", "dev"): 40.0}


def test_only_workspaces_with_gpus_are_mapped_with_their_threshold() -> None:
    bodies = [_body("dev", 1), _body("cpu", 0), _body("strict", 2, idleGPUActivityPercent=20)]
    assert gpu_workspace_pods(bodies) == {
        ("ml", "dev-0"): ("dev", 5.0),
        ("ml", "strict-0"): ("strict", 20.0),
    }


def test_the_last_active_time_moves_only_with_a_reading_above_the_threshold() -> None:
    busy = advance(None, 30.0, 5.0, T0)
    assert busy == WorkspaceGpu(T0, 30.0, T0)
    idle = advance(busy, 5.0, 5.0, T0 + MIN)  # at the threshold: idle
    assert idle == WorkspaceGpu(T0 + MIN, 5.0, T0)
    assert advance(None, 1.0, 5.0, T0).active_at is None
    assert idle.fresh(T0 + 2 * MIN, 30.0) and not idle.fresh(T0 + 3 * MIN, 30.0)


def test_a_pass_advances_the_read_workspaces_and_drops_those_that_are_gone() -> None:
    known = {("ml", "dev"): WorkspaceGpu(T0, 50.0, T0), ("ml", "gone"): WorkspaceGpu(T0, 1.0)}
    bodies = [_body("dev", 1), _body("strict", 1, idleGPUActivityPercent=50)]
    later = T0 + MIN
    out = record_pass(known, [_gpu("dev-0", 0, 0.02), _gpu("strict-0", 0, 0.4)], bodies, later)
    assert out == {
        ("ml", "dev"): WorkspaceGpu(later, 2.0, T0),  # idle now, active a minute ago
        ("ml", "strict"): WorkspaceGpu(later, 40.0, None),  # 40 % is under its 50 %
    }
    unread = record_pass(out, [], bodies, later + MIN)
    assert unread == out  # a pass that read nothing of them keeps what was known


def test_a_gpu_workspace_with_readings_is_active_only_by_its_gpus() -> None:
    ws = make_ws({"gpus": 1, "idleTimeoutMinutes": 10}, running(T0))
    now = T0 + 11 * MIN
    busy_cpu_idle_gpus = Observed(pod(), True, cpu_millicores=4000.0, gpu=WorkspaceGpu(now, 1.0))
    assert decide(ws, busy_cpu_idle_gpus, now).stop == "Idle"  # CPU does not count then
    recent = WorkspaceGpu(now, 1.0, active_at=T0 + 5 * MIN)
    kept = decide(ws, Observed(pod(), True, gpu=recent), now)
    assert kept.stop is None and kept.status["lastActivityAt"] == stamp(T0 + 5 * MIN)


def test_without_gpu_readings_a_gpu_workspace_falls_back_to_its_cpu() -> None:
    ws = make_ws({"gpus": 1, "idleTimeoutMinutes": 10}, running(T0))
    now = T0 + 11 * MIN
    assert decide(ws, Observed(pod(), True, cpu_millicores=4000.0), now).stop is None
    assert decide(ws, Observed(pod(), True, cpu_millicores=10.0), now).stop == "Idle"


def test_a_cpu_workspace_ignores_gpu_readings() -> None:
    ws = make_ws({"idleTimeoutMinutes": 10}, running(T0))
    now = T0 + 11 * MIN
    stray = WorkspaceGpu(now, 90.0, active_at=now)
    assert decide(ws, Observed(pod(), True, cpu_millicores=10.0, gpu=stray), now).stop == "Idle"


class _NoMetricsApi:
    """An API server that is never asked: a GPU workspace with readings needs no CPU read."""

    async def get_path(self, path: str) -> dict[str, Any]:
        raise AssertionError(f"read {path}")


def test_observe_passes_a_fresh_reading_and_reads_no_cpu_then() -> None:
    import asyncio
    from typing import cast

    from gryvia_operator.controller.runtime import Runtime
    from gryvia_operator.controller.store import WORKSPACE_PODS
    from gryvia_operator.handlers.workspace import WorkspaceSpec

    now = T0 + 11 * MIN
    rt = Runtime(api=cast(Any, _NoMetricsApi()), clock=lambda: now)
    rt.indices.attach({WORKSPACE_PODS: {("ml", "dev"): [pod()]}})
    ws = make_ws({"gpus": 1, "idleTimeoutMinutes": 10}, running(T0))
    reading = WorkspaceGpu(now - MIN, 1.0, T0)
    rt.workspace_gpus[("ml", "dev")] = reading
    seen = asyncio.run(WorkspaceSpec().observe(rt, ws))
    assert seen.gpu == reading and seen.cpu_millicores is None
    rt.workspace_gpus[("ml", "dev")] = WorkspaceGpu(now - 2 * MIN, 1.0, T0)  # > 3 passes of 30 s
    spec = WorkspaceSpec()
    spec.metrics_api = False  # no metrics API: CPU None without a request
    stale = asyncio.run(spec.observe(rt, ws))
    assert stale.gpu is None and stale.cpu_millicores is None
