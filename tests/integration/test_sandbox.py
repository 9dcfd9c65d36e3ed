"""The sandbox is a real cluster: real scheduler and Job controller, pods run as processes."""

from __future__ import annotations

import contextlib
import json
import subprocess
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SandboxHandle
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

H100 = "NVIDIA-H100-80GB-HBM3"


def _ns(sandbox: SandboxHandle) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    sandbox.kubectl_run("create", "namespace", name)
    return name


def _apply(sandbox: SandboxHandle, ns: str, *objs: dict[str, Any]) -> None:
    subprocess.run(
        [
            str(sandbox.kubectl),
            "--kubeconfig",
            str(sandbox.kubeconfig),
            "apply",
            "-n",
            ns,
            "-f",
            "-",
        ],
        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)}),
        text=True,
        check=True,
        capture_output=True,
    )


def _get(sandbox: SandboxHandle, ns: str, *what: str) -> Any:
    return json.loads(sandbox.kubectl_run("get", "-n", ns, *what, "-o", "json").stdout)


def _job(
    name: str,
    script: str,
    *,
    gpus: int = 0,
    completions: int = 1,
    backoff: int = 0,
    node_selector: dict[str, str] | None = None,
    subdomain: str = "",
    env: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "main",
        "image": "python:3.11",
        "command": ["sh", "-c", script],
        "env": env or [],
    }
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    pod_spec: dict[str, Any] = {"restartPolicy": "Never", "containers": [container]}
    if node_selector:
        pod_spec["nodeSelector"] = node_selector
    if subdomain:
        pod_spec["subdomain"] = subdomain
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "completionMode": "Indexed",
            "completions": completions,
            "parallelism": completions,
            "backoffLimit": backoff,
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec},
        },
    }


def _job_condition(sandbox: SandboxHandle, ns: str, name: str) -> str | None:
    conds = _get(sandbox, ns, "job", name).get("status", {}).get("conditions") or []
    done = [
        c["type"] for c in conds if c["type"] in ("Complete", "Failed") and c["status"] == "True"
    ]
    return done[0] if done else None


