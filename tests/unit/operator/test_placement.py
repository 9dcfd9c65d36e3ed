"""Node selection: filters, scoring, all-or-nothing, and the explanation of a miss."""

from __future__ import annotations

from gryvia_operator.reconcile.placement import Requirements, gpu_usage, select_nodes
from tests.builders import gpu_node, make_job, make_node, make_pod

H100 = [gpu_node("h100-a", "H100"), gpu_node("h100-b", "H100")]
FLEET = [*H100, gpu_node("a100-a", "A100-80G"), gpu_node("l40-a", "L40", 4)]


def test_picks_a_node_of_the_requested_type() -> None:
    placement = select_nodes(make_job().gpus(8).gpu_type("H100").model(), FLEET, [])
    assert placement.ok
    assert placement.nodes[0].startswith("h100-")
    assert placement.gpus_per_pod == 8
    assert placement.evaluated == 4


def test_any_type_places_anywhere_with_room() -> None:
    placement = select_nodes(make_job().gpus(4).gpu_type("any").model(), FLEET, [])
    assert placement.ok


def test_no_fit_message_names_requirements_and_closest_node() -> None:
    used = [make_pod("p").on("h100-a").gpus(4).view()]
    job = make_job().gpus(8).gpu_type("H100").network("rdma").model()
    placement = select_nodes(job, [gpu_node("h100-a", "H100")], used)
    assert not placement.ok
    assert placement.message == (
        'no nodes meet the job requirements (gpuType="H100", gpus=8, network="rdma", '
        "1 nodes evaluated); best: h100-a lacks gryvia.io/rdma=true, has 4/8 free H100"
    )


def test_closest_node_prefers_the_right_type() -> None:
    nodes = [gpu_node("a100", "A100-80G"), gpu_node("h100", "H100", 4)]
    placement = select_nodes(make_job().gpus(8).gpu_type("H100").model(), nodes, [])
    assert placement.message.endswith("best: h100 has 4/4 free H100")


def test_unknown_type_explains_the_type() -> None:
    placement = select_nodes(make_job().gpus(8).gpu_type("V100").model(), FLEET, [])
    assert 'gpuType="V100"' in placement.message
    assert "is A100-80G, not V100" in placement.message or "is H100, not V100" in placement.message


def test_used_gpus_of_running_pods_count_terminal_ones_do_not() -> None:
    pods = [
        make_pod("a").on("h100-a").gpus(8).view(),
        make_pod("b").on("h100-b").gpus(8).phase("Succeeded").view(),
        make_pod("c").gpus(8).view(),  # not bound
    ]
    assert gpu_usage(pods) == {"h100-a": 8}
    placement = select_nodes(make_job().gpus(8).gpu_type("H100").model(), H100, pods)
    assert placement.nodes == ("h100-b",)


def test_distributed_needs_distinct_nodes() -> None:
    job = make_job().gpus(8).gpu_type("H100").distributed(3).model()
    placement = select_nodes(job, H100, [])
    assert placement.message.startswith("not enough nodes: need 3, found 2")
    two = make_job().gpus(8).gpu_type("H100").distributed(2).model()
    assert sorted(select_nodes(two, H100, []).nodes) == ["h100-a", "h100-b"]


def test_gpus_per_node_overrides_gpus() -> None:
    job = make_job().gpus(1).gpu_type("L40").distributed(1, gpus_per_node=4).model()
    assert select_nodes(job, FLEET, []).nodes == ("l40-a",)
    job = make_job().gpus(1).gpu_type("L40").distributed(1, gpus_per_node=5).model()
    assert "has 4/4 free L40" in select_nodes(job, FLEET, []).message


def test_not_ready_and_cordoned_nodes_are_skipped() -> None:
    nodes = [
        make_node("down").gpus(8).gpu_type("H100").not_ready().view(),
        make_node("cordoned").gpus(8).gpu_type("H100").cordoned().view(),
    ]
    placement = select_nodes(make_job().gpus(1).gpu_type("H100").model(), nodes, [])
    assert "is cordoned" in placement.message or "is not Ready" in placement.message


def test_node_selector_and_network_labels() -> None:
    nodes = [
        make_node("plain").gpus(8).gpu_type("H100").view(),
        make_node("fast").gpus(8).gpu_type("H100").rdma().label("zone", "a").view(),
    ]
    job = make_job().gpus(8).gpu_type("H100").network("rdma").node_selector(zone="a").model()
    assert select_nodes(job, nodes, []).nodes == ("fast",)
    sriov = make_job().gpus(8).network("sriov").model()
    assert "lacks gryvia.io/sriov=true" in select_nodes(sriov, nodes, []).message


def test_gpu_count_label_wins_over_allocatable() -> None:
    node = make_node("n").gpus(8, allocatable=8).label("gryvia.io/gpu-count", "2").view()
    assert node.total_gpus == 2
    assert "has 2/2 free" in select_nodes(make_job().gpus(4).model(), [node], []).message


def test_spread_prefers_free_gpus_and_pack_prefers_the_fullest() -> None:
    pods = [make_pod("a").on("h100-a").gpus(6).view()]
    spread = make_job().gpus(2).gpu_type("H100").model()
    assert select_nodes(spread, H100, pods).nodes == ("h100-b",)
    pack = make_job().gpus(2).gpu_type("H100").annotate("gryvia.io/placement-strategy", "pack")
    assert select_nodes(pack.model(), H100, pods).nodes == ("h100-a",)


def test_requirements_of_a_job() -> None:
    req = Requirements.of(make_job().gpus(2).gpu_type("any").model())
    assert req.gpu_type == ""
    assert req.nodes == 1


def test_no_nodes_at_all() -> None:
    placement = select_nodes(make_job().gpus(1).model(), [], [])
    assert placement.message.endswith("0 nodes evaluated)")
