"""Tenants, quotas, the catalog and metering against the sandbox, operator running."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import (
    create,
    get_job,
    kubectl_json,
    wait_phase,
)
from tests.support.operator import OperatorProcess, webhook_down
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


_job = sh_job


def _apply(sandbox: SandboxHandle, *objs: dict[str, Any]) -> None:
    sandbox.apply(*objs)


@pytest.fixture
def team(sandbox: SandboxHandle, live_operator: OperatorProcess) -> Iterator[str]:
    """A tenant `t-<id>` with namespace, 8-GPU quota on A100-80G and L40, deleted after."""
    name = f"t{uuid.uuid4().hex[:6]}"
    _apply(
        sandbox,
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaTenant",
            "metadata": {"name": name},
            "spec": {
                "displayName": f"Team {name}",
                "deletionPolicy": "Delete",
                "quotas": {"concurrentGPUs": 16},
                "members": [
                    {"username": f"{name}-viewer", "role": "viewer"},
                    {"username": f"{name}-dev", "role": "member"},
                ],
            },
        },
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaQuota",
            "metadata": {"name": name},
            "spec": {
                "team": name,
                "namespaces": [f"tenant-{name}"],
                "gpuQuota": {"maxGPUs": 8, "allowedGPUTypes": ["A100-80G", "L40"]},
                "budget": {"monthlyBudget": 1000, "alertThreshold": 80},
            },
        },
    )
    wait_for(
        lambda: sandbox.kubectl_run("get", "ns", f"tenant-{name}", check=False).returncode == 0,
        what="tenant namespace",
    )
    yield name
    sandbox.kubectl_run("delete", "gryviaquota", name, "--wait=false", check=False)
    sandbox.kubectl_run("delete", "gryviatenant", name, "--wait=false", check=False)


def test_tenant_gets_namespace_quota_limits_and_bindings(
    sandbox: SandboxHandle, team: str, tenant_roles: None
) -> None:
    ns = f"tenant-{team}"
    labels = kubectl_json(sandbox, "get", "ns", ns)["metadata"]["labels"]
    assert labels["gryvia.io/tenant"] == team
    quota = wait_for(
        lambda: kubectl_json(sandbox, "get", "resourcequota", "-n", ns)["items"],
        what="ResourceQuota",
    )
    assert quota[0]["spec"]["hard"] == {"requests.nvidia.com/gpu": "16"}
    wait_for(  # written after the ResourceQuota
        lambda: kubectl_json(sandbox, "get", "limitrange", "-n", ns)["items"], what="LimitRange"
    )
    expected = {"gryvia-tenant-viewer", "gryvia-tenant-member"}

    def bindings() -> set[str]:
        items = kubectl_json(sandbox, "get", "rolebinding", "-n", ns)["items"]
        return {b["metadata"]["name"] for b in items}

    wait_for(lambda: bindings() >= expected, what="the tenant's role bindings")
    assert bindings() == expected


def test_viewer_reads_own_tenant_only(
    sandbox: SandboxHandle, team: str, tenant_roles: None
) -> None:
    ns = f"tenant-{team}"
    wait_for(
        lambda: len(kubectl_json(sandbox, "get", "rolebinding", "-n", ns)["items"]) == 2,
        what="role bindings",
    )
    viewer = ("--as", f"{team}-viewer")
    assert sandbox.kubectl_run("get", "gaj", "-n", ns, *viewer, check=False).returncode == 0
    other = sandbox.kubectl_run("get", "gaj", "-n", "default", *viewer, check=False)
    assert other.returncode != 0 and "forbidden" in other.stderr.lower()
    submit = sandbox.apply(
        _job("nope", gpus=0), namespace=ns, verb="create", check=False, extra=viewer
    )
    assert submit.returncode != 0 and "forbidden" in submit.stderr.lower()
    secrets = sandbox.kubectl_run("get", "secrets", "-n", ns, "--as", f"{team}-dev", check=False)
    assert secrets.returncode != 0


def test_second_job_over_quota_waits_and_starts_by_itself(
    sandbox: SandboxHandle, team: str, tmp_path: Path
) -> None:
    ns = f"tenant-{team}"
    gate = tmp_path / "release-first"  # the first job holds its 8 GPUs until the test says so
    create(sandbox, ns, _job("first", script=f"while [ ! -e {gate} ]; do sleep 0.2; done"))
    wait_phase(sandbox, ns, "first", "Running", "Scheduling")
    create(sandbox, ns, _job("second", script="echo second done"))
    queued = wait_phase(sandbox, ns, "second", "Queued")
    assert queued["status"]["message"] == (
        f"waiting for quota: team {team} uses 8 of 8 GPUs, this job needs 8"
    )
    assert any(
        c["type"] == "Admitted" and c["status"] == "False" for c in queued["status"]["conditions"]
    )

    def usage_of_both() -> dict[str, Any] | None:
        """The quota's usage once one status counts both jobs: the first running, the second
        queued (an earlier status may still count the first as queued: it was, when written)."""
        usage = (kubectl_json(sandbox, "get", "gryviaquota", team).get("status") or {}).get(
            "currentUsage"
        ) or {}
        both = usage.get("runningJobs") == 1 and usage.get("queuedJobs") == 1
        return usage if both else None

    usage = wait_for(usage_of_both, what="a quota status counting both jobs")
    assert usage["allocatedGPUs"] == 8, usage  # the same status: the running job's 8 GPUs
    gate.touch()
    wait_phase(sandbox, ns, "first", "Succeeded", timeout=60)
    done = wait_phase(sandbox, ns, "second", "Succeeded", timeout=60)
    assert any(
        c["type"] == "Admitted" and c["status"] == "True" for c in done["status"]["conditions"]
    )


def test_disallowed_type_denied_by_webhook_and_rejected_without_it(
    sandbox: SandboxHandle, team: str, live_operator: OperatorProcess
) -> None:
    ns = f"tenant-{team}"
    denied = create(sandbox, ns, _job("h100", gpu_type="H100"), check=False)
    assert denied.returncode != 0
    assert 'GPU type "H100" is not allowed for this namespace (allowed: A100-80G, L40)' in (
        denied.stderr
    )
    with webhook_down(sandbox, live_operator):
        create(sandbox, ns, _job("h100b", gpu_type="H100"))
        job = wait_phase(sandbox, ns, "h100b", "Rejected")
        assert job["status"]["message"] == (
            f'GPU type "H100" is not allowed for team {team} (allowed: A100-80G, L40)'
        )
        assert not kubectl_json(
            sandbox, "get", "jobs.batch", "-n", ns, "--field-selector", "metadata.name=h100b"
        )["items"]


def test_a_job_cannot_be_patched_into_another_gpu_type_or_size(
    sandbox: SandboxHandle, team: str, live_operator: OperatorProcess
) -> None:
    ns = f"tenant-{team}"
    create(sandbox, ns, _job("shape", gpus=1, gpu_type="A100-80G", script="sleep 30"))
    for patch in ('{"spec": {"gpuType": "T4"}}', '{"spec": {"gpus": 8}}'):
        refused = sandbox.kubectl_run(
            "patch", "gaj", "shape", "-n", ns, "--type=merge", "-p", patch, check=False
        )
        assert refused.returncode != 0
        assert "cannot change once the job exists" in refused.stderr, refused.stderr
    with webhook_down(sandbox, live_operator):  # the CRD's own rule still holds
        refused = sandbox.kubectl_run(
            "patch",
            "gaj",
            "shape",
            "-n",
            ns,
            "--type=merge",
            "-p",
            '{"spec": {"gpuType": "T4"}}',
            check=False,
        )
        assert refused.returncode != 0 and "cannot change once the job exists" in refused.stderr
        assert get_job(sandbox, ns, "shape")["spec"]["gpuType"] == "A100-80G"
        labels = '{"metadata": {"labels": {"note": "ok"}}, "spec": {"priority": 5}}'
        sandbox.kubectl_run("patch", "gaj", "shape", "-n", ns, "--type=merge", "-p", labels)


def _record(sandbox: SandboxHandle, ns: str, job: dict[str, Any]) -> dict[str, Any]:
    return kubectl_json(
        sandbox, "get", "gryviausagerecord", "-n", ns, f"usage-{job['metadata']['uid']}"
    )


def _ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_metering_bills_running_time_once_across_a_restart(
    sandbox: SandboxHandle, team: str, live_operator: OperatorProcess
) -> None:
    ns = f"tenant-{team}"
    create(sandbox, ns, _job("metered", script="sleep 12"))
    running = wait_phase(sandbox, ns, "metered", "Running")
    open_record = wait_for(
        lambda: (
            sandbox.kubectl_run(
                "get",
                "gryviausagerecord",
                "-n",
                ns,
                f"usage-{running['metadata']['uid']}",
                check=False,
            ).returncode
            == 0
            and _record(sandbox, ns, running)
        ),
        what="open record",
    )
    assert open_record["spec"]["final"] is False
    live_operator.kill()  # SIGKILL while the job runs
    live_operator.start()
    done = wait_phase(sandbox, ns, "metered", "Succeeded", timeout=60)
    record = wait_for(
        lambda: (r := _record(sandbox, ns, done))["spec"]["final"] and r, what="sealed record"
    )
    records = kubectl_json(sandbox, "get", "gryviausagerecord", "-n", ns)["items"]
    assert [r["metadata"]["name"] for r in records] == [record["metadata"]["name"]]
    spec = record["spec"]
    assert spec["start"] == open_record["spec"]["start"]  # no gap, no second run
    # billed: the container's own running time (docs/billing.md), not the batch Job's
    (pod,) = kubectl_json(sandbox, "get", "pods", "-n", ns, "-l", "gryvia.io/job=metered")["items"]
    ran = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    hours = 8 * (_ts(ran["finishedAt"]) - _ts(ran["startedAt"])).total_seconds() / 3600
    assert spec["gpuHours"] == pytest.approx(hours, abs=1e-6)
    assert spec["rate"] == 4.0 and spec["sku"] == "a100-80g"
    assert abs(spec["cost"] - hours * 4.0) < 0.01
    assert spec["tenant"] == team
    edit = sandbox.kubectl_run(
        "patch",
        "gryviausagerecord",
        "-n",
        ns,
        record["metadata"]["name"],
        "--type=merge",
        "-p",
        '{"spec": {"cost": 0}}',
        check=False,
    )
    assert edit.returncode != 0 and "final" in edit.stderr
    status = wait_for(
        lambda: (
            (kubectl_json(sandbox, "get", "gryviatenant", team).get("status") or {})
            .get("currentUsage", {})
            .get("costUSD")
        ),
        timeout=120,  # one metering pass (5 s) after the seal, on a loaded CI machine
        what="tenant usage",
    )
    assert status == pytest.approx(round(spec["cost"], 2), abs=0.01)
    assert get_job(sandbox, ns, "metered")["status"]["phase"] == "Succeeded"
