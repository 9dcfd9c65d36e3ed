"""Issue 21 part 1 against the sandbox, operator running with `--enable-workflows`.

prepare -> train -> eval (afterok), submitted with `gryvia workflow submit`: with train
failing (its exit code is a parameter), prepare ran, eval never starts and run 1 says train
failed; after the parameter is fixed, `gryvia workflow retry --from train` starts run 2,
which reuses prepare's job and finishes train and eval in order. A workflow scheduled
`*/1 * * * *`, created when the module starts (so its two minutes overlap the first test),
starts one run per minute: runs 1 and 2, scheduled a minute apart.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, get_job
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
API = "gryvia.io/v1alpha1"


@pytest.fixture(scope="module")
def wf_operator(sandbox: SandboxHandle, operator: OperatorProcess) -> Iterator[OperatorProcess]:
    """The session's operator (it runs with --enable-workflows)."""
    yield operator


@pytest.fixture(scope="module")
def space(sandbox: SandboxHandle, wf_operator: OperatorProcess) -> Iterator[str]:
    with sandbox.fresh_namespace("wf") as name:
        yield name


def step(name: str, script: str, *deps: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "template": {
            "type": "training",
            "image": "none",
            "gpus": 0,
            "command": ["sh", "-c", script],
        },
    }
    if deps:
        out["dependsOn"] = list(deps)
        out["condition"] = "afterok"
    return out


@pytest.fixture(scope="module")
def scheduled(sandbox: SandboxHandle, space: str) -> Iterator[str]:
    """A `*/1 * * * *` workflow, created at once so its minutes pass during the other test."""
    name = f"every-{uuid.uuid4().hex[:5]}"
    body = {
        "apiVersion": API,
        "kind": "GryviaWorkflow",
        "metadata": {"name": name},
        "spec": {
            "steps": [step("tick", "echo tick $(workflow.run)")],
            "schedule": {"cron": "*/1 * * * *"},
        },
    }
    create(sandbox, space, body)
    yield name
    sandbox.kubectl_run("delete", "gryviaworkflow", "-n", space, name, "--wait=false", check=False)


