"""Pure parts of the in-pod runtime: host lists, srun's options and task layout."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gryvia_cli.sbatch.runtime.slurm_common import (
    Config,
    compress_hostlist,
    expand_counts,
    expand_hostlist,
    output_path,
)
from gryvia_cli.sbatch.runtime.slurm_step import (
    SrunError,
    parse_srun,
    plan_step,
    tasks_per_node_text,
)

RUNTIME = Path(__file__).resolve().parents[3] / "gryvia_cli/sbatch/runtime"


def config(nodes: int = 4, tasks: int | str = 1) -> Config:
    names = ",".join(f"j-{i}.j-headless" for i in range(nodes))
    return Config({"SLURM_JOB_NODELIST": names, "SLURM_NNODES": str(nodes),
                   "GRYVIA_SLURM_TASKS_PER_NODE": str(tasks)})  # fmt: skip


@pytest.mark.parametrize(
    "name", ["shim.py", "slurm_common.py", "slurm_step.py", "slurm_commands.py"]
)
def test_the_runtime_is_python_3_7_syntax(name: str) -> None:
    ast.parse((RUNTIME / name).read_text(), feature_version=(3, 7))


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("a,b", ["a", "b"]),
        ("node[01-03]", ["node01", "node02", "node03"]),
        ("j-[0-1].j-headless,x", ["j-0.j-headless", "j-1.j-headless", "x"]),
        ("n[1,3-4]", ["n1", "n3", "n4"]),
        ("r[1-2]c[1-2]", ["r1c1", "r1c2", "r2c1", "r2c2"]),
        ("", []),
    ],
)
def test_expand_hostlist(text: str, names: list[str]) -> None:
    assert expand_hostlist(text) == names


def test_compress_hostlist_round_trips() -> None:
    names = [f"j-{i}.j-headless" for i in range(4)]
    assert compress_hostlist(names) == "j-[0-3].j-headless"
    assert expand_hostlist(compress_hostlist(names)) == names
    assert compress_hostlist(["node01", "node02", "node05", "login"]) == "node[01-02,05],login"


def test_parse_srun() -> None:
    opts, command = parse_srun(["-N2", "--ntasks=4", "-l", "--mpi", "pmix", "-K", "cmd", "-n", "9"])
    assert opts == {"nodes": "2", "ntasks": "4", "label": "", "mpi": "pmix", "kill-on-bad-exit": ""}
    assert command == ["cmd", "-n", "9"]
    assert parse_srun(["--tasks-per-node=2", "--", "-x"]) == ({"ntasks-per-node": "2"}, ["-x"])
    for bad in (["--bogus", "x"], ["-N"], ["--label=1", "x"], ["-%", "x"]):
        with pytest.raises(SrunError):
            parse_srun(bad)


@pytest.mark.parametrize(
    ("opts", "tasks", "layout"),
    [
        ({}, 1, [(0, [0]), (1, [1]), (2, [2]), (3, [3])]),
        ({}, 2, [(0, [0, 1]), (1, [2, 3]), (2, [4, 5]), (3, [6, 7])]),
        ({"ntasks": "1"}, 2, [(0, [0])]),
        ({"ntasks": "6"}, 1, [(0, [0, 1]), (1, [2, 3]), (2, [4]), (3, [5])]),
        ({"nodes": "2"}, 2, [(0, [0, 1]), (1, [2, 3])]),
        ({"ntasks-per-node": "3", "nodes": "1"}, 1, [(0, [0, 1, 2])]),
        ({"ntasks": "4", "ntasks-per-node": "2"}, 1, [(0, [0, 1]), (1, [2, 3])]),
        ({"relative": "2"}, 1, [(2, [0]), (3, [1])]),
        ({"nodelist": "j-[1,3]"}, 1, [(1, [0]), (3, [1])]),
    ],
)
def test_plan_step(opts: dict[str, str], tasks: int, layout: list[tuple[int, list[int]]]) -> None:
    assert plan_step(config(4, tasks), opts) == layout


@pytest.mark.parametrize(
    ("nodes", "text", "counts"),
    [(2, "4", [4, 4]), (2, "3,2", [3, 2]), (4, "2(x2),1(x2)", [2, 2, 1, 1]), (3, "2", [2, 2, 2])],
)
def test_expand_counts(nodes: int, text: str, counts: list[int]) -> None:
    assert expand_counts(text, nodes) == counts
    with pytest.raises(ValueError, match="bad tasks per node"):
        expand_counts("3,x", nodes)


@pytest.mark.parametrize(
    ("nodes", "per_node", "opts", "layout"),
    [
        # the job's own uneven layout: each pod starts its count, ranks contiguous per node
        (2, "3,2", {}, [(0, [0, 1, 2]), (1, [3, 4])]),
        (4, "2(x2),1(x2)", {}, [(0, [0, 1]), (1, [2, 3]), (2, [4]), (3, [5])]),
        (2, "3,2", {"nodes": "1"}, [(0, [0, 1, 2])]),
        (2, "3,2", {"relative": "1"}, [(1, [0, 1])]),
        (2, "3,2", {"ntasks": "2"}, [(0, [0]), (1, [1])]),
    ],
)
def test_plan_step_follows_an_uneven_job_layout(
    nodes: int, per_node: str, opts: dict[str, str], layout: list[tuple[int, list[int]]]
) -> None:
    assert plan_step(config(nodes, per_node), opts) == layout


def test_plan_step_refuses_more_nodes_than_allocated() -> None:
    with pytest.raises(SrunError, match="Only allocated 4 nodes asked for 5"):
        plan_step(config(4), {"nodes": "5"})
    with pytest.raises(SrunError, match="not in this job"):
        plan_step(config(4), {"nodelist": "other"})


def test_tasks_per_node_text() -> None:
    assert tasks_per_node_text([4, 4, 3]) == "4(x2),3"
    assert tasks_per_node_text([1]) == "1"


def test_output_patterns() -> None:
    cfg = config(2)
    assert output_path("out-%t-%n-%N.txt", cfg, 1, 3, "0") == "out-3-1-j-1.j-headless.txt"
    assert output_path("o-%3t-%%.log", cfg, 0, 7, "2") == "o-007-%.log"
    assert output_path(None, cfg, 0, 0, "0") is None


def test_job_id_and_secret_come_from_the_job_uid() -> None:
    one = Config({"GRYVIA_JOB_UID": "a", "SLURM_JOB_NODELIST": "x"})
    two = Config({"GRYVIA_JOB_UID": "b", "SLURM_JOB_NODELIST": "x"})
    assert one.job_id != two.job_id and one.token != two.token
    assert not one.weak_token and Config({"SLURM_JOB_NODELIST": "x"}).weak_token
    assert Config({"GRYVIA_SLURM_HOSTS": "h:1,k:2"}).address(1) == ("k", 2)
