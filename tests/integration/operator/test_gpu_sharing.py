"""A time-slicing policy (replicas 4) on one H100 node: the device plugin ConfigMap and the
node label appear, the sandbox's simulated plugin advertises 4x the GPUs, `gryvia capacity`
still counts that node's GPUs once, and deleting the policy takes it all back."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import kubectl_json
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

CONFIG = "gryvia-device-plugin-config"
FLAGS = (
    "--enable-gpu-sharing",
    "--simulate-device-plugin",
    "--device-plugin-config-namespace=default",
)


def _restart(operator: OperatorProcess, *flags: str) -> None:
    operator.stop()
    operator.extra = tuple(flags)
    operator.start()


@pytest.fixture(scope="module")
def sharing_operator(operator: OperatorProcess) -> Iterator[OperatorProcess]:
    """The session's operator with GPU sharing (simulated plugin); given back after."""
    operator.ensure_running()
    _restart(operator, *FLAGS)
    try:
        yield operator
    finally:
        _restart(operator)


@pytest.fixture
def env(sandbox: SandboxHandle, tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    out |= {
        "KUBECONFIG": str(sandbox.kubeconfig),
        "GRYVIA_CONFIG_HOME": str(tmp_path / "config"),
        "NO_COLOR": "1",
    }
    return out


def _node(sandbox: SandboxHandle, name: str) -> dict[str, Any]:
    node: dict[str, Any] = kubectl_json(sandbox, "get", "node", name)
    return node


def _h100(sandbox: SandboxHandle, env: dict[str, str]) -> dict[str, Any]:
    done = run_gryvia("capacity", "-o", "json", env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    row: dict[str, Any] = next(t for t in report["types"] if t["gpuType"] == "H100")
    return row


def test_time_slicing_one_h100_node_counts_its_gpus_once(
    sandbox: SandboxHandle, sharing_operator: OperatorProcess, env: dict[str, str]
) -> None:
    nodes = kubectl_json(sandbox, "get", "nodes", "-l", "nvidia.com/gpu.product")["items"]
    h100 = sorted(
        n["metadata"]["name"]
        for n in nodes
        if "H100" in n["metadata"]["labels"]["nvidia.com/gpu.product"]
        and "nvidia.com/mig.strategy" not in n["metadata"]["labels"]
    )
    target = h100[0]
    physical = int(_node(sandbox, target)["metadata"]["labels"]["nvidia.com/gpu.count"])
    before = _h100(sandbox, env)
    policy = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaGPUSharingPolicy",
        "metadata": {"name": "ts4"},
        "spec": {
            "strategy": "time-slicing",
            "nodeSelector": {"matchLabels": {"kubernetes.io/hostname": target}},
            "timeSlicing": {"replicas": 4},
        },
    }
    sandbox.apply(policy)
    try:
        cm = wait_for(
            lambda: (
                sandbox.kubectl_json("get", "configmap", "-n", "default", CONFIG)
                if sandbox.kubectl_run(
                    "get", "configmap", "-n", "default", CONFIG, check=False
                ).returncode
                == 0
                else None
            ),
            timeout=60,
            what="the device plugin ConfigMap",
        )
        config = yaml.safe_load(cm["data"]["gryvia-ts-4"])
        assert config["version"] == "v1"
        assert config["sharing"]["timeSlicing"]["resources"] == [
            {"name": "nvidia.com/gpu", "replicas": 4}
        ]

        def shared() -> dict[str, Any] | None:
            node = _node(sandbox, target)
            labels = node["metadata"]["labels"]
            ok = (
                labels.get("nvidia.com/device-plugin.config") == "gryvia-ts-4"
                and labels.get("nvidia.com/gpu.replicas") == "4"
                and node["status"]["allocatable"].get("nvidia.com/gpu") == str(physical * 4)
            )
            return node if ok else None

        wait_for(shared, timeout=60, what=f"{target} labelled and advertising {physical * 4}")
        others = [n for n in h100 if n != target]
        for name in others:
            assert (
                "nvidia.com/device-plugin.config" not in _node(sandbox, name)["metadata"]["labels"]
            )
        row = wait_for(
            lambda: (r := _h100(sandbox, env))["sharedNodes"] and r, what="capacity sees it"
        )
        assert row["total"] == before["total"]  # the shared node's GPUs counted once
        assert row["sharedNodes"] == [f"{target} x4"]
        status = wait_for(
            lambda: kubectl_json(sandbox, "get", "gryviagpusharingpolicy", "ts4").get("status"),
            what="the policy's status",
        )
        assert status["configName"] == "gryvia-ts-4" and status["nodes"] == [target]
    finally:
        sandbox.kubectl_run("delete", "gryviagpusharingpolicy", "ts4", check=False)

    def restored() -> bool:
        node = _node(sandbox, target)
        labels = node["metadata"]["labels"]
        return (
            "nvidia.com/device-plugin.config" not in labels
            and "nvidia.com/gpu.replicas" not in labels
            and node["status"]["allocatable"].get("nvidia.com/gpu") == str(physical)
        )

    wait_for(restored, timeout=60, what=f"{target} back to {physical} unshared GPUs")
    sandbox.kubectl_run("delete", "configmap", "-n", "default", CONFIG, check=False)
