"""A heterogeneous job (`#SBATCH hetjob`, sbatch(1) HETEROGENEOUS JOB SUPPORT) in the
sandbox: a CPU launcher plus two GPU workers, imported as one GryviaWorkflow whose two steps
start together. Each side waits for the other to be up before it ends, so the run succeeds
only when both components run at the same time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import kubectl_json
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _logs(sandbox: SandboxHandle, namespace: str, job: str) -> str:
    pods = kubectl_json(sandbox, "get", "pods", "-n", namespace, "-l", f"gryvia.io/job={job}")
    return "".join(
        sandbox.kubectl_run("logs", "-n", namespace, pod["metadata"]["name"]).stdout
        for pod in pods["items"]
    )


def _ended(sandbox: SandboxHandle, namespace: str, job: str) -> dict[str, Any]:
    """The step's job once it Succeeded or Failed; the workflow creates it after the run
    starts, so a job not there yet is waited for too."""

    def check() -> dict[str, Any] | None:
        got = sandbox.kubectl_run(
            "get", "gryviaaijob", "-n", namespace, job, "-o", "json", check=False
        )
        if got.returncode != 0:
            return None
        obj: dict[str, Any] = json.loads(got.stdout)
        ended = (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed")
        return obj if ended else None

    return wait_for(check, timeout=120, what=f"{namespace}/{job} Succeeded or Failed")


def test_launcher_and_workers_start_together(
    sandbox: SandboxHandle, namespace: str, tmp_path: Path
) -> None:
    up = tmp_path
    wait = "i=0; while {cond} && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done"
    worker = (
        wait.format(cond=f"[ ! -e {up}/launcher-up ]")
        + f"; touch {up}/worker-$SLURM_PROCID"
        + "; echo worker $SLURM_PROCID of $SLURM_HET_SIZE sees the launcher"
    )
    script = tmp_path / "lw.sh"
    script.write_text(textwrap.dedent(f"""\
        #!/bin/bash
        #SBATCH --job-name=lw
        #SBATCH --time=5
        #SBATCH --cpus-per-task=1
        #SBATCH hetjob
        #SBATCH --nodes=2 --ntasks-per-node=1 --gpus-per-node=1
        touch {up}/launcher-up
        srun --het-group=1 sh -c '{worker}' &
        {wait.format(cond=f"{{ [ ! -e {up}/worker-0 ] || [ ! -e {up}/worker-1 ]; }}")}
        echo "launcher sees workers $SLURM_JOB_NODELIST_HET_GROUP_1"
        [ -e {up}/worker-0 ] && [ -e {up}/worker-1 ]
    """))  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-m", "gryvia_cli", "--kubeconfig", str(sandbox.kubeconfig),
         "sbatch", "submit", str(script), "--image", "python:3.11", "-n", namespace],
        capture_output=True, text=True, timeout=120, env=os.environ | {"NO_COLOR": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    jobs = {step: f"lw-1-{step}" for step in ("launcher", "workers")}
    done = {step: _ended(sandbox, namespace, job) for step, job in jobs.items()}
    logs = {step: _logs(sandbox, namespace, job) for step, job in jobs.items()}
    assert all(d["status"]["phase"] == "Succeeded" for d in done.values()), logs
    assert "launcher sees workers lw-1-workers-0." in logs["launcher"], logs
    assert "lw-1-workers-1." in logs["launcher"], logs
    for procid in (0, 1):
        assert f"worker {procid} of 2 sees the launcher" in logs["workers"], logs
