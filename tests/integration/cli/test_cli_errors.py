"""Errors as users meet them: unreachable cluster, forbidden user (token auth), a cluster
without the CRDs, and exec-plugin credentials."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import SandboxHandle
from tests.integration.cli.conftest import Gryvia
from tests.support.controlplane import ControlPlane
from tests.support.ports import free_port

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def user_kubeconfig(
    sandbox: SandboxHandle, path: Path, user: dict[str, object], server: str | None = None
) -> Path:
    """The sandbox kubeconfig with its user replaced by `user` (and optionally its server)."""
    config = yaml.safe_load(sandbox.kubeconfig.read_text())
    config["users"][0]["user"] = user
    if server:
        config["clusters"][0]["cluster"]["server"] = server
    path.write_text(yaml.safe_dump(config))
    return path


def test_unreachable_cluster(sandbox: SandboxHandle, gryvia: Gryvia, tmp_path: Path) -> None:
    config = yaml.safe_load(sandbox.kubeconfig.read_text())
    config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{free_port()}"
    path = tmp_path / "down"
    path.write_text(yaml.safe_dump(config))
    result = gryvia("--kubeconfig", str(path), "list", "jobs")
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: cannot reach the API server at https://127.0.0.1:")
    assert lines[-1] == "hint: check that the cluster is reachable (kubectl get nodes)"
    assert "Traceback" not in result.stderr
    verbose = gryvia("list", "jobs", "-v", "--kubeconfig", str(path))
    assert "detail:" in verbose.stderr


def test_missing_kubeconfig_and_unknown_context(gryvia: Gryvia, tmp_path: Path) -> None:
    result = gryvia("status", env={"KUBECONFIG": str(tmp_path / "none"), "HOME": str(tmp_path)})
    assert result.returncode == 1
    assert "hint: point KUBECONFIG at your cluster, or pass --context <name>" in result.stderr
    context = gryvia("list", "jobs", "--context", "nope")
    assert context.returncode == 1 and 'context "nope" is not defined' in context.stderr


@pytest.fixture
def service_account(sandbox: SandboxHandle, namespace: str) -> str:
    """A token of a fresh ServiceAccount in `namespace` without any role."""
    sandbox.kubectl_run("create", "serviceaccount", "viewer", "-n", namespace)
    return sandbox.kubectl_run("create", "token", "viewer", "-n", namespace).stdout.strip()


def test_forbidden_user_with_a_token(
    sandbox: SandboxHandle, namespace: str, service_account: str, gryvia: Gryvia, tmp_path: Path
) -> None:
    path = user_kubeconfig(sandbox, tmp_path / "token", {"token": service_account})
    result = gryvia("--kubeconfig", str(path), "list", "jobs", "-n", namespace)
    assert result.returncode == 1
    assert result.stderr.splitlines()[0].startswith("error: forbidden:")
    assert "hint: your kubeconfig user lacks permission for this resource" in result.stderr
    sandbox.kubectl_run(
        "create",
        "role",
        "jobs-reader",
        "-n",
        namespace,
        "--verb=get,list",
        "--resource=gryviaaijobs.gryvia.io",
    )
    sandbox.kubectl_run(
        "create",
        "rolebinding",
        "jobs-reader",
        "-n",
        namespace,
        "--role=jobs-reader",
        f"--serviceaccount={namespace}:viewer",
    )
    allowed = gryvia("--kubeconfig", str(path), "list", "jobs", "-n", namespace, "-o", "json")
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout)["items"] == []
    queue = gryvia("--kubeconfig", str(path), "queue", "-n", namespace)
    assert queue.returncode == 0 and "you may not list jobs in all namespaces" in queue.stderr


def test_exec_plugin_credentials(
    sandbox: SandboxHandle, namespace: str, service_account: str, gryvia: Gryvia, tmp_path: Path
) -> None:
    plugin = tmp_path / "plugin.py"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": service_account},
    }
    plugin.write_text(f"import json\nprint(json.dumps({credential!r}))\n")
    exec_user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(plugin)],
            "interactiveMode": "Never",
        }
    }
    path = user_kubeconfig(sandbox, tmp_path / "exec", exec_user)
    result = gryvia("--kubeconfig", str(path), "get", "job", "nope", "-n", namespace)
    assert result.returncode == 1
    assert f"system:serviceaccount:{namespace}:viewer" in result.stderr  # the plugin's token


@pytest.fixture
def bare_api(apiserver: ControlPlane) -> ControlPlane:
    """The session's bare API server, without Gryvia's CRDs (test_crds removes the ones it
    applies): no second control plane for this test."""
    return apiserver


def test_cluster_without_the_crds(bare_api: ControlPlane, gryvia: Gryvia) -> None:
    result = gryvia("--kubeconfig", str(bare_api.kubeconfig), "list", "jobs")
    assert result.returncode == 1
    assert result.stderr.splitlines()[0] == "error: GryviaAIJob is not available on this cluster"
    assert "hint: install the chart" in result.stderr
    status = gryvia("--kubeconfig", str(bare_api.kubeconfig), "status", "-o", "json")
    assert status.returncode == 1
    report = json.loads(status.stdout)
    states = {c["name"]: c["state"] for c in report["components"]}
    assert states["CRDs"] == "Error" and states["Operator"] == "Error"
