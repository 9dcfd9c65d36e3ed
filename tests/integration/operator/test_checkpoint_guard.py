"""A checkpoint-guarded 2-node job whose pod is deleted mid-run: both ranks are replaced and
resume from the last committed step, which the trainer's log shows (docs/checkpoints.md)."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gryvia_operator.api.checkpointguard import configmap_name
from gryvia_operator.api.names import LABEL_JOB
from gryvia_operator.reconcile.checkpointguard import SCHEDULING_GATE
from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, kubectl_json, wait_phase
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

# Rank 0 commits a step every half second; every rank prints the step it starts from.
TRAINER = r"""
step="${GRYVIA_RESUME_STEP:-}"
if [ -n "$step" ]; then echo "rank $NODE_RANK resumed from step $step"
else echo "rank $NODE_RANK starting fresh"; step=0; fi
echo "checkpoints in $GRYVIA_CHECKPOINT_DIR every ${GRYVIA_CHECKPOINT_INTERVAL_SECONDS}s"
while true; do
  step=$((step + 1)); sleep 0.5
  if [ "$NODE_RANK" = 0 ]; then echo "GRYVIA_CHECKPOINT_COMMITTED step=$step"; fi
done
"""


@pytest.fixture(scope="module")
def guard_operator(operator: OperatorProcess) -> Iterator[OperatorProcess]:
    """The session's operator (checkpoint guards on, logs read every second)."""
    operator.ensure_running()
    yield operator


@pytest.fixture
def ns(sandbox: SandboxHandle, guard_operator: OperatorProcess) -> Iterator[str]:
    with sandbox.fresh_namespace("ckpt") as name:
        yield name


@pytest.fixture
def volume(sandbox: SandboxHandle, tmp_path: Path) -> Iterator[str]:
    """A StorageClass (no provisioner: spec.storage must name a class that exists) with one
    static hostPath PV (the sandbox has no provisioner)."""
    klass = f"ckpt-{uuid.uuid4().hex[:6]}"
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": klass},
        "provisioner": "kubernetes.io/no-provisioner",
    }
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": klass},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteMany"],
            "storageClassName": klass,
            "hostPath": {"path": str(tmp_path)},
        },
    }
    sandbox.apply(sc, pv)
    try:
        yield klass
    finally:
        sandbox.kubectl_run("delete", "pv", klass, "--wait=false", check=False)
        sandbox.kubectl_run("delete", "storageclass", klass, "--wait=false", check=False)


@pytest.fixture
def env(sandbox: SandboxHandle, tmp_path: Path) -> dict[str, str]:
    """Environment of `gryvia` subprocesses against the sandbox."""
    out = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    out |= {
        "KUBECONFIG": str(sandbox.kubeconfig),
        "GRYVIA_CONFIG_HOME": str(tmp_path / "config"),
        "NO_COLOR": "1",
    }
    return out


