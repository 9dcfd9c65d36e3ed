"""The Kueue integration against a sandbox started with `--kueue` (real Kueue v0.17 controller
manager and webhooks) and the operator with `--enable-kueue`: a quota per GPU type, and gang
admission (a 4-node job starts all its pods together or none). Its own sandbox: Kueue's Job
webhook (failurePolicy Fail) must not sit in front of every other test's Jobs."""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import get_job, kubectl_json, wait_phase
from tests.support.manifests import sh_job
from tests.support.operator import OperatorProcess, apply_crds
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
TENANT = "vision"
NS = f"tenant-{TENANT}"


@pytest.fixture(scope="module")
def kueue_box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxHandle]:
    """A sandbox with Kueue (4 H100 and 2 A100-80G nodes of 8 GPUs), Gryvia's CRDs, the operator
    with the Kueue integration, and tenant `vision` with H100: 32 and A100-80G: 8."""
    from gryvia_cli.sandbox import binaries, cluster

    home = tmp_path_factory.mktemp("kueue-sandbox-home")
    previous = os.environ.get("GRYVIA_SANDBOX_HOME")
    os.environ["GRYVIA_SANDBOX_HOME"] = str(home)
    name = f"k{os.getpid()}-{uuid.uuid4().hex[:4]}"
    proc: OperatorProcess | None = None
    try:
        box = cluster.up(name, "4xH100:8,2xA100-80G:8", with_kueue=True)
        handle = SandboxHandle(name, box.kubeconfig, binaries.path_of("kubectl"), box.audit_log)
        apply_crds(handle.kubectl, handle.kubeconfig)
        log = tmp_path_factory.mktemp("kueue-operator") / "operator.log"
        proc = OperatorProcess(handle.kubeconfig, log, extra=("--enable-kueue",))
        proc.start()
        handle.apply(
            {
                "apiVersion": "gryvia.io/v1alpha1",
                "kind": "GryviaQuota",
                "metadata": {"name": TENANT},
                "spec": {
                    "team": TENANT,
                    "namespaces": [NS],
                    "gpuQuota": {"maxGPUs": 48, "perType": {"H100": 32, "A100-80G": 8}},
                },
            },
            {
                "apiVersion": "gryvia.io/v1alpha1",
                "kind": "GryviaTenant",
                "metadata": {"name": TENANT},
                "spec": {"deletionPolicy": "Delete"},
            },
        )
        wait_for(
            lambda: (
                handle.kubectl_run("get", "localqueue", "-n", NS, "gryvia", check=False).returncode
                == 0
            ),
            timeout=60,
            what="the tenant's LocalQueue",
        )
        yield handle
    finally:
        if proc is not None:
            proc.stop()
        cluster.down(name)
        if previous is None:
            os.environ.pop("GRYVIA_SANDBOX_HOME", None)
        else:
            os.environ["GRYVIA_SANDBOX_HOME"] = previous


def _job(name: str, gpu_type: str, nodes: int, script: str = "sleep 600") -> dict[str, Any]:
    spec: dict[str, Any] = {"workloadKind": "job", "priority": 50}
    if nodes > 1:
        spec["distributed"] = {"enabled": True, "nodes": nodes, "backend": "nccl"}
    return sh_job(name, gpus=8, gpu_type=gpu_type, script=script, namespace=NS, **spec)


def _cond(job: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in job.get("status", {}).get("conditions") or [] if c["type"] == kind), {})


def _pods(box: SandboxHandle, job: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubectl_json(
        box, "get", "pods", "-n", NS, "-l", f"gryvia.io/job={job}"
    )["items"]
    return items


def test_cluster_queue_has_a_flavor_per_gpu_type(kueue_box: SandboxHandle) -> None:
    cq = kubectl_json(kueue_box, "get", "clusterqueue", f"gryvia-{TENANT}")
    flavors = cq["spec"]["resourceGroups"][0]["flavors"]
    nominal = {f["name"]: str(f["resources"][0]["nominalQuota"]) for f in flavors}
    assert nominal == {"gryvia-a100-80g": "8", "gryvia-h100": "32", "gryvia-default": "0"}
    assert cq["spec"]["cohortName"] == "gryvia"


def test_per_type_quota_holds_the_a100_job_while_an_h100_job_runs(
    kueue_box: SandboxHandle,
) -> None:
    kueue_box.apply(_job("a100-16", "A100-80G", 2), _job("h100-16", "H100", 2))
    running = wait_phase(kueue_box, NS, "h100-16", "Running", timeout=120)
    assert "gryvia-h100" in _cond(running, "KueueAdmitted")["message"]

    def held() -> dict[str, Any] | None:
        job = get_job(kueue_box, NS, "a100-16")
        message = job.get("status", {}).get("message", "")
        return job if "gryvia-a100-80g" in message else None

    job = wait_for(held, timeout=60, what="a100-16 held by Kueue naming its flavor")
    assert job["status"]["phase"] == "Queued"
    assert job["status"]["message"].startswith("Queued by Kueue: ")
    assert "8" in job["status"]["message"]  # the flavor's limit
    assert _cond(job, "KueueAdmitted")["status"] == "False"
    assert job["status"]["pending"]["kind"] == "Kueue"
    assert _pods(kueue_box, "a100-16") == []
    for name in ("a100-16", "h100-16"):
        kueue_box.kubectl_run("delete", "gryviaaijob", "-n", NS, name, "--wait=true")


def test_gang_admission_starts_all_pods_together(kueue_box: SandboxHandle) -> None:
    kueue_box.apply(_job("holder", "H100", 1))
    wait_phase(kueue_box, NS, "holder", "Running", timeout=120)
    kueue_box.apply(_job("gang", "H100", 4))
    wait_for(
        lambda: (
            get_job(kueue_box, NS, "gang")
            .get("status", {})
            .get("message", "")
            .startswith("Queued by Kueue")
        ),
        timeout=60,
        what="gang queued by Kueue",
    )
    assert _pods(kueue_box, "gang") == []  # 3 H100 nodes are free, yet no pod runs
    kueue_box.kubectl_run("delete", "gryviaaijob", "-n", NS, "holder", "--wait=true")

    def all_running() -> list[dict[str, Any]] | None:
        pods = _pods(kueue_box, "gang")
        started = [p for p in pods if p.get("status", {}).get("phase") == "Running"]
        return started if len(started) == 4 else None

    pods = wait_for(all_running, timeout=120, what="all 4 gang pods Running")
    starts = [dt.datetime.fromisoformat(p["status"]["startTime"]) for p in pods]
    assert (max(starts) - min(starts)).total_seconds() <= 10
    wait_phase(kueue_box, NS, "gang", "Running", timeout=60)
    kueue_box.kubectl_run("delete", "gryviaaijob", "-n", NS, "gang", "--wait=false")
