"""An imported array is one handle (cancel, list, logs --index), a script can be
submitted twice, and --output tees the batch output into a file, as in Slurm; in the sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import kubectl_json, wait_phase
from tests.support.depth import amount
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

ELEMENTS = amount(100, 500)
"""The big array's size: 500 elements in `make test-all`; `make test` proves the same (one
job per element, one shared runtime, every object under 8 KiB, one cancel) on 100, a fifth of
the operator's and API server's work."""


def _gryvia(
    sandbox: SandboxHandle, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gryvia_cli", "--kubeconfig", str(sandbox.kubeconfig), *args],
        capture_output=True, text=True, timeout=timeout, env=os.environ | {"NO_COLOR": "1"},
    )  # fmt: skip


def _script(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return str(path)


def test_same_script_twice_gives_two_jobs(
    sandbox: SandboxHandle, namespace: str, tmp_path: Path
) -> None:
    script = _script(tmp_path, "twice.sh", """
        #!/bin/bash
        #SBATCH --job-name=twice
        #SBATCH --time=5
        echo "hello from $SLURM_JOB_NAME"
    """)  # fmt: skip
    submit = ("submit", "--sbatch", script, "--image", "python:3.11", "-n", namespace)
    first, second = _gryvia(sandbox, *submit), _gryvia(sandbox, *submit)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert first.stdout.strip() == "gryviaaijob.gryvia.io/twice"
    renamed = second.stdout.strip().rpartition("/")[2]
    assert renamed.startswith("twice-") and len(renamed) == len("twice-") + 4
    assert "Slurm job names need not be unique" in second.stderr
    for name in ("twice", renamed):
        assert (
            wait_phase(sandbox, namespace, name, "Succeeded", "Failed", timeout=120)["status"][
                "phase"
            ]
            == "Succeeded"
        )
    logs = _gryvia(sandbox, "logs", renamed, "-n", namespace)
    assert "hello from twice" in logs.stdout, logs.stderr
    maps = kubectl_json(sandbox, "get", "configmaps", "-n", namespace)["items"]
    names = {m["metadata"]["name"] for m in maps}
    assert {"twice-slurm-runtime", f"{renamed}-slurm-runtime"} <= names
    taken = _gryvia(sandbox, *submit, "--name", "twice")
    assert taken.returncode != 0 and "already exists" in taken.stderr


def test_an_array_is_one_handle(sandbox: SandboxHandle, namespace: str, tmp_path: Path) -> None:
    quick = _script(tmp_path, "arr.sh", """
        #!/bin/bash
        #SBATCH --job-name=arr
        #SBATCH --array=0-1
        #SBATCH --time=5
        echo "task $SLURM_ARRAY_TASK_ID"
    """)  # fmt: skip
    assert _gryvia(sandbox, "submit", "--sbatch", quick, "--image", "python:3.11",
                   "-n", namespace).returncode == 0  # fmt: skip
    for index in (0, 1):
        wait_phase(sandbox, namespace, f"arr-{index}", "Succeeded", "Failed", timeout=120)
    logs = _gryvia(sandbox, "logs", "arr", "--index", "1", "-n", namespace)
    assert logs.returncode == 0 and "task 1" in logs.stdout, logs.stderr
    missing = _gryvia(sandbox, "logs", "arr", "--index", "7", "-n", namespace)
    assert missing.returncode != 0 and "indices: 0, 1" in missing.stderr
    slow = _script(tmp_path, "sweep.sh", """
        #!/bin/bash
        #SBATCH --job-name=sweep
        #SBATCH --array=0-3%1
        #SBATCH --time=5
        sleep 120
    """)  # fmt: skip
    assert _gryvia(sandbox, "submit", "--sbatch", slow, "--image", "python:3.11",
                   "-n", namespace).returncode == 0  # fmt: skip
    listed = _gryvia(sandbox, "list", "jobs", "sweep", "-n", namespace, "-o", "name")
    assert listed.stdout.split() == [f"gryviaaijob.gryvia.io/sweep-{i}" for i in range(4)]
    queue = _gryvia(sandbox, "squeue", "-A", namespace, "-h", "-o", "%i %t %r").stdout
    assert "sweep_[1-3%1] PD JobArrayTaskLimit" in queue, queue
    cancel = _gryvia(sandbox, "cancel", "sweep", "--yes", "-n", namespace)
    assert cancel.returncode == 0, cancel.stderr

    def all_cancelled() -> bool:
        jobs = kubectl_json(
            sandbox, "get", "gaj", "-n", namespace, "-l", "gryvia.io/array-name=sweep"
        )["items"]
        return len(jobs) == 4 and all(
            (j.get("status") or {}).get("phase") == "Cancelled" for j in jobs
        )

    wait_for(all_cancelled, timeout=120, what="every element of sweep Cancelled")


def test_output_file_on_pod_0_and_in_gryvia_logs(
    sandbox: SandboxHandle, namespace: str, tmp_path: Path
) -> None:
    script = _script(tmp_path, "teed.sh", """
        #!/bin/bash
        #SBATCH --job-name=teed
        #SBATCH --nodes=2
        #SBATCH --time=5
        #SBATCH --output=logs/%x_%j.out
        echo "batch line"
        srun sh -c 'echo "task $SLURM_PROCID"'
        sed 's/^/file: /' "logs/${SLURM_JOB_NAME}_${SLURM_JOB_ID}.out" | head -n 3
    """)  # fmt: skip
    submitted = _gryvia(sandbox, "submit", "--sbatch", script, "--image", "python:3.11",
                        "-n", namespace)  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    job = wait_phase(sandbox, namespace, "teed", "Succeeded", "Failed", timeout=120)
    logs = _gryvia(sandbox, "logs", "teed", "-n", namespace, "--tail", "-1").stdout
    assert job["status"]["phase"] == "Succeeded", logs
    for line in ("batch line", "task 0", "task 1", "file: batch line"):
        assert line in logs, logs
    assert sum(line in logs for line in ("file: task 0", "file: task 1")) == 2, logs


def test_a_heterogeneous_job_is_refused_with_the_reason(
    sandbox: SandboxHandle, namespace: str, tmp_path: Path
) -> None:
    script = _script(tmp_path, "het.sh", """
        #!/bin/bash
        #SBATCH --job-name=het
        #SBATCH --nodes=1 --gres=gpu:1
        #SBATCH hetjob
        #SBATCH --nodes=2 --cpus-per-task=8
        srun --het-group=0 python3 -c 'print(1)' : --het-group=1 python3 -c 'print(2)'
    """)  # fmt: skip
    result = _gryvia(sandbox, "submit", "--sbatch", script, "--image", "python:3.11",
                     "-n", namespace)  # fmt: skip
    assert result.returncode != 0
    assert "a job has one pod shape" in result.stderr
    assert "gryvia sbatch submit SCRIPT" in result.stderr
    assert "nothing was submitted" in result.stderr
    assert kubectl_json(sandbox, "get", "gaj", "-n", namespace)["items"] == []
    maps = kubectl_json(
        sandbox, "get", "configmaps", "-n", namespace, "-l", "gryvia.io/imported-from=sbatch"
    )
    assert maps["items"] == []


def test_a_500_element_array_is_500_jobs_one_runtime_and_one_cancel(
    sandbox: SandboxHandle, namespace: str, tmp_path: Path
) -> None:
    script = _script(tmp_path, "big.sh", f"""
        #!/bin/bash
        #SBATCH --job-name=big
        #SBATCH --array=0-{ELEMENTS - 1}%4
        #SBATCH --time=10
        sleep 600
    """)  # fmt: skip
    submitted = _gryvia(sandbox, "submit", "--sbatch", script, "--image", "python:3.11",
                        "-n", namespace, timeout=600)  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    jobs = kubectl_json(sandbox, "get", "gaj", "-n", namespace)["items"]
    names = {j["metadata"]["name"] for j in jobs}
    assert names == {f"big-{i}" for i in range(ELEMENTS)}
    maps = kubectl_json(
        sandbox, "get", "configmaps", "-n", namespace, "-l", "gryvia.io/imported-from=sbatch"
    )["items"]
    assert [m["metadata"]["name"] for m in maps] == ["big-slurm-runtime"]
    owners = {o["uid"] for o in maps[0]["metadata"].get("ownerReferences") or []}
    assert owners == {j["metadata"]["uid"] for j in jobs}
    assert all(len(json.dumps(j)) <= 8 * 1024 for j in jobs)

    def running() -> int:
        items = kubectl_json(sandbox, "get", "gaj", "-n", namespace)["items"]
        return sum((j.get("status") or {}).get("phase") == "Running" for j in items)

    wait_for(lambda: running() >= 1, timeout=240, what="an element of big Running")
    cancel = _gryvia(sandbox, "cancel", "big", "--yes", "-n", namespace, timeout=600)
    assert cancel.returncode == 0, cancel.stderr

    def phases() -> dict[str, int]:
        items = kubectl_json(
            sandbox, "get", "gaj", "-n", namespace, "-l", "gryvia.io/array-name=big"
        )["items"]
        out: dict[str, int] = {}
        for job in items:
            phase = (job.get("status") or {}).get("phase") or "-"
            out[phase] = out.get(phase, 0) + 1
        return out

    try:
        wait_for(
            lambda: phases() == {"Cancelled": ELEMENTS}, timeout=420, interval=2, what="cancel"
        )
    except AssertionError:
        raise AssertionError(f"not every element of big Cancelled: {phases()}") from None
