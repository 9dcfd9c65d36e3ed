"""Sizing one pod from the directives, as Slurm sizes a node (nodes, tasks, GPUs, CPUs, memory)."""

from __future__ import annotations

import pytest

from gryvia_cli.sbatch.resources import Resources, resolve
from tests.unit.sbatch.helpers import codes, parse

GIB = 2**30

# The cases are module constants so that the Slurm oracle (tests/integration/
# test_slurm_oracle.py) submits the same directives to real Slurm.
TASK_CASES: list[tuple[tuple[str, ...], int, int]] = [
    (("-N 2", "--ntasks-per-node=4"), 2, 4),
    (("-N 2", "--tasks-per-node=4"), 2, 4),
    (("-N 2", "-n 8"), 2, 4),
    (("-n 8", "--ntasks-per-node=4"), 2, 4),
    (("-N 2", "--ntasks-per-gpu=2", "--gpus-per-node=4"), 2, 8),
    (("-N 2", "-n 8", "--ntasks-per-node=4"), 2, 4),
]
GPU_CASES: list[tuple[tuple[str, ...], int, str | None, str | None]] = [
    (("--gres=gpu:1",), 1, None, "gres"),
    (("--gres=gpu",), 1, None, "gres"),
    (("-N 4", "--gres=gpu:a100:8"), 8, "a100", "gres"),
    (("--gres=gpu:0",), 0, None, None),
    (("--gpus-per-node=h100:4",), 4, "h100", "gpus-per-node"),
    (("--gpus-per-node=l40s",), 1, "l40s", "gpus-per-node"),
    (("-N 2", "--ntasks-per-node=4", "--gpus-per-task=1"), 4, None, "gpus-per-task"),
    (("-n 1", "--gpus-per-task=v100:2"), 2, "v100", "gpus-per-task"),
    (("-N 2", "-G 8"), 4, None, "gpus"),
    (("--gpus=1",), 1, None, None),
    (("-C h100", "--gres=gpu:2"), 2, "h100", "constraint"),
    (("-C a100|h100", "--gres=gpu:2"), 2, None, None),
    (("--gpus=4", "--gpus-per-node=4"), 4, None, None),
]
CPU_CASES: list[tuple[tuple[str, ...], int]] = [
    (("-c 8",), 8),
    (("-N 2", "--ntasks-per-node=4", "-c 2"), 8),
    (("--gres=gpu:4", "--cpus-per-gpu=12"), 48),
    (("--mincpus=16", "-c 2"), 16),
    (("--ntasks-per-node=3",), 3),
]
MEMORY_CASES: list[tuple[tuple[str, ...], int | None, bool]] = [
    (("--mem=32G",), 32 * GIB, False),
    (("--mem=4096",), 4 * GIB, False),
    (("--mem=0",), None, True),
    (("-N 2", "--ntasks-per-node=4", "-c 2", "--mem-per-cpu=6G"), 48 * GIB, False),
    (("--gres=gpu:4", "--mem-per-gpu=20G"), 80 * GIB, False),
    ((), None, False),
]


# The directive sets of the other tests below, for the oracle too.
ORACLE_EXTRA_CASES: list[tuple[str, ...]] = [
    ("--nodes=2-4",),
    ("-N 4", "-n 2"),
    ("-n 4",),
    ("-N 2", "-n 4", "--ntasks-per-node=4"),
    ("-N 2", "-n 6", "--ntasks-per-node=4"),
    ("-N 2", "--gpus=8"),
    ("-N 4", "--gpus=6"),
    ("--gpus=4",),
    ("--ntasks=1", "--gpus=4"),
    ("--gpus-per-task=v100:2",),
    ("-C h100", "--gres=gpu:a100:1"),
    ("-t 10:30",),
    ("-t 30", "-t 45"),
]


def sized(*directives: str) -> Resources:
    resources, issues = resolve(parse(*directives))
    assert resources is not None, issues
    return resources


def refused(*directives: str) -> list[str]:
    resources, issues = resolve(parse(*directives))
    assert resources is None
    return [i.code for i in issues if i.severity.value == "errors"]


def test_defaults_are_one_node_one_task_one_cpu() -> None:
    res = sized()
    assert (res.nodes, res.tasks_per_node, res.gpus_per_node, res.cpus_per_node) == (1, 1, 0, 1)
    assert (res.memory_bytes, res.memory_whole_node, res.time_limit_seconds) == (None, False, None)


# ---------------------------------------------------------------- nodes and tasks


def test_node_count_and_range_uses_the_minimum_with_a_warning() -> None:
    assert sized("-N 4").nodes == 4
    res, issues = resolve(parse("--nodes=2-4"))
    assert res is not None and res.nodes == 2
    assert codes(issues) == ["node-count-range"]


