"""GryviaAIJob end to end on the sandbox: placement, children, env, status, cancel, cleanup."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import (
    create,
    get_job,
    kubectl_json,
    wait_phase,
)
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _job(name: str) -> Any:
    return make_job(name).image("none")


def test_distributed_cpu_job_runs_and_is_cleaned_up(sandbox: SandboxHandle, namespace: str) -> None:
    script = 'echo "rank=$RANK world=$WORLD_SIZE master=$MASTER_ADDR"'
    job = _job("dist").gpus(0).distributed(2, backend="gloo").command("sh", "-c", script)
    create(sandbox, namespace, job.manifest())
    done = wait_phase(sandbox, namespace, "dist", "Succeeded", "Failed")
    assert done["status"]["phase"] == "Succeeded", done["status"]
    assert done["status"]["completionTime"]
    batch = kubectl_json(sandbox, "get", "job", "-n", namespace, "dist")
    assert batch["spec"]["completionMode"] == "Indexed"
    assert (batch["spec"]["completions"], batch["status"]["succeeded"]) == (2, 2)
    kubectl_json(sandbox, "get", "service", "-n", namespace, "dist-headless")
    pods = kubectl_json(sandbox, "get", "pods", "-n", namespace, "-l", "gryvia.io/job=dist")[
        "items"
    ]
    master = f"dist-0.dist-headless.{namespace}.svc.cluster.local"
    logs = sorted(
        sandbox.kubectl_run("logs", "-n", namespace, p["metadata"]["name"]).stdout.strip()
        for p in pods
    )
    assert logs == [f"rank=0 world=2 master={master}", f"rank=1 world=2 master={master}"]

    def reasons() -> set[str]:
        events = kubectl_json(sandbox, "get", "events", "-n", namespace)["items"]
        return {e["reason"] for e in events if e["involvedObject"]["name"] == "dist"}

    # events are posted after the status write: wait for it rather than read once
    wait_for(lambda: "Succeeded" in reasons(), timeout=30, what="a Succeeded event on dist")

    sandbox.kubectl_run("delete", "gryviaaijob", "-n", namespace, "dist")

    def gone() -> bool:
        left = sandbox.kubectl_run(
            "get", "job,service,pods", "-n", namespace, "-l", "gryvia.io/job=dist", "-o", "name"
        ).stdout.strip()
        return not left

    wait_for(gone, timeout=60, what="children garbage-collected")


def test_h100_job_lands_on_an_h100_node(sandbox: SandboxHandle, namespace: str) -> None:
    job = _job("big").gpus(8).gpu_type("H100").command("sh", "-c", "echo ok")
    create(sandbox, namespace, job.manifest())
    done = wait_phase(sandbox, namespace, "big", "Succeeded", "Failed")
    assert done["status"]["phase"] == "Succeeded"
    assert done["status"]["nodesAllocated"][0].startswith("gpu-h100-")
    pod = kubectl_json(sandbox, "get", "pods", "-n", namespace, "-l", "gryvia.io/job=big")["items"][
        0
    ]
    assert pod["spec"]["nodeName"].startswith("gpu-h100-")
    assert pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "8"


def test_missing_gpu_type_waits_until_a_node_arrives(
    sandbox: SandboxHandle, namespace: str
) -> None:
    from gryvia_cli.sandbox import cluster

    job = _job("t4").gpus(4).gpu_type("T4").command("sh", "-c", "echo ok")
    create(sandbox, namespace, job.manifest())
    pending = wait_phase(sandbox, namespace, "t4", "Pending")
    message = pending["status"]["message"]
    assert message.startswith(
        'no nodes meet the job requirements (gpuType="T4", gpus=4, network=""'
    )
    assert "nodes evaluated); best: " in message
    scheduled = next(c for c in pending["status"]["conditions"] if c["type"] == "Scheduled")
    assert (scheduled["status"], scheduled["reason"]) == ("False", "SchedulingFailed")
    assert os.environ.get("GRYVIA_SANDBOX_HOME")
    added = cluster.add_nodes(sandbox.name, "1xT4:4")
    done = wait_phase(sandbox, namespace, "t4", "Succeeded", "Failed", timeout=60)
    assert done["status"]["phase"] == "Succeeded"
    assert done["status"]["nodesAllocated"] == added


def test_failing_job_reports_backoff_limit(sandbox: SandboxHandle, namespace: str) -> None:
    job = _job("boom").gpus(0).retry_limit(0).command("sh", "-c", "exit 1")
    create(sandbox, namespace, job.manifest())
    done = wait_phase(sandbox, namespace, "boom", "Failed", "Succeeded")
    status = done["status"]
    assert status["phase"] == "Failed"
    assert "BackoffLimitExceeded" in status["message"]
    assert status["retries"] == 1
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "Failed"


def test_cancel_by_annotation(sandbox: SandboxHandle, namespace: str) -> None:
    job = _job("long").gpus(0).command("sh", "-c", "sleep 600")
    create(sandbox, namespace, job.manifest())
    wait_phase(sandbox, namespace, "long", "Running")
    sandbox.kubectl_run("annotate", "gryviaaijob", "-n", namespace, "long", "gryvia.io/cancel=true")
    cancelled = wait_phase(sandbox, namespace, "long", "Cancelled")
    assert cancelled["status"]["message"] == "Cancelled by request (annotation gryvia.io/cancel)"

    def workload_gone() -> bool:
        out = sandbox.kubectl_run("get", "job", "-n", namespace, "long", check=False)
        return out.returncode != 0

    wait_for(workload_gone, timeout=30, what="workload deleted")
    # not recreated: a later change of the job triggers a reconcile, still nothing
    sandbox.kubectl_run("label", "gryviaaijob", "-n", namespace, "long", "touched=yes")
    wait_for(lambda: get_job(sandbox, namespace, "long")["metadata"]["labels"], what="label")
    assert sandbox.kubectl_run("get", "job", "-n", namespace, "long", check=False).returncode != 0
    kubectl_json(sandbox, "get", "service", "-n", namespace, "long-headless")


def test_hand_deleted_service_and_suspend_drift_are_put_back(
    sandbox: SandboxHandle, namespace: str
) -> None:
    job = _job("held").gpus(0).suspend().command("sh", "-c", "echo ok")
    create(sandbox, namespace, job.manifest())
    held = wait_phase(sandbox, namespace, "held", "Scheduling")
    assert held["status"]["message"] == "Job is suspended (waiting to be admitted)"
    sandbox.kubectl_run("delete", "service", "-n", namespace, "held-headless")
    wait_for(
        lambda: (
            sandbox.kubectl_run(
                "get", "service", "-n", namespace, "held-headless", check=False
            ).returncode
            == 0
        ),
        timeout=30,
        what="Service recreated",
    )
    sandbox.kubectl_run(
        "patch", "job", "-n", namespace, "held", "--type=merge", "-p", '{"spec":{"suspend":false}}'
    )

    def suspended_again() -> bool:
        return bool(
            kubectl_json(sandbox, "get", "job", "-n", namespace, "held")["spec"].get("suspend")
        )

    wait_for(suspended_again, timeout=30, what="suspend put back")
    sandbox.kubectl_run(
        "patch",
        "gryviaaijob",
        "-n",
        namespace,
        "held",
        "--type=merge",
        "-p",
        '{"spec":{"suspend":false}}',
    )
    assert wait_phase(sandbox, namespace, "held", "Succeeded")["status"]["phase"] == "Succeeded"
