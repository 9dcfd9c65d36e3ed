"""The generated CRDs on a real kube-apiserver: Established, CEL rules, printer columns."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gryvia_cli.sandbox import binaries
from gryvia_operator.api.crd import generate as crdgen
from tests.builders import make_job
from tests.support.controlplane import ControlPlane, control_plane

pytestmark = pytest.mark.integration
EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def _kubectl(
    plane: ControlPlane, *args: str, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binaries.path_of("kubectl")), "--kubeconfig", str(plane.kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=check,
        timeout=60,
    )


@pytest.fixture(scope="module")
def crds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A bare API server of the module's own with every Gryvia CRD applied and Established,
    stopped with the module. Not the session's `apiserver`: that one stays without CRDs for
    test_cli_errors, and deleting 22 CRDs from it again waited past 60 s in loaded runs (the
    API server's CRD finalizer backs off while each CRD's storage is (re)initializing)."""
    with control_plane(tmp_path_factory.mktemp("crd-apiserver")) as plane:
        docs = crdgen.build_crds()
        _kubectl(
            plane,
            "apply",
            "-f",
            "-",
            stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}),
        )
        for crd in docs:
            _kubectl(
                plane,
                "wait",
                "--for=condition=Established",
                "--timeout=60s",
                f"crd/{crd['metadata']['name']}",
            )
        yield plane


def _job(**spec: Any) -> dict[str, Any]:
    """The 8 x H100 job `cel-check` in namespace default, with `spec` fields set over it."""
    builder = make_job("cel-check", "default").gpus(8).gpu_type("H100").image("pytorch:2")
    return builder.command("python", "train.py").set(**spec).manifest()


def test_every_crd_is_established_and_served(crds: ControlPlane) -> None:
    out = json.loads(_kubectl(crds, "get", "crd", "-o", "json").stdout)
    names = {c["metadata"]["name"] for c in out["items"]}
    assert names >= {c["metadata"]["name"] for c in crdgen.build_crds()}
    resources = _kubectl(crds, "api-resources", "--api-group=gryvia.io", "-o", "name").stdout
    assert "gryviaaijobs.gryvia.io" in resources
    assert len(resources.split()) == len(crdgen.build_crds())


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"priority": 150}, "spec.priority"),
        ({"gpus": -1}, "spec.gpus"),
        ({"distributed": {"enabled": True, "nodes": 0}}, "distributed.nodes"),
        ({"gpus": 512, "distributed": {"enabled": True, "nodes": 4, "gpusPerNode": 512}}, "1024"),
    ],
)
def test_api_server_itself_refuses_invalid_jobs(
    crds: ControlPlane, spec: dict[str, Any], field: str
) -> None:
    res = _kubectl(crds, "create", "-f", "-", stdin=json.dumps(_job(**spec)), check=False)
    assert res.returncode != 0
    assert "is invalid" in res.stderr and field in res.stderr, res.stderr


def test_valid_job_is_stored_and_printer_columns_show(crds: ControlPlane) -> None:
    job = _job()
    job["metadata"]["name"] = "printer"
    _kubectl(crds, "create", "-f", "-", stdin=json.dumps(job))
    _kubectl(
        crds,
        "patch",
        "gaj",
        "printer",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status": {"phase": "Running"}}',
    )
    table = _kubectl(crds, "get", "gaj").stdout.splitlines()
    assert table[0].split() == ["NAME", "TYPE", "GPUS", "GPU-TYPE", "PHASE", "AGE"]
    assert table[1].split()[:5] == ["printer", "training", "8", "H100", "Running"]
    assert "printer" in _kubectl(crds, "get", "gryvia").stdout  # category
    wide = _kubectl(crds, "get", "gaj", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == [
        *("NAME", "TYPE", "GPUS", "GPU-TYPE", "PHASE", "AGE"),
        *("NODES", "PRIORITY", "TIMEOUT", "MESSAGE", "WAITING-FOR", "LIKELY-START"),
    ]


def test_the_gpu_shape_is_fixed_once_the_job_exists(crds: ControlPlane) -> None:
    job = _job()
    job["metadata"]["name"] = "fixed-shape"
    _kubectl(crds, "create", "-f", "-", stdin=json.dumps(job))
    for patch in ('{"spec": {"gpuType": "T4"}}', '{"spec": {"gpus": 1}}'):
        res = _kubectl(
            crds, "patch", "gaj", "fixed-shape", "--type=merge", "-p", patch, check=False
        )
        assert res.returncode != 0 and "cannot change once the job exists" in res.stderr
    _kubectl(crds, "patch", "gaj", "fixed-shape", "--type=merge", "-p", '{"spec": {"priority": 7}}')


def test_every_example_manifest_is_accepted(crds: ControlPlane) -> None:
    _kubectl(crds, "create", "namespace", "examples")
    for path in sorted(EXAMPLES.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc:
                continue
            if doc["metadata"].get("namespace"):
                doc["metadata"]["namespace"] = "examples"
            res = _kubectl(
                crds, "apply", "--dry-run=server", "-f", "-", stdin=json.dumps(doc), check=False
            )
            assert res.returncode == 0, f"{path.name}: {res.stderr}"


def test_final_usage_record_spec_is_immutable(crds: ControlPlane) -> None:
    record = yaml.safe_load((EXAMPLES / "usagerecord.yaml").read_text())
    record["metadata"]["namespace"] = "default"
    record["spec"]["final"] = True
    _kubectl(crds, "apply", "-f", "-", stdin=json.dumps(record))
    name = record["metadata"]["name"]
    res = _kubectl(
        crds,
        "patch",
        "gryviausagerecords",
        name,
        "--type=merge",
        "-p",
        '{"spec": {"cost": 0.01}}',
        check=False,
    )
    assert res.returncode != 0 and "final" in res.stderr, res.stderr