def test_invalid_node_counts_are_errors() -> None:
    assert refused("-N NUM_NODES") == ["invalid-node-count"]
    assert refused("-N 0") == ["invalid-node-count"]


@pytest.mark.parametrize(
    ("directives", "nodes", "tasks"),
    TASK_CASES,
)
def test_tasks_per_node(directives: tuple[str, ...], nodes: int, tasks: int) -> None:
    res = sized(*directives)
    assert (res.nodes, res.tasks_per_node) == (nodes, tasks)


def test_fewer_tasks_than_nodes_reduces_the_nodes_as_slurm_does() -> None:
    res, issues = resolve(parse("-N 4", "-n 2"))
    assert res is not None and (res.nodes, res.tasks_per_node) == (2, 1)
    assert codes(issues) == ["nodes-reduced"]


def test_tasks_without_nodes_stay_in_one_pod_with_a_warning() -> None:
    res, issues = resolve(parse("-n 4"))
    assert res is not None and (res.nodes, res.tasks_per_node) == (1, 4)
    assert codes(issues) == ["node-count-unspecified"]


# Tasks per pod where they do not divide evenly: Slurm's block layout, first nodes one more,
# as Slurm 22.05 lays them out on nodes sized for the job (the oracle's run test checks it).
LAYOUT_CASES: list[tuple[tuple[str, ...], tuple[int, ...]]] = [
    (("-N 2", "-n 5"), (3, 2)),
    (("-N 4", "-n 6"), (2, 2, 1, 1)),
    (("-N 3", "-n 7", "-c 2"), (3, 2, 2)),
    (("-N 2", "-n 5", "--ntasks-per-node=4"), (3, 2)),
]


@pytest.mark.parametrize(("directives", "layout"), LAYOUT_CASES)
def test_uneven_layouts_map_in_blocks(directives: tuple[str, ...], layout: tuple[int, ...]) -> None:
    res, issues = resolve(parse(*directives))
    assert res is not None, issues
    assert (res.nodes, res.layout, res.tasks_per_node) == (len(layout), layout, max(layout))
    assert codes(issues) == ["uneven-task-layout"]


def test_an_uneven_layout_sizes_every_pod_for_the_largest_share() -> None:
    res = sized("-N 3", "-n 7", "-c 2", "--mem-per-cpu=1G")
    assert (res.cpus_per_node, res.memory_bytes) == (6, 6 * GIB)


def test_more_tasks_than_the_per_node_maximum_allows_are_refused() -> None:
    # sbatch: "Requested node configuration is not available"
    assert refused("-N 2", "-n 10", "--ntasks-per-node=4") == ["too-many-tasks"]


def test_ntasks_per_node_with_ntasks_is_a_maximum() -> None:
    # sbatch(1): with --ntasks, --ntasks-per-node is a maximum per node (issue 39, finding 4)
    for extra, per_pod in (
        (("-n 4", "--ntasks-per-node=4"), 2),
        (("-n 6", "--ntasks-per-node=4"), 3),
    ):
        res, issues = resolve(parse("-N 2", *extra))
        assert res is not None and (res.nodes, res.tasks_per_node) == (2, per_pod), extra
        assert codes(issues) == []


def test_a_per_node_maximum_reserves_its_cpus_as_slurm_does() -> None:
    # Slurm 22.05 (the oracle): MinCPUsNode = --ntasks-per-node x -c even when -n is smaller
    res = sized("-N 2", "-n 6", "--ntasks-per-node=4", "-c 2", "--mem-per-cpu=1G")
    assert (res.tasks_per_node, res.cpus_per_node, res.memory_bytes) == (3, 8, 8 * GIB)


def test_ntasks_per_gpu_conflicts() -> None:
    assert refused("--ntasks-per-gpu=2", "--gpus-per-task=1") == ["conflicting-task-options"] * 2
    assert refused("--ntasks-per-gpu=2", "--ntasks-per-node=1") == ["conflicting-task-options"] * 2


# ---------------------------------------------------------------- GPUs


@pytest.mark.parametrize(
    ("directives", "gpus", "model", "source"),
    GPU_CASES,
)
def test_gpus_per_node(
    directives: tuple[str, ...], gpus: int, model: str | None, source: str | None
) -> None:
    res = sized(*directives)
    assert (res.gpus_per_node, res.gpu_type) == (gpus, model)
    if model:
        assert res.gpu_type_source == source


