"""`gryvia status JOB` shows how busy the job's GPUs are, read from the sandbox's
dcgm-exporter pods through the API server's pod proxy: a busy loop reads busy on every GPU
of both replicas, a `sleep` reads idle; a real Prometheus scraping the exporters gives the
same, and once it is stopped the pods are read again; the operator's sampler writes the same
into the jobs' `status.metrics`, with each replica's recent activity; an XID injected on one
of the busy job's GPUs shows in `health gpu`."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest

from tests.builders import job_yaml
from tests.integration.cli.conftest import CliCase, kubectl_json
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _submit(case: CliCase, name: str, script: str, replicas: int) -> None:
    extra = f"  distributed:\n    enabled: true\n    nodes: {replicas}\n" if replicas > 1 else ""
    path = case.tmp_path / f"{name}.yaml"
    path.write_text(job_yaml(name, gpus=1, gpu_type="L40", script=script, extra=extra))
    done = case.gryvia("submit", "-f", str(path), "-n", case.namespace)
    assert done.returncode == 0, done.stderr


def _gpus(case: CliCase, name: str, count: int) -> list[dict[str, Any]] | None:
    """The job's GPU rows once every one of its `count` GPUs has an activity reading."""
    done = case.gryvia("status", name, "-n", case.namespace, "-o", "json")
    if done.returncode != 0:
        return None
    rows = json.loads(done.stdout).get("gpus") or []
    measured = [g for g in rows if g["activityPercent"] is not None]
    return rows if len(measured) == count else None


def test_status_shows_a_busy_job_busy_and_a_sleeping_job_idle(case: CliCase) -> None:
    # nice: the loop is always runnable (busy) yet leaves the CPUs to the other tests
    _submit(case, "spin", "nice -n 19 sh -c 'while :; do :; done'", replicas=2)
    _submit(case, "nap", "sleep 600", replicas=1)
    # the exporters sample every 5 s; a pod's first full window ends within 10 s of its start
    idle = wait_for(lambda: _gpus(case, "nap", 1), timeout=90, interval=1, what="nap's GPUs")

    def all_busy() -> list[dict[str, Any]] | None:
        rows = _gpus(case, "spin", 2)
        return rows if rows and all(g["activityPercent"] >= 80 for g in rows) else None

    busy = wait_for(all_busy, timeout=90, interval=1, what="spin's two GPUs at 80 % or more")
    assert sorted(g["replica"] for g in busy) == [0, 1]
    assert {g["field"] for g in busy} == {"DCGM_FI_PROF_GR_ENGINE_ACTIVE"}
    assert all(float(g["memoryUsedMiB"]) > 0 for g in busy)
    assert float(idle[0]["activityPercent"]) <= 5

    # the operator's sampler (every 5 s in tests) keeps the same in the jobs' status.metrics
    def sampled(name: str) -> dict[str, Any] | None:
        job = kubectl_json(case.sandbox, "get", "gryviaaijob", name, "-n", case.namespace)
        metrics = (job.get("status") or {}).get("metrics")
        return metrics if metrics and metrics["samples"] >= 2 else None

    spin = wait_for(lambda: sampled("spin"), timeout=60, what="two samples of spin")
    nap = wait_for(lambda: sampled("nap"), timeout=30, what="two samples of nap")
    assert spin["field"] == "DCGM_FI_PROF_GR_ENGINE_ACTIVE" and spin["gpus"] == 2, spin
    assert spin["meanActivityPercent"] >= 80 and spin["p95ActivityPercent"] >= 80, spin
    assert nap["meanActivityPercent"] <= 5 and nap["peakMemoryUsedBytes"] > 0, nap
    # `queue --running`: the idle one first, marked idle
    running = case.gryvia("queue", "--running", "-n", case.namespace, "-o", "json")
    items = json.loads(running.stdout)["items"]
    assert [(i["name"], i["idle"]) for i in items] == [("nap", True), ("spin", False)], items
    # and each replica's recent activity, the console's line over time
    rings = {r["replica"]: r["recentActivityPercent"] for r in spin.get("replicas") or []}
    assert sorted(rings) == [0, 1] and all(max(v) >= 80 for v in rings.values()), spin
    assert [r["replica"] for r in nap.get("replicas") or []] == [0], nap
    assert nap["replicas"][0]["recentActivityPercent"][-1] <= 5, nap

    shown = case.gryvia("status", "nap", "-n", case.namespace)
    assert shown.returncode == 0, shown.stderr
    assert "GPU use:     mean 0.0 % over 1 GPU(s)" in shown.stdout
    assert "ACTIVITY %" in shown.stdout

    _same_numbers_from_prometheus(case, busy, idle)

    # an XID 79 on the GPU replica 1 holds: `health gpu` names the node, GPU and job, exit 1
    node, gpu = busy[1]["node"], busy[1]["gpu"]
    box = {"GRYVIA_SANDBOX_HOME": os.environ["GRYVIA_SANDBOX_HOME"]}
    fault = ["sandbox", "gpu-fault", node, "--gpu", str(gpu), "--name", case.sandbox.name]
    assert case.gryvia(*fault, "--xid", "79", env=box).returncode == 0
    try:

        def reported() -> list[dict[str, Any]] | None:
            done = case.gryvia("health", "gpu", "-o", "json")
            faults = json.loads(done.stdout)["gpuFaults"] if done.stdout else []
            return faults if faults and done.returncode == 1 else None

        (found,) = wait_for(reported, timeout=30, interval=1, what="the XID in health gpu")
        assert (found["node"], found["gpu"], found["error"]) == (node, gpu, "XID 79")
        assert (found["namespace"], found["job"]) == (case.namespace, "spin")
        table = case.gryvia("health", "gpu", env={"NO_COLOR": "1"})
        assert table.returncode == 1
        assert f"{case.namespace}/spin" in table.stdout.split("GPU faults")[1]

        # the operator's sampler records it in the node's GryviaGpuNode
        def recorded() -> dict[str, Any] | None:
            items = kubectl_json(case.sandbox, "get", "gryviagpunodes")["items"]
            mine = next(i for i in items if i["spec"].get("nodeName") == node)
            gpus = (mine.get("status") or {}).get("gpuStatus") or []
            return next((g for g in gpus if g["index"] == gpu and g["health"] == "Failed"), None)

        assert wait_for(recorded, timeout=30, what="the node's gpuStatus")["xid"] == 79
    finally:
        assert case.gryvia(*fault, "--xid", "0", env=box).returncode == 0


