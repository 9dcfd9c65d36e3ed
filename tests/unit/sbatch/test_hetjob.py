"""Heterogeneous jobs (`#SBATCH hetjob`): a CPU launcher plus GPU workers becomes one
GryviaWorkflow whose two steps start together; other shapes are refused with the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gryvia_cli.commands.sbatch import app
from gryvia_cli.sbatch.convert import convert_script
from gryvia_cli.sbatch.hetjob import convert_hetjob, is_hetjob, split_hetjob
from gryvia_cli.sbatch.workflow import WorkflowImport
from gryvia_operator.api.workflow import GryviaWorkflow
from tests.unit.sbatch.helpers import env_of

WORKER = 'srun --het-group=1 python3 -c \'import os; print("w", os.environ["SLURM_PROCID"])\' &'
LAUNCHER_WORKERS = f"""#!/bin/bash
#SBATCH --job-name=lw
#SBATCH --time=00:05:00
#SBATCH --cpus-per-task=2 --mem=4G
#SBATCH hetjob
#SBATCH --nodes=2 --ntasks-per-node=1 --gpus-per-node=1
echo "launcher; workers: $SLURM_JOB_NODELIST_HET_GROUP_1"
{WORKER}
srun --het-group=0 hostname
wait
"""


def imported(text: str = LAUNCHER_WORKERS, **options: Any) -> WorkflowImport:
    options.setdefault("image", "python:3.11")
    return convert_hetjob(text, "lw.sh", **options)


def steps(result: WorkflowImport) -> dict[str, dict[str, Any]]:
    assert result.workflow is not None, [i.message for i in result.issues]
    return {s["name"]: s for s in result.workflow["spec"]["steps"]}


def scripts(result: WorkflowImport) -> dict[str, str]:
    """Each step's batch script, read back from its runtime ConfigMap."""
    out = {}
    for name, runtime in zip(("launcher", "workers"), result.runtimes, strict=True):
        step = steps(result)[name]
        env = env_of({"spec": step["template"]}, runtime)
        out[name] = env["GRYVIA_SBATCH_SCRIPT"]
    return out


def refusal(text: str) -> tuple[str, str]:
    result = imported(text)
    assert result.workflow is None
    assert result.issues, "expected a refusal"
    return result.issues[0].code, result.issues[0].message


def test_launcher_plus_workers_is_one_workflow_whose_steps_start_together() -> None:
    result = imported()
    found = steps(result)
    assert list(found) == ["launcher", "workers"]
    assert all("dependsOn" not in step for step in found.values())  # both start at once
    GryviaWorkflow.model_validate(result.workflow)
    launcher, workers = found["launcher"]["template"], found["workers"]["template"]
    assert launcher.get("gpus", 0) == 0
    assert launcher["resources"]["requests"]["cpu"] == "2"
    assert workers["gpus"] == 1
    assert workers["distributed"]["nodes"] == 2
    assert len(result.runtimes) == 2


def test_each_component_sees_the_het_environment_slurm_sets() -> None:
    found = steps(imported())
    for step in found.values():
        env = {e["name"]: e["value"] for e in step["template"]["env"] if "value" in e}
        assert env["SLURM_HET_SIZE"] == "2"
        assert env["SLURM_JOB_NAME"] == "lw"
        assert env["SLURM_JOB_NUM_NODES_HET_GROUP_0"] == "1"
        assert env["SLURM_NNODES_HET_GROUP_1"] == "2"
        workers = env["SLURM_JOB_NODELIST_HET_GROUP_1"].split(",")
        assert [h.split(".$(")[0] for h in workers] == [
            "$(workflow.name)-$(workflow.run)-workers-0",
            "$(workflow.name)-$(workflow.run)-workers-1",
        ]
        assert env["SLURM_JOB_NODELIST_HET_GROUP_0"].startswith(
            "$(workflow.name)-$(workflow.run)-launcher-0."
        )