def test_gryvia_gpu_type_is_normalised_and_the_total_counts_nodes() -> None:
    res = sized("-N 4", "--gres=gpu:a100_80gb:8")
    assert res.gryvia_gpu_type == "A100-80G"
    assert res.total_gpus == 32


def test_a_gpu_total_that_does_not_split_evenly_is_refused() -> None:
    assert refused("-N 4", "--gpus=6") == ["uneven-gpu-split"]


def test_a_gpu_total_over_several_nodes_warns() -> None:
    _, issues = resolve(parse("-N 2", "--gpus=8"))
    assert codes(issues) == ["gpus-total-split"]


def test_a_gpu_total_without_nodes_warns() -> None:
    res, issues = resolve(parse("--gpus=4"))
    assert res is not None and res.gpus_per_node == 4
    assert codes(issues) == ["node-count-unspecified"]


def test_one_task_is_on_one_node_without_a_warning() -> None:
    # one task never spans nodes, so its GPUs are on its node (issue 39, finding 6)
    res, issues = resolve(parse("--ntasks=1", "--gpus=4"))
    assert res is not None and (res.nodes, res.gpus_per_node) == (1, 4)
    assert codes(issues) == []


@pytest.mark.parametrize(
    "directives",
    [
        ("--gres=gpu:4", "--gpus-per-node=8"),
        ("-N 2", "--gpus=4", "--gpus-per-node=4"),
        ("--gres=gpu:a100:2", "--gpus=h100:2"),
    ],
)
def test_conflicting_gpu_requests_are_refused(directives: tuple[str, ...]) -> None:
    resources, issues = resolve(parse(*directives))
    assert resources is None
    lines = {i.line for i in issues if i.code == "conflicting-gpu-options"}
    assert lines >= {len(directives), len(directives) + 1}


def test_gpus_per_task_without_a_task_count_is_refused_as_sbatch_does() -> None:
    # Slurm 22.05: "--gpus-per-task used without either --gpus or -n/--ntasks is not allowed"
    assert refused("--gpus-per-task=v100:2") == ["gpus-per-task-without-tasks"]


def test_gpu_errors() -> None:
    assert refused("--gres=gpu:-1") == ["invalid-gres"]
    assert refused("--gpus=abc:x") == ["invalid-gpus"]
    assert refused("--gpus-per-socket=2") == ["unsupported-gpu-option"]


def test_non_gpu_gres_warns() -> None:
    _, issues = resolve(parse("--gres=gpu:1,gpumem:20g"))
    assert codes(issues) == ["non-gpu-gres"]


def test_a_constraint_model_that_differs_from_the_request_warns() -> None:
    res, issues = resolve(parse("-C h100", "--gres=gpu:a100:1"))
    assert res is not None and res.gpu_type == "a100"
    assert codes(issues) == ["gpu-type-mismatch"]


# ---------------------------------------------------------------- CPUs and memory


@pytest.mark.parametrize(
    ("directives", "cpus"),
    CPU_CASES,
)
def test_cpus_per_pod(directives: tuple[str, ...], cpus: int) -> None:
    assert sized(*directives).cpus_per_node == cpus


def test_cpus_per_task_and_per_gpu_are_exclusive() -> None:
    assert refused("-c 2", "--cpus-per-gpu=4", "--gres=gpu:1") == ["conflicting-cpu-options"] * 2


@pytest.mark.parametrize(
    ("directives", "memory", "whole"),
    MEMORY_CASES,
)
def test_memory_per_pod(directives: tuple[str, ...], memory: int | None, whole: bool) -> None:
    res = sized(*directives)
    assert (res.memory_bytes, res.memory_whole_node) == (memory, whole)


def test_whole_node_memory_warns() -> None:
    _, issues = resolve(parse("--mem=0"))
    assert codes(issues) == ["mem-whole-node"]


@pytest.mark.parametrize(
    "directives", [("--mem=8G", "--mem-per-cpu=2G"), ("--mem-per-gpu=1G", "--mem=1G")]
)
def test_memory_options_are_mutually_exclusive(directives: tuple[str, ...]) -> None:
    resources, issues = resolve(parse(*directives))
    assert resources is None
    errors = [i for i in issues if i.code == "conflicting-memory-options"]
    assert [e.line for e in errors] == [2, 3]  # each conflicting line is named
    assert errors[0].message == "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive"


def test_every_occurrence_of_an_option_is_checked_like_sbatch_does() -> None:
    assert refused("--time=24h", "--time=10") == ["invalid-time"]


def test_time_limit_is_whole_minutes() -> None:
    assert sized("-t 10:30").time_limit_seconds == 660
    assert sized("-t 30", "-t 45").time_limit_seconds == 2700
