"""GPU node registration on the sandbox's simulated GFD-labelled nodes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gryvia_cli.sandbox import cluster
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import kubectl_json
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _gpunode(sandbox: SandboxHandle, name: str) -> dict[str, Any] | None:
    out = sandbox.kubectl_run("get", "gryviagpunode", name, "-o", "json", check=False)
    found: dict[str, Any] | None = json.loads(out.stdout) if out.returncode == 0 else None
    return found


def test_gpu_nodes_are_registered_and_labelled(
    sandbox: SandboxHandle, live_operator: OperatorProcess
) -> None:
    node = wait_for(lambda: _gpunode(sandbox, "gpu-h100-0"), timeout=30, what="GryviaGpuNode")
    assert node["metadata"]["labels"]["gryvia.io/auto-registered"] == "true"
    assert node["spec"] == {
        "nodeName": "gpu-h100-0",
        "gpuType": "H100",
        "gpuCount": 8,
        "memoryGB": 80,
        "rdma": True,
        "sriov": False,
    }
    wait_for(lambda: (_gpunode(sandbox, "gpu-h100-0") or {}).get("status"), what="status")
    status = _gpunode(sandbox, "gpu-h100-0")["status"]  # type: ignore[index]
    assert status["phase"] == "Ready"
    assert (status["driverVersion"], status["cudaVersion"]) == ("550.127.08", "12.4")
    labels = kubectl_json(sandbox, "get", "node", "gpu-a100-80g-0")["metadata"]["labels"]
    assert labels["gryvia.io/gpu"] == "A100-80G"
    assert labels["gryvia.io/gpu-count"] == "8"
    assert labels["gryvia.io/rdma"] == "true"
    l40 = _gpunode(sandbox, "gpu-l40-0")
    assert l40 is not None and l40["spec"]["gpuType"] == "L40" and l40["spec"]["rdma"] is False
    assert _gpunode(sandbox, "cpu-0") is None


def test_hand_made_gpunode_untouched_and_labels_removed_when_not_gpu(
    sandbox: SandboxHandle, live_operator: OperatorProcess
) -> None:
    (name,) = cluster.add_nodes(sandbox.name, "1xA10:2")
    wait_for(lambda: _gpunode(sandbox, name), timeout=30, what="auto registration")
    sandbox.kubectl_run("label", "node", name, "nvidia.com/gpu.present=false", "--overwrite")

    def cleaned() -> bool:
        labels = kubectl_json(sandbox, "get", "node", name)["metadata"]["labels"]
        return _gpunode(sandbox, name) is None and not any(
            k.startswith("gryvia.io/") for k in labels
        )

    wait_for(cleaned, timeout=30, what="registration removed")
    hand = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaGpuNode",
        "metadata": {"name": name},
        "spec": {"nodeName": name, "gpuType": "A10", "gpuCount": 2, "interconnect": "PCIe"},
    }
    sandbox.apply(hand)

    def labelled() -> bool:
        labels = kubectl_json(sandbox, "get", "node", name)["metadata"]["labels"]
        return bool(labels.get("gryvia.io/interconnect") == "PCIe")

    wait_for(labelled, timeout=30, what="labels from the hand-made object")
    sandbox.kubectl_run("label", "node", name, "nvidia.com/gpu.present=true", "--overwrite")

    def relabelled() -> bool:
        labels = kubectl_json(sandbox, "get", "node", name)["metadata"]["labels"]
        return bool(labels.get("gryvia.io/gpu") == "A10")

    wait_for(relabelled, what="node labelled again")
    stored = _gpunode(sandbox, name)
    assert stored is not None
    assert "gryvia.io/auto-registered" not in (stored["metadata"].get("labels") or {})
    assert "status" not in stored
    assert stored["spec"] == hand["spec"]
    sandbox.kubectl_run("delete", "gryviagpunode", name)
    sandbox.kubectl_run("delete", "node", name)


def test_types_by_family_and_product_land_where_the_node_says(
    sandbox: SandboxHandle, live_operator: OperatorProcess, namespace: str
) -> None:
    # issue 39: `h200` runs on the node GPU feature discovery labels NVIDIA-H200, `a100` on an
    # A100-80G node, `l40s` on the L40S node and not on the sandbox's L40 nodes
    from tests.builders import make_job
    from tests.integration.operator.conftest import create, wait_phase

    added = cluster.add_nodes(sandbox.name, "1xH200:2,1xL40S:2")
    h200, l40s = added
    try:
        for name in added:
            wait_for(lambda name=name: _gpunode(sandbox, name), timeout=30, what=name)
        labels = kubectl_json(sandbox, "get", "node", h200)["metadata"]["labels"]
        assert labels["nvidia.com/gpu.product"] == "NVIDIA-H200"
        for name, gpu_type in (("on-h200", "h200"), ("on-l40s", "l40s"), ("on-a100", "a100")):
            job = make_job(name).image("none").gpus(2).gpu_type(gpu_type).command("true")
            create(sandbox, namespace, job.manifest())
        placed = {
            name: wait_phase(sandbox, namespace, name, "Succeeded", "Failed", timeout=90)
            for name in ("on-h200", "on-l40s", "on-a100")
        }
        assert placed["on-h200"]["status"]["nodesAllocated"] == [h200]
        assert placed["on-l40s"]["status"]["nodesAllocated"] == [l40s]
        (a100_node,) = placed["on-a100"]["status"]["nodesAllocated"]
        node_labels = kubectl_json(sandbox, "get", "node", a100_node)["metadata"]["labels"]
        assert node_labels["gryvia.io/gpu-family"] == "A100"
        assert node_labels["gryvia.io/gpu"] in ("A100-80G", "A100-40G")
    finally:
        for name in added:
            sandbox.kubectl_run("delete", "node", name, check=False)
