"""`gryvia dataset create|stage --wait|list|get|delete` on the sandbox with the session
operator, the sandbox's provisioner and Debian's rclone: a folder served over HTTP is staged,
`stage --wait` follows the operator's check to Ready, the rows show what it staged."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from gryvia_cli.sandbox import cluster, podnet, storage
from tests.conftest import SandboxHandle
from tests.integration.cli.conftest import Gryvia, kubectl_json
from tests.support.operator import OperatorProcess
from tests.support.ports import free_port
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


@pytest.fixture
def served(tmp_path: Path, sandbox: SandboxHandle) -> Iterator[str]:
    """The URL of a file server (on the pod bridge's gateway, which pods reach) with 8 files
    of 64 KiB."""
    folder = tmp_path / "src"
    folder.mkdir()
    for i in range(8):
        (folder / f"shard-{i}.bin").write_bytes(hashlib.sha256(str(i).encode()).digest() * 2048)
    net = podnet.load(cluster.Sandbox(sandbox.name).state)
    address = net.gateway if net is not None else "127.0.0.1"
    port = free_port()
    argv = [sys.executable, "-m", "http.server", str(port), "--bind", address, "-d", str(folder)]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield f"http://{address}:{port}/"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_create_stage_wait_list_delete(
    sandbox: SandboxHandle, operator: OperatorProcess, gryvia: Gryvia, served: str
) -> None:
    operator.ensure_running()
    storage.start(cluster.Sandbox(sandbox.name), lambda _: None)
    tag = uuid.uuid4().hex[:6]
    backend, name = f"dsc-{tag}", f"dsc-{tag}"
    sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaStorage",
            "metadata": {"name": backend},
            "spec": {"backend": "existing", "storageClass": storage.STORAGE_CLASS},
        }
    )
    try:
        made = gryvia("dataset", "create", name, "--source", served, "--storage", backend,
                      "--size", "64Mi", "--refresh-seconds", "0")  # fmt: skip
        assert made.returncode == 0, made.stderr
        wait_for(
            lambda: (
                (kubectl_json(sandbox, "get", "gryviadataset", name).get("status") or {}).get(
                    "phase"
                )
                == "Ready"
            ),
            timeout=120,
            what="the first version staged",
        )
        staged = gryvia("dataset", "stage", name, "--wait", "--timeout", "2m", timeout=180)
        assert staged.returncode == 0, staged.stderr
        assert f"dataset {name} Ready" in staged.stderr
        listed = gryvia("dataset", "list", "-o", "wide")
        row = next(line for line in listed.stdout.splitlines() if line.startswith(name))
        assert "Ready" in row and "512.0 KiB" in row and f"gryvia-dataset-{name}-" in row
        shown = gryvia("dataset", "get", name)
        assert shown.returncode == 0 and "lastStageRequest:" in shown.stdout
    finally:
        gone = gryvia("dataset", "delete", name, "--yes")
        sandbox.kubectl_run("delete", "gryviastorage", backend, "--wait=false", check=False)
    assert gone.returncode == 0, gone.stderr
