"""Issue 44 acceptance, usage per user and project: in one tenant, jobs that two users submit
(kubectl `--as`, stamped by the admission webhook) in two projects (label gryvia.io/project);
their usage records carry user and project, `gryvia usage --group-by user|project` give the
sums of those records, and a spent `project` budget rejects the next job of that project only.

A SKU at 3600 USD per GPU-hour (1 USD per GPU-second) lets short jobs spend whole dollars.
"""

from __future__ import annotations

import json
import os
import uuid
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import kubectl_json, wait_phase
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
USERS = ("ada", "bob")


@pytest.fixture
def tenant(
    sandbox: SandboxHandle, live_operator: OperatorProcess, tenant_roles: None
) -> Iterator[str]:
    """A tenant with members ada and bob whose only SKU bills L40 at 3600 USD per GPU-hour."""
    name = f"u{uuid.uuid4().hex[:6]}"
    sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaGpuSku",
            "metadata": {"name": f"{name}-l40"},
            "spec": {"gpuType": "L40", "hourlyRate": 3600},
        },
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaTenant",
            "metadata": {"name": name},
            "spec": {
                "deletionPolicy": "Delete",
                "allowedSkus": [f"{name}-l40"],
                "members": [{"username": u, "role": "member"} for u in USERS],
            },
        },
    )
    ns = f"tenant-{name}"

    def may_create(user: str) -> bool:
        can = ("auth", "can-i", "create", "gryviaaijobs.gryvia.io", "-n", ns, "--as", user)
        return sandbox.kubectl_run(*can, check=False).stdout.strip() == "yes"

    wait_for(lambda: all(may_create(u) for u in USERS), what="the members' role bindings")
    yield name
    for kind, obj in (
        ("gryviabudget", f"{name}-llm"),
        ("gryviatenant", name),
        ("gryviagpusku", f"{name}-l40"),
    ):
        sandbox.kubectl_run("delete", kind, obj, "--wait=false", check=False)


def _submit(sandbox: SandboxHandle, ns: str, user: str, name: str, project: str, secs: int) -> None:
    job = sh_job(name, gpus=1, gpu_type="L40", script=f"sleep {secs}")
    job["metadata"]["labels"] = {"gryvia.io/project": project}
    sandbox.kubectl_run("create", "-n", ns, "-f", "-", "--as", user, input=json.dumps(job))


def _gryvia(sandbox: SandboxHandle, tmp: Path, *args: str) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env |= {"KUBECONFIG": str(sandbox.kubeconfig), "GRYVIA_CONFIG_HOME": str(tmp / "config")}
    done = run_gryvia(*args, "-o", "json", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _records(sandbox: SandboxHandle, ns: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubectl_json(sandbox, "get", "gryviausagerecords", "-n", ns)[
        "items"
    ]
    return items


@pytest.mark.slow
def test_usage_by_user_and_project_and_a_project_budget(
    sandbox: SandboxHandle, tenant: str, tmp_path: Path
) -> None:
    ns = f"tenant-{tenant}"
    runs = [("ada", "a-llm", "llm", 3), ("bob", "b-llm", "llm", 1), ("ada", "a-cv", "cv", 2)]
    for user, name, project, secs in runs:
        _submit(sandbox, ns, user, name, project, secs)
    for _, name, _, _ in runs:
        wait_phase(sandbox, ns, name, "Succeeded", timeout=180)

    def sealed() -> list[dict[str, Any]]:
        found = _records(sandbox, ns)
        return found if len(found) == 3 and all(r["spec"]["final"] for r in found) else []

    records = wait_for(sealed, timeout=90, what="three sealed usage records")
    by_user: dict[str, float] = defaultdict(float)
    by_project: dict[str, float] = defaultdict(float)
    for rec in records:
        spec = rec["spec"]
        assert spec["jobLabels"] == {"gryvia.io/project": spec["project"]}
        by_user[spec["user"]] += spec["cost"]
        by_project[spec["project"]] += spec["cost"]
    assert set(by_user) == set(USERS) and set(by_project) == {"llm", "cv"}

    for group, expected in (("user", by_user), ("project", by_project)):
        report = _gryvia(sandbox, tmp_path, "usage", "--tenant", tenant, "--group-by", group)
        got = {item[group]: item["cost"] for item in report["items"]}
        assert got == pytest.approx(dict(expected), abs=1e-4), group
        assert report["groupBy"] == group

    sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaBudget",
            "metadata": {"name": f"{tenant}-llm"},
            "spec": {
                "scope": {"type": "project", "name": "llm"},
                "period": {"type": "monthly"},
                "limits": {"costUSD": by_project["llm"] - 0.5},
                "enforcement": {"enabled": True, "action": "block"},
            },
        }
    )
    wait_for(
        lambda: (
            (kubectl_json(sandbox, "get", "gryviabudget", f"{tenant}-llm").get("status") or {}).get(
                "state"
            )
            == "blocked"
        ),
        timeout=90,
        what="the llm budget blocked",
    )
    _submit(sandbox, ns, "bob", "b-llm-2", "llm", 1)
    _submit(sandbox, ns, "bob", "b-cv-2", "cv", 1)
    rejected = wait_phase(sandbox, ns, "b-llm-2", "Rejected", timeout=90)
    assert f"budget {tenant}-llm is spent" in rejected["status"]["message"]
    wait_phase(sandbox, ns, "b-cv-2", "Succeeded", timeout=180)
