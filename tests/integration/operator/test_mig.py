"""A MIG job in the sandbox: a node offering `nvidia.com/mig-3g.40gb` slices registers, an
imported `--gres=gpu:<h100>_3g.40gb:1` job is placed on it and succeeds, and
`gryvia capacity` counts the node's slices as slices."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from gryvia_cli.sandbox import cluster
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import kubectl_json, wait_phase
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
MIG = "H100-MIG-3G.40GB"


def _gryvia(sandbox: SandboxHandle, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gryvia_cli", "--kubeconfig", str(sandbox.kubeconfig), *args],
        capture_output=True, text=True, timeout=120, env=os.environ | {"NO_COLOR": "1"},
    )  # fmt: skip


@pytest.fixture
def mig_node(sandbox: SandboxHandle, live_operator: OperatorProcess) -> Iterator[str]:
    """A simulated H100 node partitioned into two 3g.40gb slices, removed afterwards."""
    (name,) = cluster.add_nodes(sandbox.name, "1xH100-MIG-3g.40gb:2")
    try:
        yield name
    finally:
        sandbox.kubectl_run("delete", "node", name, "--ignore-not-found", "--wait=false")
        sandbox.kubectl_run("delete", "gryviagpunode", name, "--ignore-not-found")


def test_a_mig_job_runs_on_a_slice_and_capacity_counts_slices(
    sandbox: SandboxHandle, mig_node: str, namespace: str, tmp_path: Path
) -> None:
    def registered() -> bool:
        out = sandbox.kubectl_run("get", "gryviagpunode", mig_node, "-o", "json", check=False)
        return (
            out.returncode == 0
            and (json.loads(out.stdout).get("status") or {}).get("phase") == "Ready"
        )

    wait_for(registered, timeout=60, what=f"{mig_node} registered Ready")
    capacity = json.loads(_gryvia(sandbox, "capacity", "--gpu-type", MIG, "-o", "json").stdout)
    assert [(t["gpuType"], t["nodes"], t["total"]) for t in capacity["types"]] == [(MIG, 1, 2)]
    script = tmp_path / "mig.sh"
    script.write_text(textwrap.dedent("""
        #!/bin/bash
        #SBATCH --job-name=slice
        #SBATCH --gres=gpu:nvidia_h100_80gb_hbm3_3g.40gb:1
        #SBATCH --time=5
        echo "on a slice"
    """).lstrip())  # fmt: skip
    submitted = _gryvia(sandbox, "submit", "--sbatch", str(script), "--image", "python:3.11",
                        "-n", namespace)  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    assert "no node has" not in submitted.stderr, submitted.stderr
    job = wait_phase(sandbox, namespace, "slice", "Succeeded", "Failed", timeout=180)
    assert job["status"]["phase"] == "Succeeded", job.get("status")
    assert job["status"].get("nodesAllocated") == [mig_node]
    pods = kubectl_json(sandbox, "get", "pods", "-n", namespace)["items"]
    assert [p["spec"]["nodeName"] for p in pods] == [mig_node]
    limits = pods[0]["spec"]["containers"][0]["resources"]["limits"]
    assert limits.get("nvidia.com/mig-3g.40gb") == "1" and "nvidia.com/gpu" not in limits
