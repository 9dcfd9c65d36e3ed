"""Tenants, quotas, metering and billing through the CLI against the sandbox, operator
running: `tenant create|list|delete`, a metered job, `usage`, `invoice`, `quota`, `cost`."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import job_yaml
from tests.conftest import SandboxHandle
from tests.integration.cli.conftest import (
    Gryvia,
    kubectl_json,
    wait_for_final_record,
    wait_for_phase,
)
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

CENT = 0.01


def parsed(result: subprocess.CompletedProcess[str]) -> Any:
    """The JSON a `gryvia ... -o json` run printed, after checking it succeeded."""
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def kubectl_ok(sandbox: SandboxHandle, *args: str) -> bool:
    """True when `kubectl ARGS` succeeds."""
    return sandbox.kubectl_run(*args, check=False).returncode == 0


def wait_for_tenant_objects(sandbox: SandboxHandle, ns: str) -> dict[str, list[dict[str, Any]]]:
    """Wait until the operator made the tenant's ResourceQuota, LimitRange and RoleBindings;
    return them by kind."""

    def made() -> dict[str, list[dict[str, Any]]] | None:
        if not kubectl_ok(sandbox, "get", "namespace", ns):
            return None
        found = {
            kind: kubectl_json(sandbox, "get", kind, "-n", ns)["items"]
            for kind in ("resourcequota", "limitrange", "rolebinding")
        }
        return found if len(found["rolebinding"]) == 2 and all(found.values()) else None

    return wait_for(made, timeout=60, what=f"the objects of namespace {ns}")


@pytest.fixture
def team(sandbox: SandboxHandle, operator: OperatorProcess) -> Iterator[str]:
    """A fresh tenant name; its tenant, quota and namespace are removed after the test."""
    name = f"t{uuid.uuid4().hex[:6]}"
    yield name
    for args in (
        ("gryviatenant", name),
        ("gryviaquota", name),
        ("namespace", f"tenant-{name}"),
    ):
        sandbox.kubectl_run("delete", *args, "--ignore-not-found", "--wait=false", check=False)


def test_tenant_job_usage_invoice_quota_cost_and_delete(
    sandbox: SandboxHandle, gryvia: Gryvia, team: str, tmp_path: Path
) -> None:
    ns = f"tenant-{team}"
    created = gryvia(
        "tenant",
        "create",
        team,
        "--display-name",
        f"Team {team}",
        "--max-gpus",
        "16",
        "--member",
        f"{team}-dev:member",
        "--member",
        f"{team}-lead:admin",
    )
    assert created.returncode == 0, created.stderr
    assert f"its namespace is {ns}" in created.stderr
    stored = kubectl_json(sandbox, "get", "gryviatenant", team, "--show-managed-fields")
    managers = {m["manager"] for m in stored["metadata"]["managedFields"]}
    assert "gryvia-cli" in managers
    objects = wait_for_tenant_objects(sandbox, ns)
    assert objects["resourcequota"][0]["spec"]["hard"] == {"requests.nvidia.com/gpu": "16"}
    assert {b["metadata"]["name"] for b in objects["rolebinding"]} == {
        "gryvia-tenant-member",
        "gryvia-tenant-admin",
    }
    bad = gryvia("tenant", "create", "Not_Valid")
    assert bad.returncode == 2 and "lowercase letters, digits and '-'" in bad.stderr

    listed = parsed(gryvia("tenant", "list", "-o", "json"))
    mine = [i for i in listed["items"] if i["metadata"]["name"] == team]
    assert mine and mine[0]["spec"]["displayName"] == f"Team {team}"
    rows = [ln.split() for ln in gryvia("tenant", "list").stdout.splitlines()]
    assert [team, "Team", team, "16", "all", ns] in [
        [cell for cell in row if cell != "-" and cell not in ("healthy", "warning")] for row in rows
    ]

    sandbox.kubectl_run(
        "apply",
        "-f",
        str(
            _write(
                tmp_path / "quota.json",
                {
                    "apiVersion": "gryvia.io/v1alpha1",
                    "kind": "GryviaQuota",
                    "metadata": {"name": team},
                    "spec": {
                        "team": team,
                        "namespaces": [ns],
                        "gpuQuota": {"maxGPUs": 16},
                        "budget": {"monthlyBudget": 1000, "alertThreshold": 80},
                    },
                },
            )
        ),
    )
    job_file = tmp_path / "metered.yaml"
    job_file.write_text(
        job_yaml(
            "metered",
            gpus=8,
            gpu_type="A100-80G",
            image="none",
            command='["sh", "-c", "echo metered; sleep 3"]',
            extra="  timeout: 1h\n",
        )
    )
    submitted = gryvia("submit", "-f", str(job_file), "-n", ns)
    assert submitted.returncode == 0, submitted.stderr
    assert (
        "estimated cost: 32.00 USD/hour (8 GPUs x 4.00 USD per GPU-hour, SKU a100-80g)"
        in submitted.stderr
    )
    assert "estimated cost for its timeout (1h): 32.00 USD" in submitted.stderr

    done = wait_for_phase(sandbox, ns, "metered", "Succeeded")
    record = wait_for_final_record(sandbox, ns, done["metadata"]["uid"])["spec"]
    assert record["tenant"] == team and record["sku"] == "a100-80g" and record["rate"] == 4.0
    month = record["start"][:7]

    usage = parsed(gryvia("usage", "--tenant", team, "-o", "json"))
    assert [i["tenant"] for i in usage["items"]] == [team]
    assert abs(usage["total"]["cost"] - record["cost"]) < CENT
    assert abs(usage["total"]["gpuHours"] - record["gpuHours"]) < 1e-3
    assert usage["total"]["jobs"] == 1

    invoices = parsed(gryvia("invoice", "--tenant", team, "--month", month, "-o", "json"))
    (invoice,) = invoices["items"]
    assert invoice["number"] == f"INV-{team}-{month.replace('-', '')}"
    assert invoice["status"] == "estimate" and invoice["open"] is False
    assert abs(invoice["subtotal"] - record["cost"]) < CENT
    assert [(ln["sku"], ln["gpuType"], ln["jobs"]) for ln in invoice["lines"]] == [
        ("a100-80g", "A100-80G", 1)
    ]

    quota = parsed(gryvia("quota", team, "-o", "json"))
    assert [q["spec"]["team"] for q in quota["items"]] == [team]
    report = gryvia("quota", team, "--budget")
    assert report.returncode == 0, report.stderr
    assert f"Quota: {team}" in report.stdout and "Budget:" in report.stdout

    cost = gryvia("cost", team)
    assert cost.returncode == 0, cost.stderr
    assert team in cost.stdout and "1000.00 USD" in cost.stdout
    for period in ("day", "month"):
        spent = parsed(gryvia("cost", team, "--period", period, "-o", "json"))
        assert spent["period"] == period
        assert abs(spent["items"][0]["spent"] - record["cost"]) < CENT

    deleted = gryvia("tenant", "delete", team, "--yes")
    assert deleted.returncode == 0, deleted.stderr
    assert f"namespace {ns} is kept; its tenant labels are removed" in deleted.stderr

    def labels_removed() -> bool:
        labels = kubectl_json(sandbox, "get", "namespace", ns)["metadata"].get("labels") or {}
        return "gryvia.io/tenant" not in labels

    wait_for(labels_removed, timeout=60, what=f"tenant labels removed from {ns}")
    wait_for(
        lambda: not kubectl_ok(sandbox, "get", "gryviatenant", team),
        timeout=60,
        what=f"tenant {team} gone",
    )
    assert kubectl_ok(sandbox, "get", "namespace", ns)


def _write(path: Path, obj: dict[str, Any]) -> Path:
    path.write_text(json.dumps(obj))
    return path
