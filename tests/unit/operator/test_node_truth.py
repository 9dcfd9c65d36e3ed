"""Issue 38, failures 7 and 8: a GryviaGpuNode tells the truth about a NotReady node and a
node in MIG mixed mode, and a job that wants more whole GPUs than a mixed node has left is
told about the MIG slices."""

from __future__ import annotations

from gryvia_operator.api.pending import never_fits
from gryvia_operator.reconcile.registration import gpu_node_status
from gryvia_operator.reconcile.views import node_inventory
from tests.builders import make_node


def test_a_node_that_is_not_ready_is_not_a_ready_gpu_node() -> None:
    node = make_node("gpu-1").product().gpus(8).not_ready().view()
    status = gpu_node_status({"gpuCount": 8}, node)
    assert status["phase"] == "NotReady"
    assert "the node is not Ready" in status["message"]


def _mixed() -> object:
    obj = make_node("mixed-1").product().gpus(8, allocatable=2).gpu_type("H100").obj()
    obj["status"]["allocatable"]["nvidia.com/mig-2g.20gb"] = "18"
    from gryvia_operator.reconcile.views import NodeView

    return NodeView.from_node(obj)


def test_mig_mixed_mode_is_ready_with_whole_gpus_and_slices_counted() -> None:
    status = gpu_node_status({"gpuCount": 8}, _mixed())  # type: ignore[arg-type]
    assert status["phase"] == "Ready"
    assert status["message"].startswith(
        "MIG mixed mode: 2 whole GPU(s) and 18 MIG slice(s) allocatable (18x 2g.20gb)"
    )
    assert "device plugin" not in status["message"]


def test_a_job_too_big_for_a_mixed_nodes_whole_gpus_is_told_about_the_slices() -> None:
    inventory = node_inventory([_mixed()])  # type: ignore[list-item]
    found = never_fits("H100", 8, 1, inventory)
    assert found is not None and found.kind == "TooLarge"
    assert found.message == (
        "each pod needs 8 H100, the largest H100 node has 2 (the rest of its GPUs are "
        "partitioned into MIG slices: H100-MIG-2G.20GB)"
    )


def test_a_node_whose_pods_hold_more_gpus_than_it_has_now_is_over_committed() -> None:
    node = make_node("gpu-1").product().gpus(8, allocatable=4).view()
    status = gpu_node_status({"gpuCount": 8}, node, held=8)
    assert status["phase"] == "Degraded"
    assert status["message"].startswith(
        "over-committed: its pods hold 8 GPUs, only 4 are allocatable now"
    )
    assert gpu_node_status({"gpuCount": 8}, node, held=4)["message"].startswith("only 4 of 8")


def test_a_cordoned_node_keeps_its_phase_and_says_it_takes_no_new_pods() -> None:
    node = make_node("gpu-1").product().gpus(8).cordoned().view()
    status = gpu_node_status({"gpuCount": 8}, node)
    assert status["phase"] == "Ready"  # its GPUs are fine; the node takes no new pods
    assert status["message"].startswith(
        "cordoned (SchedulingDisabled): its GPUs take no new pods; 8 GPU(s) allocatable"
    )
    uncordoned = make_node("gpu-1").product().gpus(8).view()
    assert "cordoned" not in gpu_node_status({"gpuCount": 8}, uncordoned)["message"]


def test_a_node_in_maintenance_gives_its_reason() -> None:
    marked = make_node("gpu-1").product().gpus(8).in_maintenance("firmware upgrade")
    status = gpu_node_status({"gpuCount": 8}, marked.view())
    assert status["phase"] == "Ready"
    assert status["message"].startswith(
        "in maintenance: firmware upgrade (cordoned, SchedulingDisabled); 8 GPU(s) allocatable"
    )
    down = make_node("gpu-2").product().gpus(8).not_ready().cordoned().view()
    assert gpu_node_status({"gpuCount": 8}, down)["phase"] == "NotReady"
