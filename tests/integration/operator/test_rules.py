"""The contract's two shared rules end to end on the sandbox, operator running: a job is metered
to the tenant of its namespace whatever its team label says, and a GPU type is matched however
it is spelt."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.names import (
    API_VERSION,
    LABEL_GPU,
    LABEL_JOB,
    LABEL_TEAM,
    usage_record_name,
)
from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, kubectl_json, wait_phase
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _tenant(name: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "GryviaTenant",
        "metadata": {"name": name},
        "spec": {"displayName": f"Team {name}", "deletionPolicy": "Delete"},
    }


def _usage(sandbox: SandboxHandle, tenant: str) -> dict[str, Any]:
    status = kubectl_json(sandbox, "get", "gryviatenant", tenant).get("status") or {}
    usage: dict[str, Any] = status.get("currentUsage") or {}
    return usage


@pytest.fixture
def tenants(sandbox: SandboxHandle, live_operator: OperatorProcess) -> Iterator[tuple[str, str]]:
    """Two tenants (`a…`, `b…`) with their namespaces, deleted after the test."""
    suffix = uuid.uuid4().hex[:6]
    a, b = f"a{suffix}", f"b{suffix}"
    sandbox.apply(_tenant(a), _tenant(b))
    for name in (a, b):
        ns = tenant_namespace(name)
        wait_for(
            lambda ns=ns: sandbox.kubectl_run("get", "ns", ns, check=False).returncode == 0,
            what=f"namespace {ns}",
        )
    yield a, b
    for name in (a, b):
        sandbox.kubectl_run("delete", "gryviatenant", name, "--wait=false", check=False)


def test_job_in_a_tenant_namespace_is_metered_to_that_tenant_not_its_team_label(
    sandbox: SandboxHandle, tenants: tuple[str, str]
) -> None:
    a, b = tenants
    ns = tenant_namespace(a)
    job = make_job("labelled").image("none").gpus(1).gpu_type("L40")
    manifest = job.command("sh", "-c", "sleep 15").manifest()
    manifest["metadata"]["labels"] = {LABEL_TEAM: b}
    create(sandbox, ns, manifest)
    running = wait_phase(sandbox, ns, "labelled", "Running")
    record_name = usage_record_name(running["metadata"]["uid"])

    def record() -> dict[str, Any] | None:
        found = sandbox.kubectl_run(
            "get", "gryviausagerecord", "-n", ns, record_name, "-o", "json", check=False
        )
        return json.loads(found.stdout) if found.returncode == 0 else None

    assert wait_for(record, what="open usage record")["spec"]["tenant"] == a
    usage = wait_for(
        lambda: (u := _usage(sandbox, a)).get("runningJobs") == 1 and u, what="a's running job"
    )
    assert usage["usedGPUs"] == 1
    assert _usage(sandbox, b).get("runningJobs", 0) == 0

    wait_phase(sandbox, ns, "labelled", "Succeeded", timeout=90)
    sealed = wait_for(
        lambda: (r := record()) is not None and r["spec"]["final"] and r, what="sealed usage record"
    )
    assert sealed["spec"]["tenant"] == a
    hours = round(sealed["spec"]["gpuHours"], 4)
    assert hours > 0
    billed = wait_for(
        lambda: (u := _usage(sandbox, a)).get("gpuHours") == hours and u,
        what="a's month-to-date GPU-hours",
    )
    assert billed["runningJobs"] == 0
    assert _usage(sandbox, b).get("gpuHours", 0) == 0


def test_lower_case_gpu_type_runs_on_an_h100_node(sandbox: SandboxHandle, namespace: str) -> None:
    job = make_job("lower").image("none").gpus(1).gpu_type("h100").command("sh", "-c", "echo ok")
    create(sandbox, namespace, job.manifest())
    done = wait_phase(sandbox, namespace, "lower", "Succeeded", "Failed")
    assert done["status"]["phase"] == "Succeeded", done["status"]
    pods = kubectl_json(sandbox, "get", "pods", "-n", namespace, "-l", f"{LABEL_JOB}=lower")
    [pod] = pods["items"]
    for name in (pod["spec"]["nodeName"], *done["status"]["nodesAllocated"]):
        node = kubectl_json(sandbox, "get", "node", name)
        assert node["metadata"]["labels"][LABEL_GPU] == "H100", name