def _same_numbers_from_prometheus(
    case: CliCase, busy: list[dict[str, Any]], idle: list[dict[str, Any]]
) -> None:
    """A real Prometheus scraping the exporters gives `status` the same GPUs and the same
    verdicts (and the operator's reader the same readings); stopped, `status` reads the
    exporter pods again and says why."""
    from gryvia_cli.sandbox import prometheus
    from gryvia_cli.sandbox.sandboxes import Sandbox
    from gryvia_operator.api.dcgm import activity
    from gryvia_operator.handlers.gpumetrics import query_prometheus

    box = Sandbox(case.sandbox.name)
    url = prometheus.start(box, lambda _: None)
    try:
        env = {"GRYVIA_PROMETHEUS_URL": url}

        def through(name: str, count: int) -> list[dict[str, Any]] | None:
            done = case.gryvia("status", name, "-n", case.namespace, "-o", "json", env=env)
            shown = json.loads(done.stdout) if done.returncode == 0 else {}
            rows = [g for g in shown.get("gpus") or [] if g["activityPercent"] is not None]
            from_prom = shown.get("gpusSource") == f"Prometheus {url}"
            return rows if from_prom and len(rows) == count else None

        spin = wait_for(lambda: through("spin", 2), timeout=60, what="spin's GPUs via Prometheus")
        nap = wait_for(lambda: through("nap", 1), timeout=30, what="nap's GPUs via Prometheus")
        where = {(g["replica"], g["node"], g["gpu"]) for g in busy}
        assert {(g["replica"], g["node"], g["gpu"]) for g in spin} == where
        assert all(g["activityPercent"] >= 80 for g in spin), spin
        assert (nap[0]["node"], nap[0]["gpu"]) == (idle[0]["node"], idle[0]["gpu"])
        assert nap[0]["activityPercent"] <= 5 and nap[0]["field"] == idle[0]["field"], nap
        # the operator's sampler reads the same GPUs from it (one query for all)
        found = asyncio.run(query_prometheus(url))
        mine = {(r.pod, r.gpu): activity(r) for r in found if r.namespace == case.namespace}
        assert len(mine) == 3 and all(a is not None for a in mine.values()), mine
        assert sorted(round(a[0]) >= 80 for a in mine.values() if a) == [False, True, True]
    finally:
        prometheus.stop(box)
    again = wait_for(lambda: _gpus(case, "spin", 2), timeout=30, what="spin's GPUs again")
    assert all(g["activityPercent"] >= 80 for g in again), again
    done = case.gryvia("status", "spin", "-n", case.namespace, "-o", "json", env=env)
    source = json.loads(done.stdout)["gpusSource"]
    assert source.startswith("the dcgm-exporter pods") and "did not answer" in source, source


def test_gpu_training_names_the_idle_replica_and_gpu_nccl_reads_the_logs(case: CliCase) -> None:
    """Replica 0 spins and prints step lines; replica 1 sleeps: `gpu training` names replica 1
    (rank 1) as the straggler. `gpu nccl` finds no NCCL lines (no NCCL runs here) and says
    how to get them."""
    script = (
        'if [ "$JOB_COMPLETION_INDEX" = 1 ]; then sleep 600; '
        "else i=0; while :; do i=$((i+1)); [ $((i % 20000)) = 0 ] && echo step $i; done; fi"
    )
    path = case.tmp_path / "lag.yaml"
    extra = "  distributed:\n    enabled: true\n    nodes: 2\n"
    path.write_text(
        job_yaml("lag", gpus=1, gpu_type=None, script=f"nice -n 19 sh -c '{script}'", extra=extra)
    )
    assert case.gryvia("submit", "-f", str(path), "-n", case.namespace).returncode == 0

    def named() -> dict[str, Any] | None:
        done = case.gryvia("gpu", "training", "--job", "lag", "-n", case.namespace, "-o", "json")
        data = json.loads(done.stdout) if done.returncode == 0 else {}
        return data if len(data.get("ranks") or []) == 2 and data.get("straggler") else None

    data = wait_for(named, timeout=90, interval=1, what="gpu training naming a straggler")
    assert data["straggler"]["replica"] == 1, data
    assert [r["rank"] for r in data["ranks"]] == [0, 1]
    shown = case.gryvia(
        "gpu", "training", "--job", "lag", "-n", case.namespace, env={"NO_COLOR": "1"}
    )
    assert shown.returncode == 0 and "Straggler:  " in shown.stdout and "replica 1" in shown.stdout

    nccl = case.gryvia("gpu", "nccl", "--job", "lag", "-n", case.namespace)
    assert nccl.returncode == 0 and "NCCL_DEBUG=INFO" in nccl.stdout, nccl.stdout + nccl.stderr
