"""A time-slicing policy (replicas 4) on one H100 node: the device plugin ConfigMap and the
node label appear, the sandbox's simulated plugin advertises 4x the GPUs, `gryvia capacity`
still counts that node's GPUs once, a job holding one shared unit is billed 0.25 GPU (its usage
record, `gryvia usage`, `gryvia cost`), and deleting the policy takes it all back."""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, kubectl_json, wait_phase
from tests.support.chartaccount import ACCOUNT
from tests.support.chartaccount import NAMESPACE as ACCOUNT_NS
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

CONFIG = "gryvia-device-plugin-config"
SIMULATED_PLUGIN = "gryvia-it-simulated-device-plugin"
FLAGS = (
    "--enable-gpu-sharing",
    "--simulate-device-plugin",
    "--device-plugin-config-namespace=default",
)
pytestmark = [pytest.mark.integration, pytest.mark.sandbox, pytest.mark.operator(*FLAGS)]


@pytest.fixture(scope="module")
def sharing_operator(
    sandbox: SandboxHandle, operator: OperatorProcess
) -> Iterator[OperatorProcess]:
    """The session's operator, granted what GPU sharing's simulated plugin needs; the
    module's `operator` marker runs it with FLAGS (a configuration of its own, ordered last).

    The simulated plugin advertises GPUs on Nodes' status, which on a real cluster the NVIDIA
    device plugin's kubelet does: the chart does not grant it, so the test grants its account
    `patch nodes/status` for the module (`--simulate-device-plugin` needs it at start)."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": SIMULATED_PLUGIN},
        "rules": [{"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": SIMULATED_PLUGIN},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole"}
        | {"name": SIMULATED_PLUGIN},
        "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": ACCOUNT_NS}],
    }
    sandbox.apply(role, binding)
    who = f"system:serviceaccount:{ACCOUNT_NS}:{ACCOUNT}"
    can = ("auth", "can-i", "patch", "nodes", "--subresource=status", "--as", who)
    wait_for(
        lambda: sandbox.kubectl_run(*can, check=False).stdout.strip() == "yes",
        timeout=30,
        what="the simulated plugin's grant",
    )
    try:
        yield operator  # each test's marker restarts it with FLAGS once the grant holds
    finally:
        for kind in ("clusterrolebinding", "clusterrole"):
            sandbox.kubectl_run("delete", kind, SIMULATED_PLUGIN, "--ignore-not-found")


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


def _h100_nodes(sandbox: SandboxHandle) -> list[str]:
    """The sandbox's whole-GPU H100 nodes, by name."""
    nodes = kubectl_json(sandbox, "get", "nodes", "-l", "nvidia.com/gpu.product")["items"]
    return sorted(
        n["metadata"]["name"]
        for n in nodes
        if "H100" in n["metadata"]["labels"]["nvidia.com/gpu.product"]
        and "nvidia.com/mig.strategy" not in n["metadata"]["labels"]
    )


def _physical(sandbox: SandboxHandle, node: str) -> int:
    return int(_node(sandbox, node)["metadata"]["labels"]["nvidia.com/gpu.count"])


def _share(sandbox: SandboxHandle, name: str, target: str) -> None:
    """Apply a time-slicing policy `name` of replicas 4 on node `target` alone."""
    sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaGPUSharingPolicy",
            "metadata": {"name": name},
            "spec": {
                "strategy": "time-slicing",
                "nodeSelector": {"matchLabels": {"kubernetes.io/hostname": target}},
                "timeSlicing": {"replicas": 4},
            },
        }
    )


def _wait_shared(sandbox: SandboxHandle, target: str, physical: int) -> None:
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


def _unshare(sandbox: SandboxHandle, name: str, target: str, physical: int) -> None:
    """Delete the policy and wait until `target` is back to its unshared GPUs."""
    sandbox.kubectl_run("delete", "gryviagpusharingpolicy", name, check=False)

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


