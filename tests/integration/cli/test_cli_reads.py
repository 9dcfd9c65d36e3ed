"""Read commands against the sandbox with objects created directly (no operator needed)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.cli.conftest import REPO, Gryvia, apply, kubectl_json, patch_status

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def job(name: str, gpus: int = 8, gpu_type: str = "H100", **spec: Any) -> dict[str, Any]:
    builder = make_job(name).gpus(gpus).gpu_type(gpu_type).command("sleep", "600")
    return builder.set(**{"suspend": True, **spec}).manifest()


def test_list_get_and_status_of_jobs(
    sandbox: SandboxHandle, namespace: str, gryvia: Gryvia
) -> None:
    apply(sandbox, namespace, job("alpha"), job("beta", 4, "L40"))
    patch_status(sandbox, namespace, "beta", {"phase": "Failed", "message": "BackoffLimitExceeded"})
    listed = gryvia("list", "jobs", "-n", namespace, "-o", "json")
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert data["kind"] == "GryviaAIJobList"
    assert sorted(i["metadata"]["name"] for i in data["items"]) == ["alpha", "beta"]
    table = gryvia("list", "jobs", "-n", namespace)
    rows = {line.split()[0]: line.split() for line in table.stdout.splitlines()[1:]}
    assert rows["beta"][2:6] == ["training", "4", "L40", "Failed"]  # after NAME and USER
    every = gryvia("ls", "jobs", "-A", "-o", "yaml")
    assert every.returncode == 0 and f"namespace: {namespace}" in every.stdout
    got = json.loads(gryvia("get", "job", "beta", "-n", namespace, "-o", "json").stdout)
    assert got["status"]["phase"] == "Failed"
    status = gryvia("status", "beta", "-n", namespace)
    assert status.returncode == 0 and "Phase:       Failed" in status.stdout
    assert "Message:     BackoffLimitExceeded" in status.stdout
    snapshot = json.loads(gryvia("status", "beta", "-n", namespace, "-o", "json").stdout)
    assert snapshot["job"]["metadata"]["name"] == "beta" and snapshot["pods"] == []
    missing = gryvia("get", "job", "nope", "-n", namespace)
    assert missing.returncode == 1
    assert missing.stderr.splitlines() == [
        f'error: job "nope" not found in namespace "{namespace}"',
        f"hint: gryvia list jobs -n {namespace}",
    ]


def test_saved_namespace_is_the_default(
    sandbox: SandboxHandle, namespace: str, gryvia: Gryvia
) -> None:
    apply(sandbox, namespace, job("gamma"))
    assert gryvia("config", "set-namespace", namespace).returncode == 0
    shown = json.loads(gryvia("config", "-o", "json").stdout)
    assert shown["namespace"] == namespace and shown["server"].startswith("https://127.0.0.1:")
    assert gryvia("list", "jobs", "-o", "name").stdout == "gryviaaijob.gryvia.io/gamma\n"


def test_queue_explains_an_absent_gpu_type(
    sandbox: SandboxHandle, namespace: str, gryvia: Gryvia
) -> None:
    apply(sandbox, namespace, job("wants-b200", 8, "B200", suspend=False), job("held", 8, "H100"))
    result = gryvia("queue", "-n", namespace, "-o", "json")
    assert result.returncode == 0, result.stderr
    items = {i["name"]: i for i in json.loads(result.stdout)["items"]}
    assert 'no node has GPU type "B200"' in items["wants-b200"]["reason"]
    # "suspended ..." from the client, or the operator's Suspended blocker when it runs
    assert "suspend" in items["held"]["reason"]
    table = gryvia("queue", "-n", namespace).stdout
    assert "wants-b200" in table and 'no node has GPU type "B200"' in table


def _gpu_nodes(sandbox: SandboxHandle) -> dict[str, int]:
    nodes = kubectl_json(sandbox, "get", "nodes")["items"]
    return {
        n["metadata"]["name"]: int(n["status"]["allocatable"]["nvidia.com/gpu"])
        for n in nodes
        if "nvidia.com/gpu" in n["status"].get("allocatable", {})
    }


def test_capacity_totals_match_the_nodes(
    sandbox: SandboxHandle, namespace: str, gryvia: Gryvia
) -> None:
    nodes = _gpu_nodes(sandbox)
    result = gryvia("capacity", "-o", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["totals"]["total"] == sum(nodes.values())
    assert data["totals"]["nodes"] == len(nodes)
    assert sum(t["total"] for t in data["types"]) == sum(nodes.values())
    per_type = {t["gpuType"]: t["total"] for t in data["types"] if t["total"]}
    assert {"H100", "A100-80G", "L40"} <= set(per_type)
    apply(sandbox, namespace, job("b200-demand", 8, "B200", suspend=False))
    with_demand = json.loads(gryvia("capacity", "--gpu-type", "b200", "-o", "json").stdout)
    b200 = with_demand["types"][0]
    assert (
        b200["gpuType"] == "B200" and b200["pending"] >= 8 and b200["shortfall"] == b200["pending"]
    )
    assert "no node registers this type" in b200["notes"]
    table = gryvia("capacity", "-o", "wide")
    assert table.returncode == 0 and "━━━ Nodes ━━━" in table.stdout


def test_list_nodes_and_catalog(sandbox: SandboxHandle, gryvia: Gryvia) -> None:
    nodes = _gpu_nodes(sandbox)
    result = gryvia("list", "nodes", "-o", "wide")
    assert result.returncode == 0, result.stderr
    for name in nodes:
        assert name in result.stdout
    data = json.loads(gryvia("list", "nodes", "-o", "json").stdout)
    assert data["items"]
    sku = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaGpuSku",
        "metadata": {"name": "cli-test-h100"},
        "spec": {"gpuType": "H100", "hourlyRate": 8.5, "spotDiscount": 40},
    }
    apply(sandbox, "default", sku)
    try:
        out = gryvia("catalog").stdout
        assert "cli-test-h100" in out and "8.50 USD" in out and "40%" in out
        as_json = json.loads(gryvia("skus", "-o", "json").stdout)
        assert any(i["metadata"]["name"] == "cli-test-h100" for i in as_json["items"])
    finally:
        sandbox.kubectl_run("delete", "gryviagpusku", "cli-test-h100", check=False)


def test_logs_follow_stops_when_the_container_ends(
    sandbox: SandboxHandle, namespace: str, gryvia: Gryvia
) -> None:
    apply(sandbox, namespace, job("logger", 0, "", suspend=True))
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "logger-0-abcde",
            "labels": {"gryvia.io/job": "logger"},
            "annotations": {"batch.kubernetes.io/job-completion-index": "0"},
        },
        "spec": {
            "restartPolicy": "Never",
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": "trainer",
                    "image": "python:3.12-slim",
                    "command": ["sh", "-c", "for i in 1 2 3 4; do echo step $i; sleep 0.5; done"],
                }
            ],
        },
    }
    apply(sandbox, namespace, pod)
    started = time.monotonic()
    result = gryvia("logs", "logger", "-f", "-n", namespace, timeout=90)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["step 1", "step 2", "step 3", "step 4"]
    assert time.monotonic() - started < 60
    again = gryvia("logs", "logger", "-n", namespace, "--tail", "2", "--timestamps")
    lines = again.stdout.splitlines()
    assert len(lines) == 2 and lines[1].endswith("step 4") and lines[1][:4].isdigit()


def test_validate_and_dry_run_need_no_cluster(gryvia: Gryvia, tmp_path: Path) -> None:
    offline = {"KUBECONFIG": str(tmp_path / "none")}
    examples = sorted(str(p) for p in (REPO / "examples").glob("*.yaml"))
    result = gryvia("validate", *examples, env=offline)
    assert result.returncode == 0, result.stderr
    dry = gryvia("submit", "-f", examples[0], "--dry-run", env=offline)
    assert dry.returncode == 0 and dry.stdout.startswith("---\n")


def test_slurm_views_of_jobs_and_nodes(
    sandbox: SandboxHandle, namespace: str, gryvia: Gryvia
) -> None:
    apply(sandbox, namespace, job("wants-b200", 8, "B200", suspend=False), job("held", 8, "H100"))
    apply(sandbox, namespace, job("finished", 1, "H100"))
    patch_status(
        sandbox, namespace, "finished",
        {"phase": "Succeeded", "startTime": "2026-01-01T00:00:00Z",
         "completionTime": "2026-01-01T01:00:00Z"},
    )  # fmt: skip
    queue = gryvia("squeue", "-A", namespace)  # the account: the tenant
    assert queue.returncode == 0, queue.stderr
    lines = queue.stdout.splitlines()
    assert lines[0].split() == [
        "JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)"
    ]  # fmt: skip
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert set(rows) == {"wants-b200", "held"}  # squeue leaves finished jobs out
    assert rows["wants-b200"][4:] == ["PD", "0:00", "1", "(ReqNodeNotAvail)"]
    assert rows["held"][-1] == "(JobHeldUser)"
    start = gryvia("squeue", "-A", namespace, "--start", "-h").stdout.splitlines()
    assert len(start) == 2 and all(" N/A " in line for line in start)
    acct = gryvia("sacct", "-u", namespace, "-S", "2025-12-01", "-o", "JobID%20,State,GPUHours")
    assert acct.returncode == 0, acct.stderr
    by_id = {line.split()[0]: line.split() for line in acct.stdout.splitlines()[2:]}
    assert by_id["finished"] == ["finished", "COMPLETED", "1.00"]
    nodes = gryvia("sinfo").stdout.splitlines()
    assert nodes[0].split() == ["PARTITION", "AVAIL", "TIMELIMIT", "NODES", "STATE", "NODELIST"]
    assert any(line.startswith("H100") for line in nodes[1:])