def gryvia(sandbox: SandboxHandle, tmp: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env |= {
        "KUBECONFIG": str(sandbox.kubeconfig),
        "GRYVIA_CONFIG_HOME": str(tmp / "config"),
        "NO_COLOR": "1",
    }
    done = run_gryvia(*args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def status(sandbox: SandboxHandle, ns: str, name: str) -> dict[str, Any]:
    found = sandbox.kubectl_json("get", "gryviaworkflow", "-n", ns, name)
    return dict(found.get("status") or {})


def run_of(sandbox: SandboxHandle, ns: str, name: str, number: int) -> dict[str, Any] | None:
    runs = status(sandbox, ns, name).get("runs") or []
    return next((r for r in runs if r["number"] == number), None)


def wait_run(
    sandbox: SandboxHandle, ns: str, name: str, number: int, *phases: str
) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        run = run_of(sandbox, ns, name, number)
        return run if run is not None and run.get("phase") in phases else None

    found: dict[str, Any] = wait_for(check, timeout=150, what=f"{name} run {number} in {phases}")
    return found


def _second(value: str) -> datetime:
    return datetime.fromisoformat(value).replace(microsecond=0)


def started(sandbox: SandboxHandle, ns: str, job: str) -> datetime:
    return _second(get_job(sandbox, ns, job)["metadata"]["creationTimestamp"])


def ended(sandbox: SandboxHandle, ns: str, job: str) -> datetime:
    return _second(get_job(sandbox, ns, job)["status"]["completionTime"])


def test_failed_train_stops_eval_and_retry_from_train_finishes(
    sandbox: SandboxHandle, space: str, scheduled: str, tmp_path: Path
) -> None:
    name = f"pipe-{uuid.uuid4().hex[:5]}"
    manifest = {
        "apiVersion": API,
        "kind": "GryviaWorkflow",
        "metadata": {"name": name},
        "spec": {
            "parameters": {"exit": "3"},
            "steps": [
                step("prepare", "echo prepared"),
                step(
                    "train", "echo training run $(workflow.run); exit $(parameters.exit)", "prepare"
                ),
                step("eval", "echo evaluated", "train"),
            ],
        },
    }
    file = tmp_path / "pipeline.yaml"
    file.write_text(yaml.safe_dump(manifest))
    gryvia(sandbox, tmp_path, "workflow", "submit", str(file), "-n", space)

    run1 = wait_run(sandbox, space, name, 1, "Failed", "Succeeded")
    assert run1["phase"] == "Failed" and run1["failedStep"] == "train"
    steps = {s["name"]: s for s in run1["steps"]}
    assert steps["prepare"]["state"] == "Succeeded"
    assert steps["train"]["state"] == "Failed"
    assert steps["eval"]["state"] == "Skipped"
    assert "job" not in steps["eval"]
    jobs = sandbox.kubectl_json(
        "get", "gryviaaijobs", "-n", space, "-l", f"gryvia.io/workflow={name}"
    )
    assert sorted(j["metadata"]["name"] for j in jobs["items"]) == [
        f"{name}-1-prepare",
        f"{name}-1-train",
    ], "eval never started"
    assert started(sandbox, space, f"{name}-1-train") >= ended(sandbox, space, f"{name}-1-prepare")
    st = status(sandbox, space, name)
    assert st["phase"] == "Failed" and st["failedStep"] == "train"
    shown = gryvia(sandbox, tmp_path, "workflow", "get", name, "-n", space)
    assert "Failed at step train" in shown

    sandbox.kubectl_run(
        "patch", "gryviaworkflow", "-n", space, name, "--type=merge",
        "-p", '{"spec":{"parameters":{"exit":"0"}}}',
    )  # fmt: skip
    gryvia(sandbox, tmp_path, "workflow", "retry", name, "--from", "train", "-n", space)
    run2 = wait_run(sandbox, space, name, 2, "Succeeded", "Failed")
    assert run2["phase"] == "Succeeded", run2
    assert run2["retryOf"] == 1 and run2["fromStep"] == "train"
    steps = {s["name"]: s for s in run2["steps"]}
    assert steps["prepare"] == {
        "name": "prepare",
        "state": "Succeeded",
        "job": f"{name}-1-prepare",
        "reused": True,
    }
    assert steps["train"]["job"] == f"{name}-2-train"
    assert steps["eval"]["job"] == f"{name}-2-eval"
    assert started(sandbox, space, f"{name}-2-eval") >= ended(sandbox, space, f"{name}-2-train")
    st = status(sandbox, space, name)
    assert st["phase"] == "Succeeded" and st["lastRun"] == 2 and "failedStep" not in st
    listed = gryvia(sandbox, tmp_path, "workflow", "list", "-n", space)
    assert any(line.split()[:4] == [name, "Succeeded", "2", "3/3"] for line in listed.splitlines())
    logs = gryvia(sandbox, tmp_path, "workflow", "logs", name, "--step", "train", "-n", space)
    assert "training run 2" in logs


def test_a_schedule_starts_one_run_per_minute(
    sandbox: SandboxHandle, space: str, scheduled: str
) -> None:
    wait_run(sandbox, space, scheduled, 2, "Running", "Succeeded", "Failed")
    st = status(sandbox, space, scheduled)
    runs = st["runs"]
    assert [r["number"] for r in runs] == list(range(1, len(runs) + 1))
    assert st["lastRun"] == len(runs)
    assert {r["trigger"] for r in runs} == {"Schedule"}
    times = [datetime.fromisoformat(r["scheduledTime"]) for r in runs]
    assert all(t.second == 0 for t in times), times
    gaps = {(b - a).total_seconds() for a, b in pairwise(times)}
    assert gaps == {60.0}, f"one run per minute: {times}"
    assert datetime.fromisoformat(st["nextScheduleTime"]) > times[-1]
    assert wait_run(sandbox, space, scheduled, 1, "Succeeded", "Failed")["phase"] == "Succeeded"


def test_two_imported_slurm_scripts_run_in_afterok_order(
    sandbox: SandboxHandle, space: str, tmp_path: Path
) -> None:
    """`gryvia sbatch submit` of a script and one `--dependency=afterok:` on it: the second
    step's job starts only after the first ended, and both run their batch scripts."""
    first = tmp_path / "fetch.sh"
    first.write_text(
        "#!/bin/sh\n#SBATCH --job-name=fetch\n#SBATCH -c 1\necho fetched $SLURM_JOB_NAME\n"
    )
    second = tmp_path / "fit.sh"
    second.write_text(
        "#!/bin/sh\n#SBATCH --dependency=afterok:fetch\n#SBATCH -c 1\necho fitted $SLURM_NODELIST\n"
    )
    name = f"slurm-{uuid.uuid4().hex[:5]}"
    gryvia(
        sandbox, tmp_path, "sbatch", "submit", str(first), str(second),
        "--image", "python:3.11", "--name", name, "-n", space,
    )  # fmt: skip
    run1 = wait_run(sandbox, space, name, 1, "Succeeded", "Failed")
    assert run1["phase"] == "Succeeded", run1
    assert [s["job"] for s in run1["steps"]] == [f"{name}-1-fetch", f"{name}-1-fit"]
    assert started(sandbox, space, f"{name}-1-fit") >= ended(sandbox, space, f"{name}-1-fetch")
    logs = gryvia(sandbox, tmp_path, "workflow", "logs", name, "-n", space)
    assert "fetched fetch" in logs
    assert f"fitted {name}-1-fit-0.{name}-1-fit-headless" in logs
    runtime = sandbox.kubectl_json("get", "configmap", "-n", space, f"{name}-fit-slurm-runtime")
    assert runtime["metadata"]["ownerReferences"][0]["kind"] == "GryviaWorkflow"
