"""Issue 41 point 2, GryviaDataset on the session operator with the sandbox's real
provisioner and Debian's rclone (the S3 source's test needs SeaweedFS: `make test-all`,
tests/integration/test_dataset_s3.py).

The source is a folder served over HTTP by a file server this test starts (Python's
http.server, on the pod bridge's gateway address, which pods reach). The operator lists it
(check Job), copies it into a claim of the backend (copy Job), and the staged folder holds the
same bytes; asking again with an unchanged source copies nothing; a changed file stages a new
version into a new claim."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gryvia_cli.sandbox import cluster, podnet, storage
from tests.builders import sh_job
from tests.conftest import SandboxHandle, wait_phase
from tests.support.operator import OperatorProcess
from tests.support.ports import free_port
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
API = "gryvia.io/v1alpha1"


def _sums(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def served(tmp_path: Path, sandbox: SandboxHandle) -> Iterator[tuple[str, Path]]:
    """(URL, folder) of a file server with 20 files of 64 KiB in two folders."""
    folder = tmp_path / "src"
    for i in range(20):
        path = folder / f"part-{i % 2}" / f"shard-{i:04d}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(hashlib.sha256(str(i).encode()).digest() * 2048)
    net = podnet.load(cluster.Sandbox(sandbox.name).state)
    address = net.gateway if net is not None else "127.0.0.1"
    port = free_port()
    argv = [sys.executable, "-m", "http.server", str(port), "--bind", address, "-d", str(folder)]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield f"http://{address}:{port}/", folder
    finally:
        server.terminate()
        server.wait(timeout=10)


def _status(sandbox: SandboxHandle, name: str) -> dict[str, Any]:
    got = sandbox.kubectl_run("get", "gryviadataset", name, "-o", "json", check=False)
    return (json.loads(got.stdout).get("status") or {}) if got.returncode == 0 else {}


READ = (
    "cd datasets/mini && echo $(find . -type f | wc -l) "
    "$(sha256sum part-1/shard-0003.bin | cut -c1-64)"
)
"""A job's script: the files it sees under its dataset mount and one file's SHA-256."""


def test_a_dataset_is_staged_once_and_again_only_when_its_source_changes(
    sandbox: SandboxHandle,
    live_operator: OperatorProcess,
    served: tuple[str, Path],
    namespace: str,
) -> None:
    box = cluster.Sandbox(sandbox.name)
    storage.start(box, lambda _: None)
    url, folder = served
    tag = uuid.uuid4().hex[:6]
    backend, name = f"dsb-{tag}", f"ds-{tag}"
    sandbox.apply(
        {
            "apiVersion": API,
            "kind": "GryviaStorage",
            "metadata": {"name": backend},
            "spec": {"backend": "existing", "storageClass": storage.STORAGE_CLASS},
        },
        {
            "apiVersion": API,
            "kind": "GryviaDataset",
            "metadata": {"name": name},
            "spec": {"source": {"url": url}, "cache": {"storage": backend, "size": "64Mi"}},
        },
    )
    mount = [{"name": name, "mountPath": "/datasets/mini"}]
    jobs = [
        sh_job(f"read-{i}", gpus=1, gpu_type="H100", script=READ, datasets=mount) for i in (1, 2)
    ]
    sandbox.apply(jobs[0], namespace=namespace)
    try:
        early = wait_for(
            lambda: (
                sandbox.kubectl_json("get", "gryviaaijob", "-n", namespace, "read-1")
                .get("status", {})
                .get("pending")
            ),
            what="the early job's Dataset blocker",
        )
        assert early["kind"] == "Dataset" and f"dataset {name}" in early["message"]
        first = wait_for(
            lambda: (s := _status(sandbox, name)).get("phase") == "Ready" and s,
            timeout=120,
            what="the dataset staged",
        )
        assert (first["files"], first["sizeBytes"]) == (20, 20 * 65536)
        assert first["stageRuns"] == 1 and len(first["version"]) == 16
        claim = sandbox.kubectl_json("get", "pvc", "-n", "default", first["cacheClaim"])
        pv = sandbox.kubectl_json("get", "pv", claim["spec"]["volumeName"])
        staged = Path(pv["spec"]["hostPath"]["path"])
        assert _sums(staged) == _sums(folder)
        sandbox.apply(jobs[1], namespace=namespace)
        want = f"20 {_sums(folder)['part-1/shard-0003.bin']}"
        for job in ("read-1", "read-2"):
            done = wait_phase(sandbox, namespace, job, "Succeeded", "Failed")
            assert done["status"]["phase"] == "Succeeded", done["status"]
            pods = sandbox.kubectl_json(
                "get", "pods", "-n", namespace, "-l", f"gryvia.io/job={job}"
            )
            log = sandbox.kubectl_run("logs", "-n", namespace, pods["items"][0]["metadata"]["name"])
            assert log.stdout.strip() == want

        def ask() -> str:
            when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            patch = json.dumps({"metadata": {"annotations": {"gryvia.io/stage": when}}})
            sandbox.kubectl_run("patch", "gryviadataset", name, "--type=merge", "-p", patch)
            return when

        asked = ask()
        again = wait_for(
            lambda: (
                (s := _status(sandbox, name)).get("lastStageRequest") == asked
                and not s.get("staging")
                and s
            ),
            timeout=60,
            what="the unchanged source checked",
        )
        assert again["stageRuns"] == 1 and again["version"] == first["version"]

        (folder / "part-0" / "shard-0000.bin").write_bytes(b"changed")
        asked = ask()
        changed = wait_for(
            lambda: (
                (s := _status(sandbox, name)).get("lastStageRequest") == asked
                and s.get("version") != first["version"]
                and s.get("phase") == "Ready"
                and s
            ),
            timeout=120,
            what="the changed source staged as a new version",
        )
        assert changed["stageRuns"] == 2 and changed["cacheClaim"] != first["cacheClaim"]
        assert changed["sizeBytes"] == 19 * 65536 + len(b"changed")
    finally:
        sandbox.kubectl_run("delete", "gryviadataset", name, "--wait=false", check=False)
        sandbox.kubectl_run("delete", "gryviastorage", backend, "--wait=false", check=False)
