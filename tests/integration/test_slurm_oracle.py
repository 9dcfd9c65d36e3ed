"""Slurm itself as the reference for the sbatch importer (issue 39, point 1).

Every script of the project's sbatch corpus (examples/sbatch, the demo's script, the unit
tests' example cases and the directive cases of tests/unit/sbatch/test_resources.py) goes to a
real Slurm 22.05 (`sbatch --hold`, then `scontrol show job -o`) and through Gryvia's importer;
both readings (tests/support/slurm_reading.py: nodes, tasks, CPUs per task and per node, time
limit, memory, GPUs and their type, array indices, dependencies) must agree, or the case is
listed in INTENDED with the fields that differ, each explained in examples/sbatch/README.md
("Where Gryvia differs from Slurm, and why"). A second test runs jobs on real slurmds and
compares the tasks' SLURM_* variables with the in-pod runtime's for the same layout.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gryvia_cli.sbatch.convert import convert_script
from tests.support.slurm import SlurmCluster, missing_programs, slurm_cluster
from tests.support.slurm_reading import Reading, from_gryvia, from_slurm
from tests.unit.sbatch import test_resources as unit
from tests.unit.sbatch.test_runtime import run_pods

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]
ROOT = Path(__file__).resolve().parents[2]
IMAGE = "registry.example/train:1"

INTENDED: dict[str, frozenset[str]] = {
    # examples/sbatch/README.md, "Where Gryvia differs from Slurm, and why": the row per key
    "18-cpu-launcher-gres-zero.sh": frozenset({"dependency"}),
    "-C a100|h100 --gres=gpu:2": frozenset({"gpu_type"}),
    "-N 4 --gpus=6": frozenset({"accepted"}),
}
"""Case -> the fields where Gryvia differs on purpose."""


def corpus() -> list[tuple[str, bytes]]:
    """(case id, script bytes): the script files, then the unit tests' directive cases."""
    files = sorted((ROOT / "examples" / "sbatch").glob("*.sh"))
    files += [ROOT / "examples" / "demo" / "sbatch-ranks.sh"]
    files += sorted((ROOT / "tests" / "unit" / "sbatch" / "examples").glob("*.sh"))
    cases = [(path.name, path.read_bytes()) for path in files]
    directive_sets = [case[0] for case in unit.TASK_CASES + unit.GPU_CASES + unit.CPU_CASES]
    directive_sets += [case[0] for case in unit.MEMORY_CASES + unit.LAYOUT_CASES]
    directive_sets += unit.ORACLE_EXTRA_CASES
    for directives in directive_sets:
        lines = "".join(f"#SBATCH {word}\n" for word in directives)
        cases.append(
            (" ".join(directives) or "(no directives)", f"#!/bin/sh\n{lines}true\n".encode())
        )
    return cases


@pytest.fixture(scope="module")
def held_slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """slurmctld alone: GPU nodes without slurmd, enough for `sbatch --hold`."""
    if missing_programs():
        pytest.fail(f"Slurm is not installed ({', '.join(missing_programs())}): make slurm-bin")
    root = tmp_path_factory.mktemp("slurm-held")
    with slurm_cluster(root) as cluster:
        cluster.placeholders(root)
        yield cluster


def slurm_reading(cluster: SlurmCluster, name: str, data: bytes, folder: Path) -> Reading:
    """Submit held and read Slurm's record (sbatch's refusal: not accepted)."""
    script = folder / "script.sh"
    script.write_bytes(data)
    submitted = cluster.submit(script)
    if submitted.job_id is None:
        return from_slurm(None)
    return from_slurm(cluster.show_job(submitted.job_id))