def test_gpu_nodes_carry_gfd_labels_and_capacity(sandbox: SandboxHandle) -> None:
    nodes = json.loads(sandbox.kubectl_run("get", "nodes", "-o", "json").stdout)["items"]
    by_name = {n["metadata"]["name"]: n for n in nodes}
    defaults = {
        "gpu-h100-0",
        "gpu-h100-1",
        "gpu-a100-80g-0",
        "gpu-a100-80g-1",
        "gpu-l40-0",
        "gpu-l40-1",
        "cpu-0",
    }
    assert defaults <= set(by_name)  # other tests may add nodes to the shared sandbox
    h100 = by_name["gpu-h100-0"]
    labels = h100["metadata"]["labels"]
    assert labels["nvidia.com/gpu.present"] == "true"
    assert labels["nvidia.com/gpu.product"] == H100
    assert labels["nvidia.com/gpu.count"] == "8"
    assert labels["feature.node.kubernetes.io/rdma.capable"] == "true"
    assert labels["nvidia.com/cuda.driver.major"].isdigit()
    assert h100["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    ready = {c["type"]: c["status"] for c in h100["status"]["conditions"]}
    assert ready["Ready"] == "True"
    assert "nvidia.com/gpu" not in by_name["cpu-0"]["status"]["allocatable"]
    table = sandbox.kubectl_run("get", "nodes", "-L", "nvidia.com/gpu.product").stdout
    assert H100 in table and "NVIDIA-L40" in table


def test_gpu_job_lands_on_h100_and_logs(sandbox: SandboxHandle) -> None:
    ns = _ns(sandbox)
    _apply(
        sandbox,
        ns,
        _job(
            "hello",
            "echo hello from $JOB_COMPLETION_INDEX",
            gpus=8,
            node_selector={"nvidia.com/gpu.product": H100},
        ),
    )
    assert wait_for(lambda: _job_condition(sandbox, ns, "hello"), what="job end") == "Complete"
    pod = _get(sandbox, ns, "pods", "-l", "job-name=hello")["items"][0]
    assert pod["spec"]["nodeName"].startswith("gpu-h100-")
    assert pod["status"]["phase"] == "Succeeded"
    logs = sandbox.kubectl_run("logs", "-n", ns, pod["metadata"]["name"]).stdout
    assert logs.strip() == "hello from 0"


def test_too_many_gpus_stays_pending_with_scheduler_event(sandbox: SandboxHandle) -> None:
    ns = _ns(sandbox)
    _apply(sandbox, ns, _job("huge", "echo never", gpus=16))

    def event() -> str | None:
        events = _get(sandbox, ns, "events", "--field-selector", "reason=FailedScheduling")
        msgs = [e["message"] for e in events["items"]]
        return next((m for m in msgs if "Insufficient nvidia.com/gpu" in m), None)

    assert wait_for(event, what="FailedScheduling event")
    pod = _get(sandbox, ns, "pods", "-l", "job-name=huge")["items"][0]
    assert pod["status"]["phase"] == "Pending"
    assert not pod["spec"].get("nodeName")


RENDEZVOUS = textwrap.dedent("""
    import os, socket, sys, time
    rank = int(os.environ["JOB_COMPLETION_INDEX"])
    addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    if rank == 0:
        srv = socket.create_server(("0.0.0.0", port))
        srv.settimeout(60)
        conn, _ = srv.accept()
        print("rank 0 got:", conn.recv(100).decode(), flush=True)
        conn.sendall(b"welcome")
    else:
        for _ in range(300):
            try:
                conn = socket.create_connection((addr, port), timeout=2)
                break
            except OSError:
                time.sleep(0.1)
        else:
            sys.exit("rank 1 never reached rank 0 at " + addr)
        conn.sendall(b"hello from rank 1")
        print("rank 1 got:", conn.recv(100).decode(), "via", addr, flush=True)
""")


def test_indexed_job_rendezvous_through_pod_dns(sandbox: SandboxHandle) -> None:
    ns = _ns(sandbox)
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "rdzv-headless"},
        "spec": {
            "clusterIP": "None",
            "selector": {"app": "rdzv"},
            "publishNotReadyAddresses": True,
            "ports": [{"name": "c10d", "port": 29500}],
        },
    }
    env = [
        {"name": "MASTER_ADDR", "value": f"rdzv-0.rdzv-headless.{ns}.svc.cluster.local"},
        {"name": "MASTER_PORT", "value": "29517"},
    ]
    script = f"exec python3 -c '{RENDEZVOUS}'"
    _apply(
        sandbox,
        ns,
        service,
        _job("rdzv", script, completions=2, subdomain="rdzv-headless", env=env),
    )
    assert wait_for(lambda: _job_condition(sandbox, ns, "rdzv"), what="job end") == "Complete"
    pods = _get(sandbox, ns, "pods", "-l", "job-name=rdzv")["items"]
    assert sorted(p["status"]["phase"] for p in pods) == ["Succeeded", "Succeeded"]
    logs = {
        p["metadata"]["annotations"][
            "batch.kubernetes.io/job-completion-index"
        ]: sandbox.kubectl_run("logs", "-n", ns, p["metadata"]["name"]).stdout
        for p in pods
    }
    assert "rank 0 got: hello from rank 1" in logs["0"]
    assert "rank 1 got: welcome via rdzv-0.rdzv-headless" in logs["1"]


def test_exit_code_fails_pod_and_backoff_limit_is_honoured(sandbox: SandboxHandle) -> None:
    ns = _ns(sandbox)
    _apply(sandbox, ns, _job("fails", "echo trying; exit 3", backoff=1))
    assert wait_for(lambda: _job_condition(sandbox, ns, "fails"), what="job end") == "Failed"
    job = _get(sandbox, ns, "job", "fails")
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "BackoffLimitExceeded"
    pods = _get(sandbox, ns, "pods", "-l", "job-name=fails")["items"]
    assert len(pods) == 2  # the first try and one retry: backoffLimit 1
    for pod in pods:
        assert pod["status"]["phase"] == "Failed"
        term = pod["status"]["containerStatuses"][0]["state"]["terminated"]
        assert term["exitCode"] == 3


