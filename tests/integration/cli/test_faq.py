"""Every `gryvia` command line the public FAQ shows runs as printed against a live cluster
(sandbox + operator): users copy these lines, so each must work or, for a part Gryvia does not
have yet, say in one line which part it needs."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SandboxHandle
from tests.integration.cli.conftest import kubectl_json
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

# The FAQ's minimal job (required fields: type, gpus, image), with a command the sandbox can run
# (its pods run commands as local processes; images are not pulled).
JOB_YAML = """\
apiVersion: gryvia.io/v1alpha1
kind: GryviaAIJob
metadata:
  name: my-job
spec:
  type: training
  gpus: 1
  gpuType: A100-80G
  image: nvcr.io/nvidia/pytorch:24.01-py3
  command: ["sh", "-c", "for i in 1 2 3; do echo step $i; done"]
"""
JOB_SH = """\
#!/bin/bash
#SBATCH --job-name=faq-import
#SBATCH --nodes=2
#SBATCH --gres=gpu:4
#SBATCH --time=00:10:00
srun python train.py
"""


@pytest.fixture
def faq(
    sandbox: SandboxHandle, operator: OperatorProcess, namespace: str, tmp_path: Path
) -> Iterator[tuple[Path, dict[str, str]]]:
    """A working folder with job.yaml and job.sh, an environment whose default namespace is
    the test's, and the quota `my-team` the FAQ's quota lines name."""
    (tmp_path / "job.yaml").write_text(JOB_YAML)
    (tmp_path / "job.sh").write_text(JOB_SH)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env |= {
        "KUBECONFIG": str(sandbox.kubeconfig),
        "GRYVIA_CONFIG_HOME": str(tmp_path / "config"),
        "GRYVIA_NAMESPACE": namespace,
        "NO_COLOR": "1",
    }
    quota = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaQuota",
        "metadata": {"name": "my-team"},
        "spec": {
            "team": "my-team",
            "namespaces": [namespace],
            "gpuQuota": {"maxGPUs": 16},
            "budget": {"monthlyBudget": 500},
        },
    }
    sandbox.apply(quota)
    try:
        yield tmp_path, env
    finally:
        for kind, name in (("gryviaquota", "my-team"), ("gryviatenant", "ml-research")):
            sandbox.kubectl_run("delete", kind, name, "--ignore-not-found", "--wait=false")


def _run(folder: Path, env: dict[str, str], line: str) -> subprocess.CompletedProcess[str]:
    """Run one FAQ line (`gryvia ...`, split like a shell would) in `folder`."""
    import shlex

    words = shlex.split(line)
    assert words[0] == "gryvia", line
    return run_gryvia(*words[1:], env=env, cwd=folder)


def _ok(folder: Path, env: dict[str, str], line: str) -> str:
    done = _run(folder, env, line)
    assert done.returncode == 0, f"{line}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    return done.stdout


def test_every_faq_command_line_runs_as_printed(
    faq: tuple[Path, dict[str, str]], sandbox: SandboxHandle, namespace: str
) -> None:
    folder, env = faq
    _ok(folder, env, "gryvia validate job.yaml")
    _ok(folder, env, "gryvia submit --file job.yaml")
    assert "my-job" in _ok(folder, env, "gryvia status my-job")
    followed = _ok(folder, env, "gryvia logs my-job --follow")
    assert [line for line in followed.splitlines() if line.startswith("step")] == [
        "step 1",
        "step 2",
        "step 3",
    ]
    assert "step 3" in _ok(folder, env, "gryvia logs my-job --tail 100")
    wait_for(
        lambda: (kubectl_json(sandbox, "get", "gryviaquota", "my-team").get("status") or {}).get(
            "phase"
        ),
        what="quota my-team status",
    )
    assert "my-team" in _ok(folder, env, "gryvia quota my-team")
    assert "my-team" in _ok(folder, env, "gryvia quota my-team --budget")
    assert "A100-80G" in _ok(folder, env, "gryvia capacity")
    _ok(folder, env, "gryvia cost")
    _ok(folder, env, "gryvia usage")
    assert "a100-80g" in _ok(folder, env, "gryvia catalog")
    _ok(folder, env, "gryvia queue")
    assert "gpu-" in _ok(folder, env, "gryvia list nodes")
    assert "gpu-" in _ok(folder, env, "gryvia health gpu")
    _ok(folder, env, "gryvia delete job my-job --yes")
    wait_for(
        lambda: (
            sandbox.kubectl_run(
                "get", "gryviaaijob", "my-job", "-n", namespace, check=False
            ).returncode
            != 0
        ),
        what="my-job deleted",
    )
    imported = _ok(folder, env, "gryvia submit --sbatch job.sh --image <image> --dry-run")
    assert "kind: GryviaAIJob" in imported and "faq-import" in imported
    _ok(
        folder,
        env,
        'gryvia tenant create ml-research --display-name "ML Research Team" '
        "--allowed-sku a100-80g --max-gpus 128 --isolated true",
    )
    tenant = kubectl_json(sandbox, "get", "gryviatenant", "ml-research")
    assert tenant["spec"]["networkPolicy"] == {"isolated": True}
    assert tenant["spec"]["displayName"] == "ML Research Team"
    assert "ml-research" in _ok(folder, env, "gryvia tenant list")


@pytest.mark.parametrize(
    "line", ["gryvia gpu training --job my-job", "gryvia gpu nccl --job my-job"]
)
def test_faq_gpu_lines_are_built_and_name_a_missing_job(
    faq: tuple[Path, dict[str, str]], line: str
) -> None:
    """Built (issue 36): against a job that does not exist they say so, naming it, and exit 1
    (tests/integration/cli/test_gpu_use.py runs them on real jobs)."""
    folder, env = faq
    done = _run(folder, env, line)
    assert done.returncode == 1 and done.stdout == ""
    assert "my-job" in done.stderr and "not have yet" not in done.stderr, done.stderr


def test_faq_reservation_create_is_built_and_says_what_it_needs(
    faq: tuple[Path, dict[str, str]],
) -> None:
    """The FAQ names `gryvia reservation create` bare: the command exists (issue 18) and asks
    for its name and options instead of saying a part is missing."""
    folder, env = faq
    done = _run(folder, env, "gryvia reservation create")
    assert done.returncode == 2, done.stderr
    assert "Missing argument 'name'" in done.stderr and "not have yet" not in done.stderr