def test_time_slicing_one_h100_node_counts_its_gpus_once(
    sandbox: SandboxHandle, sharing_operator: OperatorProcess, env: dict[str, str]
) -> None:
    h100 = _h100_nodes(sandbox)
    target = h100[0]
    physical = _physical(sandbox, target)
    before = _h100(sandbox, env)
    made = run_gryvia(
        "sharing", "create", "ts4", "--strategy", "time-slicing", "--replicas", "4",
        "--node-selector", f"kubernetes.io/hostname={target}", env=env,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
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
        _wait_shared(sandbox, target, physical)
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
        listed = run_gryvia("sharing", "list", env=env)
        assert listed.returncode == 0, listed.stderr
        row_line = next(line for line in listed.stdout.splitlines() if line.startswith("ts4 "))
        assert "4 replicas" in row_line and target in row_line and "Applied" in row_line
    finally:
        _unshare(sandbox, "ts4", target, physical)


def _ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _json(env: dict[str, str], *args: str) -> Any:
    done = run_gryvia(*args, "-o", "json", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_job_holding_one_shared_unit_is_billed_a_quarter_gpu(
    sandbox: SandboxHandle,
    sharing_operator: OperatorProcess,
    env: dict[str, str],
    namespace: str,
) -> None:
    target = _h100_nodes(sandbox)[0]
    physical = _physical(sandbox, target)
    team = f"share-{uuid.uuid4().hex[:6]}"
    _share(sandbox, "ts4-billing", target)
    try:
        _wait_shared(sandbox, target, physical)
        sandbox.apply(
            {
                "apiVersion": "gryvia.io/v1alpha1",
                "kind": "GryviaQuota",
                "metadata": {"name": team},
                "spec": {"team": team, "namespaces": [namespace], "gpuQuota": {"maxGPUs": 8}},
            }
        )
        create(
            sandbox,
            namespace,
            sh_job(
                "shared",
                gpus=1,
                gpu_type="H100",
                script="sleep 20",
                nodeSelector={"kubernetes.io/hostname": target},
            ),
        )
        done = wait_phase(sandbox, namespace, "shared", "Succeeded", "Failed", timeout=180)
        assert done["status"]["phase"] == "Succeeded", done.get("status")
        name = f"usage-{done['metadata']['uid']}"

        def sealed() -> dict[str, Any] | None:
            found = sandbox.kubectl_run(
                "get", "gryviausagerecord", "-n", namespace, name, "-o", "json", check=False
            )
            record: dict[str, Any] = json.loads(found.stdout) if found.returncode == 0 else {}
            return record if (record.get("spec") or {}).get("final") else None

        spec = wait_for(sealed, timeout=120, what="the sealed usage record")["spec"]
        (pod,) = kubectl_json(
            sandbox, "get", "pods", "-n", namespace, "-l", "gryvia.io/job=shared"
        )["items"]
        assert pod["spec"]["nodeName"] == target
        assert pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"
        ran = pod["status"]["containerStatuses"][0]["state"]["terminated"]
        hours = (_ts(ran["finishedAt"]) - _ts(ran["startedAt"])).total_seconds() / 3600
        catalog = kubectl_json(sandbox, "get", "gryviagpusku", spec["sku"])["spec"]
        rate = float(catalog["hourlyRate"])
        assert catalog["gpuType"] == "H100" and spec["rate"] == rate
        # one unit of a GPU advertised as 4: a quarter of a GPU, at the H100's rate
        assert spec["gpus"] == 1 and spec["physicalGPUs"] == 0.25
        assert spec["gpuHours"] == pytest.approx(0.25 * hours, abs=1e-6)
        assert spec["cost"] == pytest.approx(rate * 0.25 * hours, abs=1e-6)

        usage = _json(env, "usage", "--group-by", "job")
        (row,) = [i for i in usage["items"] if i["job"] == f"{namespace}/shared"]
        assert row["gpuHours"] == pytest.approx(spec["gpuHours"], abs=1e-4)
        assert row["cost"] == pytest.approx(spec["cost"], abs=1e-4)
        assert row["cost"] < rate * hours / 2  # not billed as a whole GPU
        cost = _json(env, "cost", team, "--period", "month")
        (item,) = [i for i in cost["items"] if i["team"] == team]
        assert item["spent"] == pytest.approx(spec["cost"], abs=1e-4)
        assert item["gpuHours"] == pytest.approx(spec["gpuHours"], abs=1e-4)
    finally:
        sandbox.kubectl_run("delete", "gryviaquota", team, "--ignore-not-found", check=False)
        _unshare(sandbox, "ts4-billing", target, physical)
