"""The --nodes spec and the simulated Node objects."""

from __future__ import annotations

import pytest

from gryvia_cli.sandbox.nodespec import (
    DEFAULT_NODES,
    NodeGroup,
    NodeSpecError,
    build_nodes,
    parse_node_spec,
)


def test_default_spec_parses_into_mixed_fleet() -> None:
    groups = parse_node_spec(DEFAULT_NODES)
    assert groups == [
        NodeGroup(2, "H100", 8),
        NodeGroup(2, "A100-80G", 8),
        NodeGroup(2, "L40", 4),
        NodeGroup(1, None, 0),
    ]


def test_types_are_case_insensitive() -> None:
    assert parse_node_spec("1xh100:4,3xCPU") == [NodeGroup(1, "H100", 4), NodeGroup(3, None, 0)]


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("2H100:8", "expected <count>x<type>"),
        ("2xB200:8", "unknown type 'B200'"),
        ("2xH100", "give 1..16 GPUs"),
        ("2xH100:32", "give 1..16 GPUs"),
        ("0xH100:8", "node count must be 1..1000"),
        ("1xcpu:2", "cpu nodes have no GPUs"),
        ("", "cannot read ''"),
    ],
)
def test_bad_specs_name_the_part_and_fix(spec: str, fragment: str) -> None:
    with pytest.raises(NodeSpecError, match="--nodes") as err:
        parse_node_spec(spec)
    assert fragment in str(err.value)


def test_nodes_carry_gfd_labels_capacity_and_unique_names() -> None:
    nodes = build_nodes(parse_node_spec("2xH100:8,1xL40:4,1xH100:8,1xcpu"))
    names = [n["metadata"]["name"] for n in nodes]
    assert names == ["gpu-h100-0", "gpu-h100-1", "gpu-l40-0", "gpu-h100-2", "cpu-0"]
    h100 = nodes[0]
    labels = h100["metadata"]["labels"]
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert labels["nvidia.com/gpu.count"] == "8"
    assert labels["nvidia.com/gpu.memory"] == "81559"
    assert labels["feature.node.kubernetes.io/rdma.capable"] == "true"
    assert h100["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert "feature.node.kubernetes.io/rdma.capable" not in nodes[2]["metadata"]["labels"]
    cpu = nodes[-1]
    assert "nvidia.com/gpu" not in cpu["status"]["capacity"]
    assert "nvidia.com/gpu.present" not in cpu["metadata"]["labels"]


def test_label_values_are_strings() -> None:
    for node in build_nodes(parse_node_spec(DEFAULT_NODES)):
        assert all(isinstance(v, str) for v in node["metadata"]["labels"].values())


def test_taken_names_are_skipped() -> None:
    nodes = build_nodes(parse_node_spec("2xH100:8"), taken={"gpu-h100-0", "gpu-h100-1"})
    assert [n["metadata"]["name"] for n in nodes] == ["gpu-h100-2", "gpu-h100-3"]
