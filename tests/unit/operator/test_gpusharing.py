"""GPU sharing, pure: config keys and the device plugin configuration, node assignment, the
owned labels, the sandbox's simulated plugin, and capacity counting physical GPUs once."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from gryvia_cli.core.capacity import compute_capacity
from gryvia_cli.core.nodes import gpu_nodes
from gryvia_operator.api.gpusharing import GryviaGPUSharingPolicy
from gryvia_operator.handlers.gpusharing import slim_node
from gryvia_operator.reconcile.gpusharing import (
    advertised_gpus,
    assign,
    build_configmap,
    config_key,
    label_patch,
    plugin_config,
    policy_status,
    simulated_status_patch,
)
from tests.unit.cli.helpers import make_node

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def policy(name: str = "ts", **spec: Any) -> GryviaGPUSharingPolicy:
    base: dict[str, Any] = {
        "strategy": "time-slicing",
        "nodeSelector": {"matchLabels": {"pool": "shared"}},
        "timeSlicing": {"replicas": 4},
    }
    return GryviaGPUSharingPolicy.model_validate({"metadata": {"name": name}, "spec": base | spec})


def node(name: str, gpus: int = 8, **labels: str) -> dict[str, Any]:
    obj = make_node(name).gpus(gpus).product().obj()
    obj["metadata"]["labels"] |= labels
    return obj


def test_time_slicing_needs_replicas_and_bounds_them() -> None:
    with pytest.raises(ValidationError, match=r"timeSlicing\.replicas"):
        GryviaGPUSharingPolicy.model_validate(
            {"metadata": {"name": "x"}, "spec": {"strategy": "time-slicing", "nodeSelector": {}}}
        )
    with pytest.raises(ValidationError):
        policy(timeSlicing={"replicas": 1})


def test_the_configmap_has_one_key_per_configuration_in_the_device_plugin_shape() -> None:
    mig = policy("mig", strategy="mig", timeSlicing=None, mig={"strategy": "single"})
    assert config_key(policy()) == "gryvia-ts-4" and config_key(mig) == "gryvia-mig-single"
    cm = build_configmap([policy("b"), policy("a"), mig], "plugin", "gpu-operator")
    assert list(cm["data"]) == ["gryvia-mig-single", "gryvia-ts-4"]
    assert (
        yaml.safe_load(cm["data"]["gryvia-ts-4"])
        == plugin_config(policy())
        == {
            "version": "v1",
            "flags": {"migStrategy": "none"},
            "sharing": {
                "timeSlicing": {
                    "renameByDefault": False,
                    "failRequestsGreaterThanOne": False,
                    "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
                }
            },
        }
    )
    assert plugin_config(mig) == {"version": "v1", "flags": {"migStrategy": "single"}}


def test_assignment_labels_and_their_removal() -> None:
    shared, other, cpu = node("a", pool="shared"), node("b"), make_node("c").obj()
    cpu["metadata"]["labels"]["pool"] = "shared"
    chosen = assign([policy("z"), policy("y")], [shared, other, cpu])
    assert {n: p.name for n, p in chosen.items()} == {"a": "y"}  # first by name; GPU nodes only
    patch = label_patch(shared, chosen["a"], simulate=True)
    assert patch == {
        "gryvia.io/gpu-sharing": "y",
        "nvidia.com/device-plugin.config": "gryvia-ts-4",
        "nvidia.com/gpu.replicas": "4",
        "nvidia.com/gpu.sharing-strategy": "time-slicing",
    }
    assert "nvidia.com/gpu.replicas" not in (label_patch(shared, chosen["a"], simulate=False) or {})
    assert label_patch(other, None, simulate=True) is None  # never ours: left alone
    shared["metadata"]["labels"] |= {k: v for k, v in patch.items() if v}
    assert label_patch(shared, chosen["a"], simulate=True) is None
    removal = label_patch(shared, None, simulate=True)
    assert removal is not None and set(removal.values()) == {None}
    mig = policy("m", strategy="mig", timeSlicing=None)
    assert label_patch(other, mig, simulate=True) == {
        "gryvia.io/gpu-sharing": "m",
        "nvidia.com/device-plugin.config": "gryvia-mig-mixed",
        "nvidia.com/mig.config": "all-1g.10gb",
    }


def test_the_simulated_plugin_advertises_physical_times_replicas() -> None:
    n = node("a", 2, pool="shared")
    assert advertised_gpus(n, policy()) == 8
    assert simulated_status_patch(n, policy()) == {
        "status": {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "8"}}
    }
    assert simulated_status_patch(n, None) is None  # already 2
    assert simulated_status_patch(n, policy("m", strategy="mig", timeSlicing=None)) is None
    status = policy_status(policy(), ["a"], None, NOW)
    assert status["nodes"] == ["a"] and status["conditions"][0]["reason"] == "Applied"
    failed = policy_status(policy(), [], "namespace gpu-operator not found", NOW)
    assert failed["conditions"][0]["status"] == "False"


def test_the_node_index_keeps_all_a_pass_reads() -> None:
    full = node("a", 2, pool="shared")
    slim = slim_node(full)
    assert slim["metadata"] == {"name": "a", "labels": full["metadata"]["labels"]}
    shared, mig = policy(), policy("m", strategy="mig", timeSlicing=None)
    assert assign([shared], [slim]) == assign([shared], [full]) == {"a": shared}
    for chosen in (shared, mig, None):
        assert simulated_status_patch(slim, chosen) == simulated_status_patch(full, chosen)
        assert label_patch(slim, chosen, simulate=True) == label_patch(full, chosen, simulate=True)


def test_capacity_counts_a_time_sliced_node_s_physical_gpus_once() -> None:
    n = node("a", 2, pool="shared", **{"nvidia.com/gpu.replicas": "4"})
    n["status"]["allocatable"]["nvidia.com/gpu"] = n["status"]["capacity"]["nvidia.com/gpu"] = "8"
    [row] = gpu_nodes([], [n])
    assert (row.gpus, row.replicas) == (2, 4)
    report = compute_capacity([row], {"a": 5}, [], [])  # five pods of one shared unit each
    [h100] = report.types
    assert (h100.total, h100.allocated, h100.free) == (2, 2, 0)
    assert h100.as_dict()["sharedNodes"] == ["a x4"]
    assert "time-sliced, physical GPUs counted: a x4" in h100.notes
    three = compute_capacity([row], {"a": 3}, [], [])
    assert (three.types[0].allocated, three.types[0].free) == (1, 1)
