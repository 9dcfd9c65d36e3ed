"""The sandbox's real storage parts (issue #41's groundwork), on the session sandbox:

- local-path-provisioner (`sandbox up --storage`): a claim of class `local-path` binds once its
  first pod is scheduled, to a hostPath PV whose folder a helper pod (a local process here)
  created on disk; a pod writes a file into it through its mount at /data, a second pod of the
  claim reads it, and deleting the claim removes the folder (the teardown helper pod).
- SeaweedFS's S3 gateway (`sandbox up --s3`): rclone, configured by environment alone, makes a
  bucket, puts an object, lists and reads it back through the signed S3 API.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gryvia_cli.sandbox import cluster, s3, storage
from tests.conftest import SandboxHandle
from tests.support.wait import wait_for

# `make test` builds the provisioner (`make storage-bin`, about 80 s cold); SeaweedFS is a long
# Go build that only `make test-all` makes (`make s3-bin`), so `make test` deselects the S3
# test (the `test_all` marker, tests/conftest.py).
pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _pod(name: str, claim: str, script: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "command": ["sh", "-c", script],
                    "workingDir": "/data",
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                }
            ],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
        },
    }


def _succeeded(sandbox: SandboxHandle, ns: str, pod: str) -> str:
    """Wait until pod `ns/pod` Succeeded (AssertionError when it failed); return its log."""

    def phase() -> str:
        got: dict[str, Any] = sandbox.kubectl_json("get", "pod", "-n", ns, pod)
        return str((got.get("status") or {}).get("phase") or "")

    done = wait_for(lambda: phase() in ("Succeeded", "Failed") and phase(), timeout=60)
    log = sandbox.kubectl_run("logs", "-n", ns, pod).stdout
    assert done == "Succeeded", f"{pod}: {done}, log: {log!r}"
    return log


def test_a_local_path_claim_binds_to_a_real_folder_that_two_pods_share(
    sandbox: SandboxHandle,
) -> None:
    box = cluster.Sandbox(sandbox.name)
    storage.start(box, lambda _: None)
    ns = f"t-{uuid.uuid4().hex[:8]}"
    sandbox.kubectl_run("create", "namespace", ns)
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {
            "storageClassName": storage.STORAGE_CLASS,
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Mi"}},
        },
    }
    writer = _pod("writer", "data", "echo written-by-writer > note.txt && pwd")
    sandbox.apply(claim, writer, namespace=ns, verb="create")
    _succeeded(sandbox, ns, "writer")
    pvc: dict[str, Any] = sandbox.kubectl_json("get", "pvc", "-n", ns, "data")
    assert pvc["status"]["phase"] == "Bound"
    pv: dict[str, Any] = sandbox.kubectl_json("get", "pv", pvc["spec"]["volumeName"])
    folder = Path(pv["spec"]["hostPath"]["path"])
    assert folder.parent == storage.volumes_dir(box)  # made by the setup helper pod
    assert (folder / "note.txt").read_text() == "written-by-writer\n"
    sandbox.apply(_pod("reader", "data", "cat note.txt"), namespace=ns, verb="create")
    assert _succeeded(sandbox, ns, "reader") == "written-by-writer\n"
    sandbox.kubectl_run("delete", "pod", "-n", ns, "--all", "--wait=true", "--timeout=60s")
    sandbox.kubectl_run("delete", "pvc", "-n", ns, "data", "--wait=false")
    wait_for(lambda: not folder.exists(), timeout=60, what=f"{folder} removed (teardown helper)")
    sandbox.kubectl_run("delete", "namespace", ns, "--wait=false")


@pytest.mark.test_all("needs make s3-bin")
def test_rclone_puts_and_gets_through_the_s3_server(sandbox: SandboxHandle, tmp_path: Path) -> None:
    box = cluster.Sandbox(sandbox.name)
    creds = s3.start(box, lambda _: None)
    assert json.loads((s3.folder(box) / "credentials.json").read_text())["endpoint"] == (
        creds.endpoint
    )
    rclone = shutil.which("rclone")
    assert rclone, "rclone is missing: run 'make s3-bin' (Debian's package)"
    quiet = {"RCLONE_LOG_LEVEL": "ERROR"}  # not the notice that no config file is there
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)} | s3.rclone_env(creds, "src")
    env |= quiet | {"RCLONE_CONFIG": str(tmp_path / "absent.conf")}  # env alone

    def run(*args: str) -> str:
        done = subprocess.run(
            [rclone, *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, f"rclone {args}: {done.stderr}"
        return done.stdout

    bucket = f"t-{uuid.uuid4().hex[:8]}"
    local = tmp_path / "shard-0000.txt"
    local.write_text("tokens 0..1023\n")
    run("mkdir", f"src:{bucket}")
    run("copyto", str(local), f"src:{bucket}/train/shard-0000.txt")
    assert sorted(run("lsf", "-R", f"src:{bucket}").split()) == ["train/", "train/shard-0000.txt"]
    assert run("cat", f"src:{bucket}/train/shard-0000.txt") == "tokens 0..1023\n"
    unsigned = subprocess.run(
        [rclone, "lsf", f"src:{bucket}"],
        env=env | {"RCLONE_CONFIG_SRC_SECRET_ACCESS_KEY": "wrong"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert unsigned.returncode != 0  # the server checks signatures
    # A pod (a process in its own network namespace when there is a pod network) reads it
    # through the endpoint pods reach, as a dataset copy job will.
    ns = f"t-{uuid.uuid4().hex[:8]}"
    sandbox.kubectl_run("create", "namespace", ns)
    pod_env = s3.rclone_env(replace(creds, endpoint=creds.pod_endpoint), "src") | quiet
    reader = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "s3-reader"},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "main",
                    "image": "rclone/rclone",
                    "command": [rclone, "cat", f"src:{bucket}/train/shard-0000.txt"],
                    "env": [{"name": k, "value": v} for k, v in pod_env.items()],
                }
            ],
        },
    }
    sandbox.apply(reader, namespace=ns, verb="create")
    assert _succeeded(sandbox, ns, "s3-reader") == "tokens 0..1023\n"
    sandbox.kubectl_run("delete", "namespace", ns, "--wait=false")
