"""What a new user saw wrong (issue 13, point 5), checked on the sandbox with the operator
running: where pods really run, what jobs cost, usage of a name that is no tenant, CPU-only
jobs, a full quota, the not-found and failure hints and the operator line of `gryvia status`.

The same items on fixed data: tests/unit/cli/test_newcomer_fixes.py.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import job_yaml, make_job
from tests.conftest import SandboxHandle
from tests.integration.cli.conftest import (
    CliCase,
    Gryvia,
    apply,
    kubectl_json,
    wait_for_final_record,
    wait_for_phase,
)
from tests.support.controlplane import ControlPlane
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

CENT = 0.01


def job_file(
    tmp_path: Path,
    name: str,
    *,
    gpus: int = 1,
    gpu_type: str | None = "H100",
    script: str | None = "echo hello; sleep 2",
) -> str:
    """A GryviaAIJob manifest file (no `command` when `script` is None)."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        job_yaml(name, gpus=gpus, gpu_type=gpu_type, image="none", command=None, script=script)
    )
    return str(path)


def parsed(result: subprocess.CompletedProcess[str]) -> Any:
    """The JSON a `gryvia ... -o json` run printed, after checking it succeeded."""
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def bound_node(sandbox: SandboxHandle, ns: str, job: str) -> str:
    """The node the scheduler bound the job's (single) pod to."""

    def bound() -> str | None:
        pods = kubectl_json(sandbox, "get", "pods", "-n", ns, "-l", f"gryvia.io/job={job}")
        names = [p["spec"].get("nodeName") for p in pods["items"]]
        return names[0] if len(names) == 1 and names[0] else None

    return wait_for(bound, timeout=120, interval=0.5, what=f"the pod of {job} bound")


def test_where_pods_run_what_jobs_cost_and_usage_outside_tenants(case: CliCase) -> None:
    sandbox, namespace, gryvia, tmp_path = case.sandbox, case.namespace, case.gryvia, case.tmp_path
    submitted = gryvia("submit", "-f", job_file(tmp_path, "priced"), "-n", namespace)
    assert submitted.returncode == 0, submitted.stderr
    node = bound_node(sandbox, namespace, "priced")
    assert node.startswith("gpu-h100-")
    done = wait_for_phase(sandbox, namespace, "priced", "Succeeded")
    record = wait_for_final_record(sandbox, namespace, done["metadata"]["uid"])["spec"]
    assert record["cost"] > 0 and record["tenant"] == namespace  # no tenant owns the namespace

    status = parsed(gryvia("status", "priced", "-n", namespace, "-o", "json"))
    assert status["nodes"] == [node]
    assert status["cost"]["metered"] is True
    assert abs(status["cost"]["soFar"] - record["cost"]) < CENT
    shown = gryvia("status", "priced", "-n", namespace)
    assert f"Nodes:       {node}\n" in shown.stdout
    assert f"Cost:        {record['cost']:.2f} {record['currency']} so far (metered" in shown.stdout

    wide = gryvia("list", "jobs", "-n", namespace, "-o", "wide").stdout.splitlines()
    header, row = wide[0].split(), wide[1].split()
    assert header[11:14] == ["NODES", "GPU%", "COST"]  # NAME USER TYPE GPUS GPU TYPE STATUS ...
    assert row[0] == "priced" and row[10] == node
    assert row[12:14] == [f"{record['cost']:.2f}", record["currency"]]

    by_job = parsed(gryvia("usage", "--group-by", "job", "-o", "json"))
    mine = [i for i in by_job["items"] if i["job"] == f"{namespace}/priced"]
    assert len(mine) == 1 and abs(mine[0]["cost"] - record["cost"]) < CENT

    by_tenant = parsed(gryvia("usage", "-o", "json"))
    tenants = {i["tenant"]: i.get("billable", True) for i in by_tenant["items"]}
    # under the name the tenant rule gives (its namespace), marked as never invoiced
    assert tenants[namespace] is False
    month = record["start"][:7]
    invoices = gryvia("invoice", "--month", month)
    assert invoices.returncode == 0, invoices.stderr
    assert f"INV-{namespace}" not in invoices.stdout
    assert f"is attributed to {namespace}, which is not a GryviaTenant" in invoices.stderr
    listed = parsed(gryvia("invoice", "--month", month, "-o", "json"))
    assert namespace not in {i["tenant"] for i in listed["items"]}


def test_cpu_only_jobs_run_on_cpu_nodes_and_a_gpu_type_with_zero_gpus_is_refused(
    case: CliCase,
) -> None:
    sandbox, namespace, gryvia, tmp_path = case.sandbox, case.namespace, case.gryvia, case.tmp_path
    submitted = gryvia(
        "submit", "-f", job_file(tmp_path, "cpu", gpus=0, gpu_type=None), "-n", namespace
    )
    assert submitted.returncode == 0, submitted.stderr
    node = bound_node(sandbox, namespace, "cpu")
    labels = kubectl_json(sandbox, "get", "node", node)["metadata"].get("labels") or {}
    assert "gryvia.io/gpu" not in labels and "nvidia.com/gpu.present" not in labels, node
    done = wait_for_phase(sandbox, namespace, "cpu", "Succeeded")
    record = wait_for_final_record(sandbox, namespace, done["metadata"]["uid"])["spec"]
    assert not record.get("gpuType") and record["gpus"] == 0 and record["cost"] == 0

    both = job_file(tmp_path, "both", gpus=0, gpu_type="H100")
    message = 'spec.gpuType "H100" needs GPUs, but spec.gpus is 0 (a CPU-only job)'
    refused = gryvia("submit", "-f", both, "-n", namespace)
    assert refused.returncode == 1 and message in refused.stderr
    offline = gryvia("validate", both)
    assert offline.returncode == 1 and message in offline.stdout + offline.stderr
    assert "both" not in gryvia("list", "jobs", "-n", namespace, "-o", "name").stdout


