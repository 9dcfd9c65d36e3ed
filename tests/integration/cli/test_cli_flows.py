"""Submit, follow, cancel, delete and queue with the operator running (a newcomer's session)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import job_yaml
from tests.integration.cli.conftest import REPO, CliCase, Gryvia, kubectl_json
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def manifest(tmp_path: Path, name: str, script: str, gpus: int = 2, gpu_type: str = "H100") -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        job_yaml(name, gpus=gpus, gpu_type=gpu_type, image="python:3.12-slim", script=script)
    )
    return str(path)


def pods_use_namespaces() -> bool:
    from gryvia_cli.sandbox.runner import can_use_namespaces

    return can_use_namespaces()


def test_newcomer_session_ddp_with_wait_and_logs(
    operator: OperatorProcess, namespace: str, gryvia: Gryvia
) -> None:
    assert pods_use_namespaces(), "pod DNS needs root and unshare (see README, the sandbox)"
    result = gryvia(
        "submit",
        "-f",
        str(REPO / "examples" / "train-ddp.yaml"),
        "--wait",
        "--logs",
        "-n",
        namespace,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "plan for train-ddp: 2 pods, CPU only" in result.stderr
    assert "rank 0 of 2 starting" in result.stdout
    assert "rank 1 of 2 joined from" in result.stdout
    assert "rank 0: all 2 ranks joined" in result.stdout
    assert "job train-ddp Succeeded" in result.stderr
    listed = json.loads(gryvia("list", "jobs", "-n", namespace, "-o", "json").stdout)
    assert [i["status"]["phase"] for i in listed["items"]] == ["Succeeded"]
    rank1 = gryvia("logs", "train-ddp", "--replica", "1", "-n", namespace)
    assert rank1.returncode == 0 and "rank 1: joined rank 0" in rank1.stdout
    status = json.loads(gryvia("status", "train-ddp", "-n", namespace, "-o", "json").stdout)
    assert len(status["pods"]) == 2 and status["job"]["status"]["phase"] == "Succeeded"


def test_single_gpu_example_and_failing_job(
    operator: OperatorProcess, namespace: str, gryvia: Gryvia, tmp_path: Path
) -> None:
    ok = gryvia(
        "submit",
        "-f",
        str(REPO / "examples" / "train-single-gpu.yaml"),
        "-w",
        "--logs",
        "-n",
        namespace,
        timeout=300,
    )
    assert ok.returncode == 0, ok.stderr
    assert "epoch 3/3" in ok.stdout and "nodes that could take a pod now: gpu-h100-" in ok.stderr
    bad = gryvia(
        "submit",
        "-f",
        manifest(tmp_path, "breaks", "echo oops; exit 3"),
        "--wait",
        "-n",
        namespace,
        timeout=300,
    )
    assert bad.returncode == 1
    assert (
        "job breaks Failed" in bad.stderr
        and "error: job(s) did not succeed: breaks Failed" in bad.stderr
    )


def test_cancel_a_running_job_then_delete_it(case: CliCase) -> None:
    sandbox, namespace, gryvia, tmp_path = case.sandbox, case.namespace, case.gryvia, case.tmp_path
    created = gryvia(
        "submit",
        "-f",
        manifest(tmp_path, "long", "echo started; sleep 600", gpus=4, gpu_type="A100-80G"),
        "-n",
        namespace,
    )
    assert created.returncode == 0, created.stderr
    assert created.stdout == "gryviaaijob.gryvia.io/long\n"

    def running() -> bool:
        out = json.loads(gryvia("get", "job", "long", "-n", namespace, "-o", "json").stdout)
        return out.get("status", {}).get("phase") == "Running"

    wait_for(running, timeout=120, what="job long Running")
    capacity = json.loads(gryvia("capacity", "--gpu-type", "A100-80G", "-o", "json").stdout)
    assert capacity["types"][0]["allocated"] >= 4
    follow = gryvia("logs", "long", "-n", namespace, "--tail", "-1")
    assert "started" in follow.stdout
    cancelled = gryvia("cancel", "long", "-n", namespace)  # stdin is not a TTY: no prompt
    assert cancelled.returncode == 0, cancelled.stderr
    annotations = kubectl_json(sandbox, "get", "gryviaaijob", "long", "-n", namespace)["metadata"][
        "annotations"
    ]
    assert annotations["gryvia.io/cancel"] == "true"

    def phase_cancelled() -> bool:
        out = json.loads(gryvia("get", "job", "long", "-n", namespace, "-o", "json").stdout)
        return out.get("status", {}).get("phase") == "Cancelled"

    wait_for(phase_cancelled, timeout=120, what="job long Cancelled")
    again = gryvia("cancel", "long", "--yes", "-n", namespace)
    assert again.returncode == 0 and "already Cancelled" in again.stderr
    deleted = gryvia("delete", "job", "long", "--yes", "-n", namespace)
    assert deleted.returncode == 0 and deleted.stdout == "gryviaaijob.gryvia.io/long\n"
    gone = gryvia("get", "job", "long", "-n", namespace)
    assert gone.returncode == 1 and "not found" in gone.stderr


def test_queue_and_status_with_the_operator(
    operator: OperatorProcess, namespace: str, gryvia: Gryvia, tmp_path: Path
) -> None:
    gryvia(
        "submit",
        "-f",
        manifest(tmp_path, "nowhere", "echo hi", gpus=8, gpu_type="B200"),
        "-n",
        namespace,
        "--force",  # B200: no node, no SKU: submit fails fast without it (exit 3)
    )

    def scheduling_failed() -> dict[str, object] | None:
        job = json.loads(gryvia("get", "job", "nowhere", "-n", namespace, "-o", "json").stdout)
        conds = {c["type"]: c for c in job.get("status", {}).get("conditions", [])}
        return conds.get("Scheduled")

    wait_for(scheduling_failed, timeout=60, what="the operator's Scheduled condition")
    queue = json.loads(gryvia("queue", "-n", namespace, "-o", "json").stdout)
    assert queue["items"][0]["name"] == "nowhere"
    assert 'no node has GPU type "B200"' in queue["items"][0]["reason"]
    described = gryvia("describe", "job", "nowhere", "-n", namespace)
    assert "SchedulingFailed" in described.stdout
    platform = gryvia("status")
    assert platform.returncode == 0, platform.stdout + platform.stderr
    assert "local operator: its webhook answers" in platform.stdout
    assert gryvia("status", "--brief").stdout == "OK\n"
    version = json.loads(gryvia("version", "-o", "json").stdout)
    assert version["server"]["gryviaApi"] == "gryvia.io/v1alpha1"
    invalid = gryvia("submit", "-f", manifest(tmp_path, "BAD", "echo", gpus=1), "-n", namespace)
    assert invalid.returncode == 1 and "metadata.name" in invalid.stderr
