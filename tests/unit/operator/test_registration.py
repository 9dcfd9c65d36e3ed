"""GPU node registration: GFD labels -> GryviaGpuNode, node labels and readiness."""

from __future__ import annotations

from gryvia_operator.reconcile.registration import (
    GpuNodeView,
    gpu_node_spec,
    gpu_node_status,
    registration_for_node,
)
from tests.builders import H100_PRODUCT, NodeBuilder, make_node


def _h100() -> NodeBuilder:
    return make_node("gpu-1").gpus(8).product(H100_PRODUCT).rdma_capable()


def test_spec_from_gfd_labels() -> None:
    spec = gpu_node_spec(_h100().view())
    assert spec == {
        "nodeName": "gpu-1",
        "gpuType": "H100",
        "gpuCount": 8,
        "memoryGB": 80,
        "rdma": True,
        "sriov": False,
    }


def test_products_are_normalised_and_unknown_kept() -> None:
    for product, expected in (
        ("NVIDIA-A100-SXM4-80GB", "A100-80G"),
        ("NVIDIA-A100-SXM4-40GB", "A100-40G"),
        ("NVIDIA-L40S", "L40S"),
        ("NVIDIA-L40", "L40"),
        ("NVIDIA-H200", "H200"),
        ("Tesla-T4", "T4"),
        ("Tesla-V100-SXM2-32GB", "V100"),
        ("NVIDIA-A10", "A10"),
        ("NVIDIA-B200", "B200"),
        ("NVIDIA-RTX-A6000", "RTX-A6000"),
    ):
        spec = gpu_node_spec(make_node().gpus(1).product(product).view())
        assert spec is not None and spec["gpuType"] == expected, product


def test_not_a_gpu_node() -> None:
    assert gpu_node_spec(make_node().view()) is None
    no_product = make_node().label("nvidia.com/gpu.present", "true").view()
    assert gpu_node_spec(no_product) is None


def test_count_falls_back_to_allocatable() -> None:
    node = make_node().product().gpus(4)
    obj = node.obj()
    del obj["metadata"]["labels"]["nvidia.com/gpu.count"]
    from gryvia_operator.reconcile.views import NodeView

    spec = gpu_node_spec(NodeView.from_node(obj))
    assert spec is not None and spec["gpuCount"] == 4


def test_readiness_phases() -> None:
    spec = {"gpuCount": 8}
    ready = gpu_node_status(spec, _h100().view())
    assert ready == {
        "phase": "Ready",
        "message": "8 GPU(s) allocatable, driver 550.127.08",
        "driverVersion": "550.127.08",
        "cudaVersion": "12.4",
    }
    degraded = gpu_node_status(spec, make_node().product().gpus(8, allocatable=3).view())
    assert degraded["phase"] == "Degraded"
    assert degraded["message"].startswith("only 3 of 8 GPUs are allocatable")
    waiting = gpu_node_status(spec, make_node().product().gpus(8, allocatable=0).view())
    assert waiting["phase"] == "WaitingForDrivers"


def test_new_gpu_node_is_registered_and_labelled() -> None:
    reg = registration_for_node(_h100().view(), None)
    assert reg.create is not None
    assert reg.create["metadata"]["name"] == "gpu-1"
    assert reg.create["metadata"]["labels"] == {"gryvia.io/auto-registered": "true"}
    assert reg.create["metadata"]["ownerReferences"][0]["kind"] == "Node"
    assert reg.status is not None and reg.status["phase"] == "Ready"
    assert reg.node_labels == {
        "gryvia.io/gpu": "H100",
        "gryvia.io/gpu-family": "H100",
        "gryvia.io/gpu-count": "8",
        "gryvia.io/rdma": "true",
        "gryvia.io/sriov": "false",
        "gryvia.io/gpu-memory": "80",
    }


def test_registered_node_in_sync_needs_nothing() -> None:
    first = registration_for_node(_h100().view(), None)
    assert first.create is not None and first.status is not None
    existing = GpuNodeView("gpu-1", True, first.create["spec"], first.status)
    labelled = _h100()
    for key, value in first.node_labels.items():
        labelled.label(key, str(value))
    assert registration_for_node(labelled.view(), existing).empty


def test_changed_node_updates_only_owned_spec_keys() -> None:
    existing = GpuNodeView(
        "gpu-1",
        True,
        {"nodeName": "gpu-1", "gpuType": "H100", "gpuCount": 4, "interconnect": "NVLink"},
    )
    reg = registration_for_node(_h100().view(), existing)
    assert reg.spec_patch is not None
    patch = reg.spec_patch["spec"]
    assert patch["gpuCount"] == 8
    assert "interconnect" not in patch
    assert reg.node_labels["gryvia.io/interconnect"] == "NVLink"


def test_hand_made_gpunode_is_never_written_but_drives_labels() -> None:
    hand = GpuNodeView(
        "gpu-1",
        False,
        {"gpuType": "H200", "gpuCount": 4, "labels": {"gryvia.io/pool": "a", "x": "y"}},
    )
    reg = registration_for_node(_h100().view(), hand)
    assert reg.create is None and reg.spec_patch is None and reg.status is None and not reg.delete
    assert reg.node_labels["gryvia.io/gpu"] == "H200"
    assert reg.node_labels["gryvia.io/pool"] == "a"
    assert "x" not in reg.node_labels


def test_node_that_stops_being_a_gpu_node_is_cleaned_up() -> None:
    node = make_node("gpu-1").label("gryvia.io/gpu", "H100").label("gryvia.io/rdma", "true").view()
    existing = GpuNodeView("gpu-1", True, {"gpuType": "H100"})
    reg = registration_for_node(node, existing)
    assert reg.delete
    assert reg.node_labels == {"gryvia.io/gpu": None, "gryvia.io/rdma": None}
    plain = registration_for_node(make_node().view(), None)
    assert plain.empty
