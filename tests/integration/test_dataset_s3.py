"""Issue 41 acceptance, datasets from the sandbox's S3 server (SeaweedFS: `make s3-bin`, a long
Go build, so this runs under `make test-all`; `make test` deselects it, marker `test_all`).

100 objects (50 MB) in a bucket are staged once through the signed S3 API with the
credentials Secret; the staged folder holds the same bytes. A bucket that does not exist and a
Secret that is missing each leave the dataset with its condition and a message naming the
field and the fix."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from gryvia_cli.sandbox import cluster, s3, storage
from tests.conftest import SandboxHandle
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.sandbox,
    pytest.mark.test_all("needs make s3-bin"),
]
API = "gryvia.io/v1alpha1"
STAGING = "default"
"""The session operator's staging namespace (no POD_NAMESPACE)."""


def _sums(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _status(sandbox: SandboxHandle, name: str) -> dict[str, Any]:
    got = sandbox.kubectl_run("get", "gryviadataset", name, "-o", "json", check=False)
    return (json.loads(got.stdout).get("status") or {}) if got.returncode == 0 else {}


def _dataset(name: str, url: str, endpoint: str, secret: str, backend: str) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "GryviaDataset",
        "metadata": {"name": name},
        "spec": {
            "source": {"url": url, "endpoint": endpoint, "secretRef": {"name": secret}},
            "cache": {"storage": backend, "size": "1Gi", "refreshSeconds": 0},
        },
    }


def test_an_s3_dataset_stages_100_files_and_bad_sources_say_why(
    sandbox: SandboxHandle, live_operator: OperatorProcess, tmp_path: Path
) -> None:
    box = cluster.Sandbox(sandbox.name)
    storage.start(box, lambda _: None)
    creds = s3.start(box, lambda _: None)
    rclone = shutil.which("rclone")
    assert rclone, "rclone is missing: run 'make rclone-bin' (Debian's package)"
    tag = uuid.uuid4().hex[:6]
    bucket, backend, secret = f"b-{tag}", f"s3b-{tag}", f"s3-{tag}"
    folder = tmp_path / "src"
    for i in range(100):
        path = folder / f"train-{i % 4}" / f"shard-{i:04d}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(500_000))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "RCLONE_CONFIG": "/dev/null"}
    env |= s3.rclone_env(creds, "src")
    subprocess.run([rclone, "copy", str(folder), f"src:{bucket}/mini"], env=env, check=True)
    sandbox.apply(
        {
            "apiVersion": API,
            "kind": "GryviaStorage",
            "metadata": {"name": backend},
            "spec": {"backend": "existing", "storageClass": storage.STORAGE_CLASS},
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": secret, "namespace": STAGING},
            "stringData": {
                "AWS_ACCESS_KEY_ID": creds.access_key_id,
                "AWS_SECRET_ACCESS_KEY": creds.secret_access_key,
            },
        },
    )
    good, nobucket, nosecret = f"s3ok-{tag}", f"s3nob-{tag}", f"s3nos-{tag}"
    endpoint = creds.pod_endpoint
    sandbox.apply(
        _dataset(good, f"s3://{bucket}/mini", endpoint, secret, backend),
        _dataset(nobucket, f"s3://nosuch-{tag}/x", endpoint, secret, backend),
        _dataset(nosecret, f"s3://{bucket}/mini", endpoint, f"absent-{tag}", backend),
    )
    try:
        ready = wait_for(
            lambda: (s := _status(sandbox, good)).get("phase") == "Ready" and s,
            timeout=240,
            what="the S3 dataset staged",
        )
        assert (ready["files"], ready["sizeBytes"]) == (100, 50_000_000)
        claim = sandbox.kubectl_json("get", "pvc", "-n", STAGING, ready["cacheClaim"])
        pv = sandbox.kubectl_json("get", "pv", claim["spec"]["volumeName"])
        assert _sums(Path(pv["spec"]["hostPath"]["path"])) == _sums(folder)

        failed = wait_for(
            lambda: (s := _status(sandbox, nobucket)).get("phase") == "Failed" and s,
            timeout=120,
            what="the missing bucket's failure",
        )
        assert f"spec.source.url s3://nosuch-{tag}/x" in failed["message"]
        readable = {c["type"]: c for c in failed["conditions"]}["SourceReadable"]
        assert readable["status"] == "False"

        waiting = wait_for(
            lambda: (
                (s := _status(sandbox, nosecret)).get("phase") == "Pending"
                and "Secret" in str(s.get("message"))
                and s
            ),
            what="the missing Secret's message",
        )
        assert f'Secret "absent-{tag}" not found in namespace {STAGING}' in waiting["message"]
        assert "AWS_SECRET_ACCESS_KEY" in waiting["message"]
    finally:
        for name in (good, nobucket, nosecret):
            sandbox.kubectl_run("delete", "gryviadataset", name, "--wait=false", check=False)
        sandbox.kubectl_run("delete", "gryviastorage", backend, "--wait=false", check=False)
        sandbox.kubectl_run("delete", "secret", "-n", STAGING, secret, check=False)
