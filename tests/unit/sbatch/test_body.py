"""Slurm commands in the script body are handled (srun, scontrol show hostnames) or reported."""

from __future__ import annotations

from gryvia_cli.sbatch.body import scan_body
from tests.unit.sbatch.helpers import codes, convert, make_script


def scan(*body: str) -> tuple[list[tuple[str, int, bool]], list[str]]:
    text = "\n".join(["#!/bin/bash", *body])
    uses, issues = scan_body(text, 2)
    return [(u.command, u.line, u.supported) for u in uses], codes(issues)


def test_srun_and_scontrol_show_hostnames_are_supported() -> None:
    uses, issues = scan(
        'MASTER=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
        "srun --kill-on-bad-exit=1 torchrun train.py",
        "time srun hostname; srun -l date",
    )
    assert uses == [
        ("scontrol", 2, True),
        ("srun", 3, True),
        ("srun", 4, True),
        ("srun", 4, True),
    ]
    assert issues == []


def test_other_slurm_commands_are_reported_once() -> None:
    uses, issues = scan(
        "scontrol requeue $SLURM_JOB_ID",
        "sbatch --dependency=afterok:$SLURM_JOB_ID next.sh",
        "sbatch again.sh",
        "squeue -u $USER",
    )
    assert [u[:2] for u in uses] == [("scontrol", 2), ("sbatch", 3), ("sbatch", 4), ("squeue", 5)]
    assert issues == ["slurm-command", "slurm-command", "slurm-command"]


def test_words_that_merely_contain_a_command_name_do_not_count() -> None:
    uses, _ = scan("./my-srun.sh", "echo $sruns", "cp sbatch.log /tmp/", "# srun in a comment")
    assert uses == []


def test_mpi_launchers_and_srun_mpi_warn() -> None:
    _, issues = scan("mpirun -np 8 ./a.out", "srun --mpi=pmix ./a.out", "srun --mpi=none ./b")
    assert issues == ["mpi-launcher", "srun-mpi"]


def test_the_report_lists_slurm_commands() -> None:
    report = convert(make_script("#SBATCH -N 2", body="scontrol show job\nscancel 1")).report
    assert report["slurmCommands"] == [
        {"command": "scontrol", "line": 3, "supported": True},
        {"command": "scancel", "line": 4, "supported": False},
    ]
    assert [(i["code"], i["directive"]) for i in report["unsupported"]] == [
        ("slurm-command", "scancel")
    ]