@pytest.fixture
def quota_team(sandbox: SandboxHandle) -> Iterator[str]:
    """A fresh team name; its GryviaQuota is removed after the test."""
    name = f"q{uuid.uuid4().hex[:6]}"
    yield name
    sandbox.kubectl_run("delete", "gryviaquota", name, "--ignore-not-found", check=False)


def test_a_quota_using_all_its_gpus_is_full(
    operator: OperatorProcess,
    sandbox: SandboxHandle,
    namespace: str,
    gryvia: Gryvia,
    tmp_path: Path,
    quota_team: str,
) -> None:
    quota = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaQuota",
        "metadata": {"name": quota_team},
        "spec": {"team": quota_team, "namespaces": [namespace], "gpuQuota": {"maxGPUs": 1}},
    }
    path = tmp_path / "quota.json"
    path.write_text(json.dumps(quota))
    sandbox.kubectl_run("apply", "-f", str(path))
    long = job_file(tmp_path, "holds", gpu_type="L40", script="sleep 600")
    assert gryvia("submit", "-f", long, "-n", namespace).returncode == 0
    wait_for_phase(sandbox, namespace, "holds", "Running")

    def full() -> dict[str, Any] | None:
        status = kubectl_json(sandbox, "get", "gryviaquota", quota_team).get("status") or {}
        return status if status.get("phase") == "Full" else None

    status = wait_for(full, timeout=150, interval=1.0, what=f"quota {quota_team} Full")
    assert status["currentUsage"]["allocatedGPUs"] == 1
    shown = gryvia("quota", quota_team)
    assert shown.returncode == 0, shown.stderr
    assert "1/1 (100%)" in shown.stdout and "Full" in shown.stdout
    assert "QuotaExceeded" not in shown.stdout
    row = next(
        ln.split() for ln in gryvia("list", "quotas").stdout.splitlines() if quota_team in ln
    )
    assert row[2] == "1/1" and row[-1] == "Full"
    assert gryvia("cancel", "holds", "-n", namespace, "--yes").returncode == 0


def test_not_found_names_the_namespace_and_failure_hints_name_the_job(case: CliCase) -> None:
    sandbox, namespace, gryvia, tmp_path = case.sandbox, case.namespace, case.gryvia, case.tmp_path
    parked = make_job("parked").image("none").suspend().manifest()
    apply(sandbox, namespace, parked)
    for args in (("status", "parked"), ("describe", "parked"), ("get", "job", "parked")):
        missed = gryvia(*args, "-n", "default")
        assert missed.returncode == 1, args
        assert 'job "parked" not found in namespace "default"' in missed.stderr
        assert f'job "parked" exists in namespace {namespace}: pass -n {namespace}' in (
            missed.stderr
        )
    described = gryvia("describe", "parked", "-n", namespace)
    assert described.returncode == 0 and "━━━ Job parked ━━━" in described.stdout

    no_command = job_file(tmp_path, "nocmd", script=None)
    failed = gryvia("submit", "-f", no_command, "--wait", "-n", namespace, timeout=300)
    assert failed.returncode == 1
    assert "gryvia logs nocmd --all-replicas; gryvia status nocmd" in failed.stderr
    logs = gryvia("logs", "nocmd", "-n", namespace)
    assert "set spec.command (and spec.args) in the GryviaAIJob" in logs.stdout + logs.stderr
    assert "spec.containers" not in logs.stdout + logs.stderr


def test_status_does_not_call_an_operator_without_ready_replicas_ok(
    operator: OperatorProcess,
    sandbox: SandboxHandle,
    namespace: str,
    gryvia: Gryvia,
    apiserver: ControlPlane,
) -> None:
    """The same Deployment with 0 ready replicas: OK on the sandbox, where the session's local
    operator answers (the line says why); Error on the session's bare API server, where no
    operator runs at all (no operator restart for this)."""
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "gryvia-operator"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "gryvia-operator"}},
            "template": {
                "metadata": {"labels": {"app": "gryvia-operator"}},
                "spec": {"containers": [{"name": "operator", "image": "none"}]},
            },
        },
    }
    apply(sandbox, namespace, deployment)
    report = json.loads(gryvia("status", "--platform-namespace", namespace, "-o", "json").stdout)
    line = next(c for c in report["components"] if c["name"] == "Operator")
    # the session's local operator answers, so the platform works: OK, and it says why
    assert line["state"] == "OK", line
    assert line["message"].startswith("local operator:")
    assert f"Deployment {namespace}/gryvia-operator Desired: 0, Ready: 0/0" in line["message"]

    bare = ("--kubeconfig", str(apiserver.kubeconfig))
    created = subprocess.run(
        [str(sandbox.kubectl), *bare, "apply", "-n", "default", "-f", "-"],
        input=json.dumps(deployment), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    try:
        result = gryvia(*bare, "status", "--platform-namespace", "default", "-o", "json")
        found = next(c for c in json.loads(result.stdout)["components"] if c["name"] == "Operator")
        assert (found["state"], result.returncode) == ("Error", 1), found
        assert found["message"].startswith("no ready operator replica: Deployment"), found
        assert "Deployment default/gryvia-operator Desired: 0, Ready: 0/0" in found["message"]
    finally:
        delete = ("delete", "deployment", "gryvia-operator", "-n", "default")
        subprocess.run([str(sandbox.kubectl), *bare, *delete], capture_output=True, timeout=60)