def test_env_resolution_and_working_dir(sandbox: SandboxHandle) -> None:
    ns = _ns(sandbox)
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cfg"},
        "data": {"lr": "0.001"},
    }
    env = [
        {"name": "A", "value": "alpha"},
        {"name": "B", "value": "$(A)-beta"},
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
        {"name": "LR", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "lr"}}},
    ]
    job = _job("envs", 'echo "$B $NODE $NS $IP $APP $LR"; pwd', env=env)
    job["spec"]["template"]["spec"]["containers"][0]["workingDir"] = "/workspace/run"
    _apply(sandbox, ns, cm, job)
    assert wait_for(lambda: _job_condition(sandbox, ns, "envs"), what="job end") == "Complete"
    pod = _get(sandbox, ns, "pods", "-l", "job-name=envs")["items"][0]
    out = sandbox.kubectl_run("logs", "-n", ns, pod["metadata"]["name"]).stdout.splitlines()
    assert out[0] == (
        f"alpha-beta {pod['spec']['nodeName']} {ns} {pod['status']['podIP']} envs 0.001"
    )
    assert out[1].endswith("/root/workspace/run")


def test_a_missing_configmap_keeps_the_container_waiting_until_it_exists(
    sandbox: SandboxHandle,
) -> None:
    """As the kubelet does: CreateContainerConfigError while the ConfigMap is missing, then
    the container starts once it is created (the pod does not fail)."""
    ns = _ns(sandbox)
    env = [{"name": "LR", "valueFrom": {"configMapKeyRef": {"name": "late", "key": "lr"}}}]
    _apply(sandbox, ns, _job("late", 'echo "lr=$LR"', env=env))

    def waiting_reason() -> str | None:
        pods = _get(sandbox, ns, "pods", "-l", "job-name=late")["items"]
        for status in (pods[0].get("status") or {}).get("containerStatuses") or [] if pods else []:
            return str((status.get("state") or {}).get("waiting", {}).get("reason") or "")
        return None

    reason = wait_for(
        lambda: waiting_reason() == "CreateContainerConfigError", what="the config error"
    )
    assert reason
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late"}}
    _apply(sandbox, ns, {**cm, "data": {"lr": "0.5"}})
    assert wait_for(lambda: _job_condition(sandbox, ns, "late"), what="job end") == "Complete"
    pod = _get(sandbox, ns, "pods", "-l", "job-name=late")["items"][0]
    out = sandbox.kubectl_run("logs", "-n", ns, pod["metadata"]["name"]).stdout
    assert out.strip() == "lr=0.5"


def test_deleting_a_pod_kills_its_process(sandbox: SandboxHandle) -> None:
    ns = _ns(sandbox)
    token = uuid.uuid4().hex
    _apply(
        sandbox,
        ns,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "sleeper"},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "busybox",
                        "command": ["sleep", "300"],
                        "env": [{"name": "TOKEN", "value": token}],
                    }
                ]
            },
        },
    )

    def running() -> bool:
        return _get(sandbox, ns, "pod", "sleeper")["status"].get("phase") == "Running"

    def processes() -> list[Path]:
        found = []
        for environ in Path("/proc").glob("[0-9]*/environ"):
            with contextlib.suppress(OSError):
                if token.encode() in environ.read_bytes():
                    found.append(environ.parent)
        return found

    wait_for(running, what="pod Running")
    assert wait_for(processes, what="the pod's process")
    sandbox.kubectl_run("delete", "pod", "-n", ns, "sleeper", "--wait=true", "--timeout=30s")
    wait_for(lambda: not processes(), timeout=15, what="process gone")