def test_gryvia_reads_every_corpus_script_as_slurm_does(
    held_slurm: SlurmCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agree, intended, wrong = 0, [], []
    for number, (name, data) in enumerate(corpus()):
        folder = tmp_path / f"case{number}"
        folder.mkdir()
        slurm = slurm_reading(held_slurm, name, data, folder)
        gryvia = from_gryvia(convert_script(data, name, image=IMAGE))
        differ = slurm.differences(gryvia)
        if not differ:
            agree += 1
        elif name in INTENDED and set(differ) == INTENDED[name]:
            intended.append(name)
        else:
            wrong.append(f"{name}: {differ} (Slurm, Gryvia)")
    listed_but_agreeing = set(INTENDED) - set(intended)
    total = agree + len(intended) + len(wrong)
    with capsys.disabled():
        print(
            f"\nslurm oracle: {agree} of {total} scripts agree; {len(intended)} intended "
            f"differences listed ({', '.join(intended)})"
        )
    assert not wrong, "\n".join(wrong)
    assert not listed_but_agreeing, f"listed in INTENDED but agree: {listed_but_agreeing}"


# ---------------------------------------------------------------- jobs that run


def _env(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


STEP_VARIABLES = (
    "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NTASKS", "SLURM_NPROCS",
    "SLURM_NNODES", "SLURM_TASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE", "SLURM_STEP_NUM_TASKS",
    "SLURM_STEP_NUM_NODES", "SLURM_GTIDS", "SLURM_DISTRIBUTION", "SLURM_STEPID", "SLURM_STEP_ID",
    "SLURM_JOB_NUM_NODES",
)  # fmt: skip


@pytest.mark.parametrize(
    ("nodes", "ntasks", "node_cpus"),
    [(1, 3, 8), (2, 5, 3), (4, 6, 2)],  # node_cpus: nodes sized for the job (layout.py)
)
def test_srun_tasks_see_what_real_slurm_gives_them(
    tmp_path: Path, nodes: int, ntasks: int, node_cpus: int
) -> None:
    body = (
        'env | grep ^SLURM_ | sort > "$HOME/batch.env"\n'
        "srun sh -c 'env | grep ^SLURM_ | sort > \"$HOME/task-$SLURM_PROCID.env\"'\n"
    )
    head = f"#!/bin/sh\n#SBATCH -N {nodes}\n#SBATCH -n {ntasks}\n"
    real, pods = tmp_path / "slurm", tmp_path / "pods"
    real.mkdir()
    pods.mkdir()
    script = real / "job.sh"
    script.write_text(head + "#SBATCH -p cpu\n" + body.replace("$HOME", str(real)))
    with slurm_cluster(real / "cluster", slurmd_nodes=nodes, cpus_per_node=node_cpus) as cluster:
        submitted = cluster.submit(script, hold=False)
        assert submitted.job_id is not None, submitted.error
        record = cluster.wait_finished(submitted.job_id)
        assert record["JobState"] == "COMPLETED", record
    ran = run_pods(head + body, pods, HOME=str(pods))
    assert all(pod.code == 0 for pod in ran), ran[0].err
    for procid in range(ntasks):
        slurm_task, gryvia_task = (
            _env(real / f"task-{procid}.env"),
            _env(pods / f"task-{procid}.env"),
        )
        for name in STEP_VARIABLES:
            assert gryvia_task.get(name) == slurm_task.get(name), (procid, name)
    slurm_batch, gryvia_batch = _env(real / "batch.env"), _env(pods / "batch.env")
    for name in ("SLURM_NTASKS", "SLURM_NPROCS", "SLURM_TASKS_PER_NODE", "SLURM_NNODES"):
        assert gryvia_batch.get(name) == slurm_batch.get(name), name


def test_more_tasks_than_the_per_node_maximum_is_refused_by_both(tmp_path: Path) -> None:
    # a held job is accepted; Slurm refuses it when it must place it (no --hold)
    text = "#!/bin/sh\n#SBATCH -N 2\n#SBATCH -n 10\n#SBATCH --ntasks-per-node=4\ntrue\n"
    script = tmp_path / "job.sh"
    script.write_text(text.replace("true", "#SBATCH -p cpu\ntrue"))
    with slurm_cluster(tmp_path / "cluster", slurmd_nodes=2) as cluster:
        submitted = cluster.submit(script, hold=False)
    assert submitted.job_id is None
    assert "Requested node configuration is not available" in submitted.error
    assert not convert_script(text.encode(), "job.sh", image=IMAGE).ok