def _pods(sandbox: SandboxHandle, ns: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubectl_json(
        sandbox, "get", "pods", "-n", ns, "-l", f"{LABEL_JOB}=train"
    )["items"]
    return items


def _log(sandbox: SandboxHandle, ns: str, pod: str) -> str:
    return sandbox.kubectl_run("logs", "-n", ns, pod, check=False).stdout


def _guard_status(sandbox: SandboxHandle, ns: str) -> dict[str, Any]:
    guard: dict[str, Any] = kubectl_json(sandbox, "get", "gryviacheckpointguard", "-n", ns, "g")
    return dict(guard.get("status") or {})


def _committed(sandbox: SandboxHandle, ns: str) -> list[int]:
    jobs = _guard_status(sandbox, ns).get("jobs") or []
    return next((list(j["steps"]) for j in jobs if j["job"] == "train"), [])


def test_a_deleted_pod_of_a_guarded_two_node_job_resumes_from_the_last_committed_step(
    sandbox: SandboxHandle, ns: str, volume: str, env: dict[str, str]
) -> None:
    made = run_gryvia(
        "checkpoint", "create", "g", "-l", "checkpoint=on", "--interval", "30", "-n", ns, env=env
    )
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == "gryviacheckpointguard.gryvia.io/g"
    bad = run_gryvia("checkpoint", "create", "h", "--interval", "5", "-n", ns, env=env)
    assert bad.returncode == 2 and "intervalSeconds" in bad.stderr
    job = (
        make_job("train")
        .image("none")
        .gpus(2)
        .gpu_type("H100")
        .distributed(nodes=2)
        .storage(volume, "1Gi")
        .retry_limit(2)
        .command("sh", "-c", TRAINER)
        .obj()
    )
    for key in ("uid", "generation", "resourceVersion", "namespace"):
        job["metadata"].pop(key, None)
    job["metadata"]["labels"] = {"checkpoint": "on"}
    create(sandbox, ns, job)
    wait_phase(sandbox, ns, "train", "Running", timeout=120)

    first = wait_for(lambda: len(_pods(sandbox, ns)) == 2 and _pods(sandbox, ns), timeout=60)
    for pod in first:  # created gated, released once the ConfigMap existed
        assert SCHEDULING_GATE not in [g["name"] for g in pod["spec"].get("schedulingGates", [])]
        names = {e["name"] for e in pod["spec"]["containers"][0]["env"]}
        assert {"GRYVIA_CHECKPOINT_DIR", "GRYVIA_RESUME_STEP"} <= names
    by_rank = {p["metadata"]["annotations"][COMPLETION]: p["metadata"]["name"] for p in first}
    wait_for(
        lambda: "rank 0 starting fresh" in _log(sandbox, ns, by_rank["0"]),
        what="rank 0's fresh start",
    )
    assert "checkpoints in /data/checkpoints every 30s" in _log(sandbox, ns, by_rank["0"])
    wait_for(lambda: max(_committed(sandbox, ns) or [0]) >= 4, timeout=60, what="step 4")
    seen = max(_committed(sandbox, ns))

    sandbox.kubectl_run("delete", "pod", "-n", ns, by_rank["0"], "--wait=false")
    old = set(by_rank.values())

    def restored() -> dict[str, Any] | None:
        last = _guard_status(sandbox, ns).get("lastRestore")
        return last if last and last["job"] == "train" else None

    last = wait_for(restored, timeout=90, what="the guard's lastRestore")
    step = int(last["step"])
    assert step >= seen and last["reason"] == "PodDeleted"

    def replaced() -> dict[str, str] | None:
        pods = [p for p in _pods(sandbox, ns) if p["metadata"]["name"] not in old]
        running = [p for p in pods if p.get("status", {}).get("phase") == "Running"]
        if len(running) != 2:
            return None
        return {p["metadata"]["annotations"][COMPLETION]: p["metadata"]["name"] for p in running}

    new = wait_for(replaced, timeout=120, what="both ranks replaced and running")
    for rank, pod in new.items():  # the whole job restarted: every rank from the same step
        wait_for(
            lambda pod=pod, rank=rank: (
                f"rank {rank} resumed from step {step}\n" in _log(sandbox, ns, pod)
            ),
            timeout=30,
            what=f"rank {rank}'s resume line",
        )
    assert all(p["metadata"]["name"] not in old for p in _pods(sandbox, ns))  # rank 1 evicted
    log0 = _log(sandbox, ns, new["0"])
    after = [int(s) for s in re.findall(r"COMMITTED step=(\d+)", log0)]
    wait_for(lambda: max(_committed(sandbox, ns) or [0]) > step, timeout=30, what="commits go on")
    assert not after or after[0] == step + 1
    cm = kubectl_json(sandbox, "get", "configmap", "-n", ns, configmap_name("train"))
    assert int(cm["data"]["restores"]) >= 2
    jobs = _guard_status(sandbox, ns)["jobs"]
    assert next(j for j in jobs if j["job"] == "train")["restores"] >= 2
    assert kubectl_json(sandbox, "get", "gryviaaijob", "-n", ns, "train")["status"]["phase"] in (
        "Running",
    )
    listed = run_gryvia("checkpoint", "list", "-n", ns, env=env)
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()
    assert header.split() == ["NAME", "SELECTOR", "INTERVAL", "JOBS", "LAST-RESTORE"]
    assert row.split() == ["g", "checkpoint=on", "30s", "1", "train", "@", "step", str(step)]
    shown = run_gryvia("checkpoint", "get", "g", "-n", ns, env=env)
    assert shown.returncode == 0, shown.stderr
    assert f"from step {step} (PodDeleted," in shown.stdout
    assert re.search(r"Job train: +committed [0-9, ]+; [0-9]+ restore\(s\)", shown.stdout)


COMPLETION = "batch.kubernetes.io/job-completion-index"


def test_with_lost_pods_only_the_replaced_pod_resumes_and_the_other_rank_keeps_running(
    sandbox: SandboxHandle, ns: str, volume: str, env: dict[str, str]
) -> None:
    """`restore.wholeJob: false` (`--lost-pods-only`): rank 0 deleted mid-run is replaced and
    resumes from the last committed step; rank 1 is not evicted and keeps its pod."""
    made = run_gryvia(
        "checkpoint", "create", "g", "-l", "checkpoint=on", "--lost-pods-only", "-n", ns, env=env
    )
    assert made.returncode == 0, made.stderr
    guard = kubectl_json(sandbox, "get", "gryviacheckpointguard", "-n", ns, "g")
    assert guard["spec"]["restore"] == {"enabled": True, "wholeJob": False}
    job = (
        make_job("train")
        .image("none")
        .gpus(2)
        .gpu_type("H100")
        .distributed(nodes=2)
        .storage(volume, "1Gi")
        .retry_limit(2)
        .command("sh", "-c", TRAINER)
        .obj()
    )
    for key in ("uid", "generation", "resourceVersion", "namespace"):
        job["metadata"].pop(key, None)
    job["metadata"]["labels"] = {"checkpoint": "on"}
    create(sandbox, ns, job)
    wait_phase(sandbox, ns, "train", "Running", timeout=120)
    first = wait_for(lambda: len(_pods(sandbox, ns)) == 2 and _pods(sandbox, ns), timeout=60)
    by_rank = {p["metadata"]["annotations"][COMPLETION]: p["metadata"]["name"] for p in first}
    wait_for(lambda: max(_committed(sandbox, ns) or [0]) >= 4, timeout=60, what="step 4")
    seen = max(_committed(sandbox, ns))

    sandbox.kubectl_run("delete", "pod", "-n", ns, by_rank["0"], "--wait=false")

    def restored() -> dict[str, Any] | None:
        last = _guard_status(sandbox, ns).get("lastRestore")
        return last if last and last["job"] == "train" else None

    last = wait_for(restored, timeout=90, what="the guard's lastRestore")
    step = int(last["step"])
    assert step >= seen and last["reason"] == "PodDeleted"

    def replaced() -> str | None:
        pods = _pods(sandbox, ns)
        fresh = [
            p
            for p in pods
            if p["metadata"]["name"] != by_rank["0"]
            and p["metadata"]["annotations"][COMPLETION] == "0"
            and p.get("status", {}).get("phase") == "Running"
        ]
        return fresh[0]["metadata"]["name"] if fresh else None

    new0 = wait_for(replaced, timeout=120, what="rank 0 replaced and running")
    wait_for(
        lambda: f"rank 0 resumed from step {step}\n" in _log(sandbox, ns, new0),
        timeout=30,
        what="rank 0's resume line",
    )
    wait_for(lambda: max(_committed(sandbox, ns) or [0]) > step, timeout=30, what="commits go on")
    log0 = _log(sandbox, ns, new0)
    after = [int(s) for s in re.findall(r"COMMITTED step=(\d+)", log0)]
    assert not after or after[0] == step + 1
    rank1 = [p for p in _pods(sandbox, ns) if p["metadata"]["annotations"][COMPLETION] == "1"]
    assert [p["metadata"]["name"] for p in rank1] == [by_rank["1"]]  # not evicted
    assert rank1[0]["status"]["phase"] == "Running"
    assert "rank 1 starting fresh" in _log(sandbox, ns, by_rank["1"])
    cm = kubectl_json(sandbox, "get", "configmap", "-n", ns, configmap_name("train"))
    assert int(cm["data"]["restores"]) == 1, cm["data"]
    assert kubectl_json(sandbox, "get", "gryviaaijob", "-n", ns, "train")["status"]["phase"] == (
        "Running"
    )