def test_workers_run_the_het_group_1_srun_and_the_launcher_the_rest() -> None:
    text = scripts(imported())
    assert "--het-group" not in text["launcher"] and "--het-group" not in text["workers"]
    assert "srun  hostname" in text["launcher"]  # --het-group=0: the launcher's own pods
    assert "import os" not in text["launcher"]
    body = [line for line in text["workers"].splitlines() if line and not line.startswith("#")]
    assert body == [WORKER.replace("--het-group=1 ", "").removesuffix(" &")]
    assert "#SBATCH --time=00:05:00" in text["workers"]  # propagated from component 0


def test_memory_propagates_only_when_the_workers_set_none() -> None:
    text = LAUNCHER_WORKERS.replace("--gpus-per-node=1", "--gpus-per-node=1 --mem-per-gpu=8G")
    workers = split_hetjob(text, "lw.sh")[0]
    assert workers is not None
    assert "--mem=" not in workers[1] and "--mem-per-gpu=8G" in workers[1]
    assert "--mem=4G" in split_hetjob(LAUNCHER_WORKERS, "lw.sh")[0][1]  # type: ignore[index]


def test_a_trailing_comment_is_not_part_of_the_workers_command() -> None:
    text = LAUNCHER_WORKERS.replace(" &\n", " &  # the workers\n", 1)
    workers = split_hetjob(text, "lw.sh")[0]
    assert workers is not None
    assert workers[1].rstrip().endswith('os.environ["SLURM_PROCID"])\'')


def test_packjob_is_the_same_separator() -> None:
    assert is_hetjob(LAUNCHER_WORKERS.replace("hetjob", "packjob"))
    assert steps(imported(LAUNCHER_WORKERS.replace("hetjob", "packjob")))


@pytest.mark.parametrize(
    ("change", "code", "words"),
    [
        (
            ("#SBATCH hetjob\n", "#SBATCH hetjob\n#SBATCH -N 1\n#SBATCH hetjob\n"),
            "hetjob-components",
            "3 heterogeneous components",
        ),
        (("--mem=4G", "--mem=4G --gres=gpu:1"), "hetjob-gpu-launcher", "--gres=gpu:1"),
        (("--mem=4G", "--mem=4G --array=0-3"), "hetjob-array", "no job arrays"),
        (("--het-group=1", "--het-group=0,1"), "hetjob-het-group", "spans several components"),
        (("--het-group=1", "--het-group=0-1"), "hetjob-het-group", "spans several components"),
        (("--het-group=1", "--het-group=2"), "hetjob-het-group", "names no component"),
        (
            ("srun --het-group=0 hostname", "srun --het-group=0 hostname : --het-group=1 id"),
            "hetjob-het-group",
            "spans several components",
        ),
        (("--het-group=1", "--het-group=0"), "hetjob-no-workers", "component 1 runs nothing"),
        ((" &\n", " | tee w.log &\n"), "hetjob-srun-line", "not a plain srun line"),
        ((" &\n", ' --host "$(hostname)" &\n'), "hetjob-srun-line", "not a plain srun line"),
        (("wait\n", f"{WORKER}\nwait\n"), "hetjob-srun-line", "several srun"),
    ],
)
def test_other_shapes_are_refused_with_the_reason(
    change: tuple[str, str], code: str, words: str
) -> None:
    found_code, message = refusal(LAUNCHER_WORKERS.replace(*change, 1))
    assert found_code == code
    assert words in message
    assert "HETEROGENEOUS JOB SUPPORT" in message


def test_a_single_script_import_points_at_the_workflow_import() -> None:
    conversion = convert_script(LAUNCHER_WORKERS, "lw.sh", image="i")
    assert not conversion.ok
    het = [i for i in conversion.issues if i.code == "heterogeneous-job"]
    assert het and "gryvia sbatch submit SCRIPT" in het[0].message


def test_sbatch_convert_prints_the_workflow(tmp_path: Path) -> None:
    script = tmp_path / "lw.sh"
    script.write_text(LAUNCHER_WORKERS)
    result = CliRunner().invoke(app, ["convert", str(script), "--image", "i", "-o", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [s["name"] for s in data["workflow"]["spec"]["steps"]] == ["launcher", "workers"]
    assert len(data["runtimes"]) == 2
