"""Issue 41 acceptance: `gryvia health storage` exits 1 while the sandbox's provisioner is
stopped and 0 once it is back, through the operator's probe of a `local-path` backend (a real
claim bound by the real provisioner, or not)."""

from __future__ import annotations

import json
import os
import signal
import uuid
from typing import Any

import pytest

from gryvia_cli.sandbox import cluster, storage
from tests.conftest import SandboxHandle
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _health(sandbox: SandboxHandle, env: dict[str, str]) -> tuple[int, dict[str, Any]]:
    done = run_gryvia("health", "storage", "--timeout", "60", "-o", "json", env=env)
    return done.returncode, json.loads(done.stdout or "{}")


def test_health_storage_follows_the_provisioner(
    sandbox: SandboxHandle, operator: OperatorProcess, cli_env: dict[str, str]
) -> None:
    box = cluster.Sandbox(sandbox.name)
    storage.start(box, lambda _: None)
    name = f"fast-{uuid.uuid4().hex[:6]}"

    def others() -> list[str]:
        out = sandbox.kubectl_run("get", "gryviastorages", "-o", "name").stdout.split()
        return [o for o in out if not o.endswith(f"/{name}")]

    wait_for(lambda: not others(), what="other tests' storage backends gone")
    sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaStorage",
            "metadata": {"name": name},
            "spec": {"backend": "local-path", "probeSeconds": 3600, "probeTimeoutSeconds": 8},
        }
    )
    try:
        code, report = _health(sandbox, cli_env)
        assert code == 0, report
        [row] = report["storage"]
        assert (row["name"], row["phase"], row["provisionerAnswering"]) == (name, "Ready", True)

        pid = box.pids()[storage.PROVISIONER]
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not storage.running(box), what="the provisioner stopped")
        code, report = _health(sandbox, cli_env)
        assert code == 1, report
        [row] = report["storage"]
        assert row["phase"] == "NotReady" and row["provisionerAnswering"] is False
        assert "rancher.io/local-path runs" in row["message"]

        storage.start(box, lambda _: None)
        code, report = _health(sandbox, cli_env)
        assert code == 0, report
    finally:
        storage.start(box, lambda _: None)
        sandbox.kubectl_run("delete", "gryviastorage", name, "--wait=false", check=False)
