"""`gryvia dataset create|list|get|stage|delete` on a real kube-apiserver with the GryviaDataset
CRD, no operator: the test writes the status through the status subresource as the operator
would (the staging itself is the operator's, tested with it)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gryvia_cli.sandbox import binaries
from gryvia_operator.api.crd import generate as crdgen
from tests.support.cli import run_gryvia
from tests.support.controlplane import ControlPlane, control_plane

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
MIB = 2**20


def _kubectl(plane: ControlPlane, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [str(binaries.path_of("kubectl")), "--kubeconfig", str(plane.kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A bare API server of the module's own with the GryviaDataset CRD Established."""
    with control_plane(tmp_path_factory.mktemp("dataset-apiserver")) as started:
        (crd,) = [d for d in crdgen.build_crds() if d["spec"]["names"]["kind"] == "GryviaDataset"]
        _kubectl(started, "apply", "-f", "-", stdin=json.dumps(crd))
        name = crd["metadata"]["name"]
        _kubectl(started, "wait", "--for=condition=Established", "--timeout=60s", f"crd/{name}")
        yield started


def _cli(plane: ControlPlane, tmp: Path) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env.update(
        KUBECONFIG=str(plane.kubeconfig),
        GRYVIA_CONFIG_HOME=str(tmp / "gryvia-config"),
        NO_COLOR="1",
        COLUMNS="250",
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return run_gryvia(*args, env=env, cwd=REPO, timeout=120)

    return run


def _status(plane: ControlPlane, name: str, status: dict[str, Any]) -> None:
    _kubectl(
        plane,
        "patch",
        "gryviadataset",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": status}),
    )


def _annotation(plane: ControlPlane, name: str) -> str | None:
    obj = json.loads(_kubectl(plane, "get", "gryviadataset", name, "-o", "json"))
    return (obj["metadata"].get("annotations") or {}).get("gryvia.io/stage")


def _operator(plane: ControlPlane, name: str, before: str | None, final: dict[str, Any]) -> None:
    """What the operator does with a stage request (gryvia_operator/reconcile/dataset.py):
    on a new annotation value it records the request and starts the check Job, then a copy
    Job (two progress lines), then writes the outcome with nothing running any more."""
    deadline = time.monotonic() + 60
    asked = _annotation(plane, name)
    while asked in (None, before) and time.monotonic() < deadline:
        time.sleep(0.2)
        asked = _annotation(plane, name)
    check = {"staging": f"{name}-check", "stagingVersion": None, "progress": None}
    _status(plane, name, {"lastStageRequest": asked, **check})
    time.sleep(1.5)
    for percent in (40, 80):
        progress = {"bytes": percent * MIB, "totalBytes": 100 * MIB, "files": percent,
                    "totalFiles": 100}  # fmt: skip
        _status(plane, name, {"staging": f"{name}-copy", "stagingVersion": "9f8e7d6c5b4a3210",
                              "progress": progress})  # fmt: skip
        time.sleep(1.5)
    _status(plane, name, {**final, "staging": None, "stagingVersion": None, "progress": None})


def test_create_list_get_stage_delete(plane: ControlPlane, tmp_path: Path) -> None:
    gryvia = _cli(plane, tmp_path)
    bad = gryvia("dataset", "create", "imagenet-mini", "--source", "s3://datasets/imagenet-mini",
                 "--storage", "fast-nfs", "--size", "200GB")  # fmt: skip
    assert bad.returncode == 2 and "--size (spec.cache.size)" in bad.stderr
    assert "200Gi" in bad.stderr  # the fix
    assert json.loads(_kubectl(plane, "get", "gryviadataset", "-o", "json"))["items"] == []

    made = gryvia("dataset", "create", "-f", "docs/examples/dataset.yaml")
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == "gryviadataset.gryvia.io/imagenet-mini"
    other = gryvia("dataset", "create", "mnist", "--source", "https://example.org/mnist/",
                   "--storage", "nfs", "--size", "1Gi", "--namespace-access", "ml")  # fmt: skip
    assert other.returncode == 0, other.stderr

    progress = {"bytes": 45 * MIB, "totalBytes": 100 * MIB, "files": 12, "totalFiles": 100,
                "bytesPerSecond": 3.1 * MIB, "etaSeconds": 8}  # fmt: skip
    copying = {"staging": "c", "stagingVersion": "1a2b3c4d5e6f7a8b", "progress": progress}
    _status(plane, "imagenet-mini", {"phase": "Staging", **copying})
    listed = gryvia("dataset", "list", "-o", "wide")
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith("imagenet-mini"))
    assert "staging 45% (45.0 MiB of 100.0 MiB, 12 of 100 files, 3.1 MiB/s, ETA 8s)" in row
    assert "tenants vision" in row
    assert "namespaces ml" in next(line for line in listed.stdout.splitlines() if "mnist" in line)

    shown = gryvia("dataset", "get", "imagenet-mini")
    assert shown.returncode == 0 and "phase: Staging" in shown.stdout  # YAML by default
    missing = gryvia("dataset", "get", "nope")
    assert missing.returncode == 1 and "gryvia dataset list" in missing.stderr

    ready = {"phase": "Ready", "version": "1a2b3c4d5e6f7a8b", "sizeBytes": 100 * MIB,
             "files": 100}  # fmt: skip
    worker = threading.Thread(target=_operator, args=(plane, "imagenet-mini", None, ready))
    worker.start()
    staged = gryvia("dataset", "stage", "imagenet-mini", "--wait")
    worker.join()
    assert staged.returncode == 0, staged.stderr
    assert "imagenet-mini: checking the source" in staged.stderr
    assert "imagenet-mini: staging 80% (80.0 MiB of 100.0 MiB, 80 of 100 files)" in staged.stderr
    assert "dataset imagenet-mini Ready" in staged.stderr

    first = _annotation(plane, "imagenet-mini")
    failed = {"sourceError": "copy failed: 403 Forbidden"}  # Ready: the staged version stays
    worker = threading.Thread(target=_operator, args=(plane, "imagenet-mini", first, failed))
    worker.start()
    refused = gryvia("dataset", "stage", "imagenet-mini", "--wait")
    worker.join()
    assert refused.returncode == 1 and "copy failed: 403 Forbidden" in refused.stderr
    assert "kept its staged version" in refused.stderr

    late = gryvia("dataset", "stage", "mnist", "--wait", "--timeout", "2s")
    assert late.returncode == 124, late.stderr
    assert _annotation(plane, "mnist") is not None

    gone = gryvia("dataset", "delete", "mnist", "--yes")
    assert gone.returncode == 0, gone.stderr
    names = gryvia("dataset", "list", "-o", "name")
    assert names.stdout.split() == ["gryviadataset.gryvia.io/imagenet-mini"]
