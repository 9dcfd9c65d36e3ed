"""Imported Slurm scripts run as Slurm would, in the sandbox with the operator."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import kubectl_json, wait_phase
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _submit(
    sandbox: SandboxHandle, namespace: str, tmp_path: Path, script: str, name: str
) -> subprocess.CompletedProcess[str]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(script).lstrip())
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "gryvia_cli",
            "submit",
            "--sbatch",
            str(path),
            "--image",
            "python:3.11",
            "--kubeconfig",
            str(sandbox.kubeconfig),
            "-n",
            namespace,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"NO_COLOR": "1"},
        check=True,
    )


def _pod_logs(sandbox: SandboxHandle, namespace: str, job: str) -> dict[str, str]:
    pods = kubectl_json(sandbox, "get", "pods", "-n", namespace, "-l", f"gryvia.io/job={job}")
    out = {}
    for pod in pods["items"]:
        index = pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
        out[index] = sandbox.kubectl_run("logs", "-n", namespace, pod["metadata"]["name"]).stdout
    return out


def test_script_runs_once_and_srun_fans_out(
    sandbox: SandboxHandle, namespace: str, tmp_path: Path
) -> None:
    _submit(
        sandbox,
        namespace,
        tmp_path,
        """
        #!/bin/bash
        #SBATCH --job-name=fanout
        #SBATCH --nodes=2
        #SBATCH --ntasks-per-node=1
        #SBATCH --time=10
        echo setup
        srun python3 -c 'import os; print("procid", os.environ["SLURM_PROCID"])'
        FIRST=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
        python3 -c 'import socket, sys; print("first", socket.gethostbyname(sys.argv[1]))' "$FIRST"
    """,
        "fanout.sh",
    )
    job = wait_phase(sandbox, namespace, "fanout", "Succeeded", "Failed", timeout=120)
    logs = _pod_logs(sandbox, namespace, "fanout")
    assert job["status"]["phase"] == "Succeeded", logs
    everything = "".join(logs.values())
    assert everything.count("setup") == 1
    assert "setup" in logs["0"]
    assert "procid 0" in logs["0"] and "procid 1" in logs["0"]
    pods = kubectl_json(sandbox, "get", "pods", "-n", namespace, "-l", "gryvia.io/job=fanout")
    ip0 = next(
        p["status"]["podIP"]
        for p in pods["items"]
        if p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "0"
    )
    assert f"first {ip0}" in logs["0"]


def _running(sandbox: SandboxHandle, namespace: str) -> tuple[int, list[str]]:
    jobs = kubectl_json(sandbox, "get", "gaj", "-n", namespace, "-l", "gryvia.io/array-name=sweep")[
        "items"
    ]
    phases = [(j.get("status") or {}).get("phase", "") for j in jobs]
    active = sum(
        1
        for j, p in zip(jobs, phases, strict=True)
        if not j["spec"].get("suspend")
        and p not in ("Succeeded", "Failed", "Cancelled", "Rejected")
    )
    return active, phases


def test_array_throttle_never_runs_more_than_two(
    sandbox: SandboxHandle, namespace: str, tmp_path: Path
) -> None:
    _submit(
        sandbox,
        namespace,
        tmp_path,
        """
        #!/bin/bash
        #SBATCH --job-name=sweep
        #SBATCH --array=0-3%2
        #SBATCH --time=5
        echo "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT"
        sleep 3
    """,
        "sweep.sh",
    )
    most, deadline = 0, time.monotonic() + 180
    phases: list[str] = []
    while time.monotonic() < deadline:
        active, phases = _running(sandbox, namespace)
        most = max(most, active)
        if len(phases) == 4 and all(p == "Succeeded" for p in phases):
            break
        time.sleep(0.3)
    if phases != ["Succeeded"] * 4:  # say why before failing
        jobs = kubectl_json(sandbox, "get", "gaj", "-n", namespace)["items"]
        why = {j["metadata"]["name"]: (j.get("status") or {}).get("message") for j in jobs}
        events = sandbox.kubectl_run("get", "events", "-n", namespace, check=False).stdout
        raise AssertionError(f"phases {phases}; messages {why}; events:\n{events}")
    assert most == 2
    # one runtime ConfigMap for the whole array, owned by its four jobs
    maps = kubectl_json(
        sandbox, "get", "configmaps", "-n", namespace, "-l", "gryvia.io/imported-from=sbatch"
    )["items"]
    assert [m["metadata"]["name"] for m in maps] == ["sweep-slurm-runtime"]
    owners = sorted(o["name"] for o in maps[0]["metadata"]["ownerReferences"])
    assert owners == [f"sweep-{i}" for i in range(4)]
    jobs = kubectl_json(sandbox, "get", "gaj", "-n", namespace, "-l", "gryvia.io/array-name=sweep")
    assert all("value" not in e for j in jobs["items"] for e in j["spec"]["env"]
               if e["name"] in ("GRYVIA_SLURM_RUNTIME", "GRYVIA_SBATCH_SCRIPT"))  # fmt: skip


def test_time_limit_kills_a_longer_script(
    sandbox: SandboxHandle, namespace: str, tmp_path: Path
) -> None:
    _submit(
        sandbox,
        namespace,
        tmp_path,
        """
        #!/bin/bash
        #SBATCH --job-name=overtime
        #SBATCH --time=1
        echo started
        sleep 300
        echo never
    """,
        "overtime.sh",
    )
    job: dict[str, Any] = wait_phase(
        sandbox, namespace, "overtime", "Failed", "Succeeded", timeout=150
    )
    assert job["status"]["phase"] == "Failed"
    assert "DeadlineExceeded" in job["status"]["message"]
    wait_for(
        lambda: (
            not kubectl_json(
                sandbox,
                "get",
                "pods",
                "-n",
                namespace,
                "-l",
                "gryvia.io/job=overtime",
                "--field-selector",
                "status.phase=Running",
            )["items"]
        ),
        what="the script's pod stopped",
    )


def test_two_multi_node_jobs_with_srun_run_at_the_same_time(
    sandbox: SandboxHandle, namespace: str, tmp_path: Path
) -> None:
    # each job starts its srun step only once the other is up, so both steps overlap in time
    # (the srun agents of the two jobs listen on the same port, in their own pod networks)
    for me, other in (("a", "b"), ("b", "a")):
        _submit(
            sandbox,
            namespace,
            tmp_path,
            f"""
            #!/bin/bash
            #SBATCH --job-name=pair-{me}
            #SBATCH --nodes=2
            #SBATCH --ntasks-per-node=1
            #SBATCH --time=10
            touch {tmp_path}/{me}-up
            while [ ! -e {tmp_path}/{other}-up ]; do sleep 0.2; done
            srun sh -c 'echo procid $SLURM_PROCID; sleep 2'
        """,
            f"pair-{me}.sh",
        )
    for job in ("pair-a", "pair-b"):
        done = wait_phase(sandbox, namespace, job, "Succeeded", "Failed", timeout=180)
        logs = _pod_logs(sandbox, namespace, job)
        assert done["status"]["phase"] == "Succeeded", logs
        assert "procid 0" in logs["0"] and "procid 1" in logs["0"], logs
