"""`submit --wait --logs` and `logs` on multi-replica jobs that fail or outlive the wait."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.builders import job_yaml
from tests.conftest import SandboxHandle
from tests.integration.cli.conftest import CliCase, Gryvia, kubectl_json
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def two_node_job(tmp_path: Path, name: str, script: str) -> str:
    path = tmp_path / f"{name}.yaml"
    two_nodes = "  distributed:\n    enabled: true\n    nodes: 2\n"
    path.write_text(
        job_yaml(
            name, gpus=0, gpu_type=None, image="python:3.12-slim", script=script, extra=two_nodes
        )
    )
    return str(path)


def submit_waiting(case: CliCase, name: str, script: str) -> tuple[Any, float]:
    """`gryvia submit` a two-node job with `--wait --logs --wait-timeout 2m`; return the
    finished process and the time (epoch seconds) it returned."""
    result = case.gryvia(
        "submit",
        "-f",
        two_node_job(case.tmp_path, name, script),
        *("--wait", "--logs", "--wait-timeout", "2m", "-n", case.namespace),
        timeout=180,
    )
    return result, time.time()


def finished_at(sandbox: SandboxHandle, namespace: str, job: str, replica: int) -> float:
    """When replica `replica`'s container ended (epoch seconds, from the pod's status)."""
    pods = kubectl_json(sandbox, "get", "pods", "-n", namespace, "-l", f"gryvia.io/job={job}")
    for pod in pods["items"]:
        index = pod["metadata"]["annotations"].get("batch.kubernetes.io/job-completion-index")
        if index == str(replica):
            state: dict[str, Any] = pod["status"]["containerStatuses"][0]["state"]
            stamp = state["terminated"]["finishedAt"].replace("Z", "+00:00")
            return datetime.fromisoformat(stamp).timestamp()
    raise AssertionError(f"no pod for replica {replica} of {job}: {json.dumps(pods)[:400]}")


def pod_replicas(sandbox: SandboxHandle, namespace: str, job: str) -> list[str]:
    """The completion indexes of the job's pods that exist, sorted."""
    pods = kubectl_json(sandbox, "get", "pods", "-n", namespace, "-l", f"gryvia.io/job={job}")
    return sorted(
        p["metadata"]["annotations"].get("batch.kubernetes.io/job-completion-index", "?")
        for p in pods["items"]
    )


def test_failed_job_whose_other_replica_keeps_running_ends_the_wait(case: CliCase) -> None:
    sandbox, namespace, gryvia = case.sandbox, case.namespace, case.gryvia
    # rank 1 fails after printing; rank 0 (the followed log) would wait 300 s for it
    script = (
        'echo "rank $JOB_COMPLETION_INDEX up"; '
        'if [ "$JOB_COMPLETION_INDEX" = 1 ]; then sleep 3; echo "rank 1 crashed"; exit 1; fi; '
        'echo "rank 0 waiting for rank 1"; sleep 300'
    )
    result, returned = submit_waiting(case, "hangs", script)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Streaming logs from pod: hangs-0-" in result.stderr
    assert "rank 0 waiting for rank 1" in result.stdout
    assert "job hangs Failed" in result.stderr
    assert "error: job(s) did not succeed: hangs Failed" in result.stderr
    failed = finished_at(sandbox, namespace, "hangs", 1)
    assert returned - failed <= 10, f"returned {returned - failed:.1f}s after rank 1 failed"

    # Kubernetes deleted the running rank 0 when the job failed; the operator saved its last
    # lines before letting the pod go; the failed rank 1 keeps its pod
    wait_for(
        lambda: pod_replicas(sandbox, namespace, "hangs") == ["1"],
        timeout=60,
        what="the stopped replica 0's pod to be gone",
    )
    shown = gryvia("logs", "hangs", "-n", namespace)
    assert shown.returncode == 0, shown.stderr
    assert "replica 0 of job hangs has no pod (pod hangs-0-" in shown.stderr
    assert "showing the last 2 line(s) the operator saved at 20" in shown.stderr
    assert shown.stdout.splitlines() == ["rank 0 up", "rank 0 waiting for rank 1"]
    live = gryvia("logs", "hangs", "--replica", "1", "-n", namespace)
    assert live.returncode == 0, live.stderr
    assert live.stdout.splitlines() == ["rank 1 up", "rank 1 crashed"]
    every = gryvia("logs", "hangs", "--all-replicas", "-n", namespace)
    assert every.returncode == 0, every.stderr
    assert every.stdout.splitlines() == [
        "[0] rank 0 up",
        "[0] rank 0 waiting for rank 1",
        "[1] rank 1 up",
        "[1] rank 1 crashed",
    ]
    assert "has no pod (Kubernetes deletes" not in every.stderr


def test_failed_two_node_job_keeps_both_logs(case: CliCase) -> None:
    sandbox, namespace, gryvia, tmp_path = case.sandbox, case.namespace, case.gryvia, case.tmp_path
    # rank 1 fails; rank 0 notices (as a DDP rank sees its peer vanish) and fails too
    marker = tmp_path / "rank1-failed"
    script = (
        'echo "rank $JOB_COMPLETION_INDEX: step 1"; '
        'if [ "$JOB_COMPLETION_INDEX" = 1 ]; then sleep 3; echo "rank 1: CUDA error"; '
        f"touch {marker}; exit 1; fi; "
        f'while [ ! -e {marker} ]; do sleep 0.1; done; echo "rank 0: peer 1 lost"; exit 1'
    )
    result, returned = submit_waiting(case, "broken", script)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "rank 0: step 1" in result.stdout and "rank 0: peer 1 lost" in result.stdout
    assert "job broken Failed" in result.stderr
    failed = finished_at(sandbox, namespace, "broken", 1)
    assert returned - failed <= 10, f"returned {returned - failed:.1f}s after rank 1 failed"

    every = gryvia("logs", "broken", "--all-replicas", "--tail", "-1", "-n", namespace)
    assert every.returncode == 0, every.stderr
    assert every.stdout.splitlines() == [
        "[0] rank 0: step 1",
        "[0] rank 0: peer 1 lost",
        "[1] rank 1: step 1",
        "[1] rank 1: CUDA error",
    ]
    followed = gryvia("logs", "broken", "--all-replicas", "-f", "-n", namespace, timeout=60)
    assert followed.returncode == 0, followed.stderr
    assert sorted(followed.stdout.splitlines()) == sorted(every.stdout.splitlines())

    missing = gryvia("logs", "broken", "--replica", "5", "-n", namespace)
    assert missing.returncode == 1
    assert "job broken has 2 replica(s), 0 to 1; there is no replica 5" in missing.stderr
    assert "replicas with pods: 0, 1; or pass --all-replicas" in missing.stderr
    assert missing.stdout == ""


def test_a_wait_that_passes_its_timeout_exits_124(
    operator: OperatorProcess,
    sandbox: SandboxHandle,
    namespace: str,
    gryvia: Gryvia,
    tmp_path: Path,
) -> None:
    script = 'echo "rank $JOB_COMPLETION_INDEX training"; sleep 300'
    started = time.monotonic()
    result = gryvia(
        "submit",
        "-f",
        two_node_job(tmp_path, "slow", script),
        "--wait",
        "--logs",
        "--wait-timeout",
        "20s",
        "-n",
        namespace,
        timeout=120,
    )
    took = time.monotonic() - started
    assert result.returncode == 124, result.stdout + result.stderr
    assert "rank 0 training" in result.stdout
    assert (
        "error: job slow did not end before the wait timeout; stopped following its log "
        "(the job keeps running)" in result.stderr
    )
    assert "keep following it with: gryvia logs slow -f" in result.stderr
    assert 20 <= took < 60, f"took {took:.1f}s"
    listed = json.loads(gryvia("get", "job", "slow", "-n", namespace, "-o", "json").stdout)
    assert listed["status"]["phase"] == "Running"
    waited = gryvia(
        "submit",
        "-f",
        two_node_job(tmp_path, "slow2", script),
        "--wait",
        "--wait-timeout",
        "5s",
        "-n",
        namespace,
        timeout=120,
    )
    assert waited.returncode == 124, waited.stderr
    assert "error: job slow2 is still" in waited.stderr
    assert "at the wait timeout; stopped waiting (the job keeps running)" in waited.stderr

    # a cancelled job's workload is deleted, pods with it; their last lines were saved
    assert gryvia("cancel", "slow", "-n", namespace).returncode == 0
    wait_for(
        lambda: pod_replicas(sandbox, namespace, "slow") == [],
        timeout=60,
        what="the cancelled job's pods to be gone",
    )
    shown = gryvia("logs", "slow", "-n", namespace)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == ["rank 0 training"]
    assert "replica 0 of job slow has no pod (pod slow-0-" in shown.stderr
    every = gryvia("logs", "slow", "--all-replicas", "-n", namespace)
    assert every.returncode == 0, every.stderr
    assert every.stdout.splitlines() == ["[0] rank 0 training", "[1] rank 1 training"]


def test_deleting_a_job_leaves_no_pod_held_by_the_save_log_finalizer(case: CliCase) -> None:
    sandbox, namespace, gryvia = case.sandbox, case.namespace, case.gryvia
    script = 'echo "rank $JOB_COMPLETION_INDEX running"; sleep 300'
    path = two_node_job(case.tmp_path, "doomed", script)
    assert gryvia("submit", "-f", path, "-n", namespace).returncode == 0

    def running() -> bool:
        pods = kubectl_json(sandbox, "get", "pods", "-n", namespace, "-l", "gryvia.io/job=doomed")
        phases = [p.get("status", {}).get("phase") for p in pods["items"]]
        return len(phases) == 2 and all(ph == "Running" for ph in phases)

    wait_for(running, timeout=90, what="both replicas of doomed to run")
    pods = kubectl_json(sandbox, "get", "pods", "-n", namespace, "-l", "gryvia.io/job=doomed")
    assert all("gryvia.io/save-log" in p["metadata"]["finalizers"] for p in pods["items"])
    deleted = gryvia("delete", "job", "doomed", "--yes", "-n", namespace)
    assert deleted.returncode == 0, deleted.stderr

    def all_gone() -> bool:
        left = kubectl_json(sandbox, "get", "pods,jobs,configmaps", "-n", namespace)
        return not [o for o in left["items"] if "doomed" in o["metadata"]["name"]]

    wait_for(all_gone, timeout=90, what="the deleted job's pods, Job and saved logs to be gone")
    jobs = kubectl_json(sandbox, "get", "gryviaaijobs", "-n", namespace)
    assert jobs["items"] == []


def test_a_cancelled_job_with_a_long_log_keeps_its_last_2000_lines(case: CliCase) -> None:
    sandbox, namespace, gryvia = case.sandbox, case.namespace, case.gryvia
    path = case.tmp_path / "chatty.yaml"
    script = 'i=1; while [ $i -le 2500 ]; do echo "line $i"; i=$((i+1)); done; sleep 300'
    path.write_text(job_yaml("chatty", gpus=0, gpu_type=None, image="none", script=script))
    assert gryvia("submit", "-f", str(path), "-n", namespace).returncode == 0
    wait_for(
        lambda: "line 2500" in gryvia("logs", "chatty", "--tail", "1", "-n", namespace).stdout,
        timeout=90,
        what="chatty's last line",
    )
    assert gryvia("cancel", "chatty", "-n", namespace).returncode == 0
    wait_for(
        lambda: pod_replicas(sandbox, namespace, "chatty") == [],
        timeout=60,
        what="the cancelled job's pod to be gone",
    )
    shown = gryvia("logs", "chatty", "--tail", "-1", "-n", namespace)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("[gryvia: earlier lines not saved; these are the last 2000 line(s)")
    assert lines[1:] == [f"line {n}" for n in range(501, 2501)]
    assert "showing the last 2000 line(s) the operator saved at" in shown.stderr
    assert "cut: the log was longer, earlier lines were not kept" in shown.stderr
    tail = gryvia("logs", "chatty", "--tail", "2", "-n", namespace)
    assert tail.stdout.splitlines() == ["line 2499", "line 2500"]


def test_logs_follow_shows_every_attempt_of_a_retried_job_and_ends_with_it(case: CliCase) -> None:
    """Issue 38, failure 11: with `retryLimit: 1` the first pod fails and the batch Job makes
    a second; `logs -f` used to end with the first pod while the job still ran."""
    path = case.tmp_path / "retried.yaml"
    script = 'echo "attempt ran in $HOSTNAME"; sleep 2; exit 1'
    path.write_text(
        job_yaml("retried", gpus=0, gpu_type=None, script=script, extra="  retryLimit: 1\n")
    )
    submitted = case.gryvia("submit", "-f", str(path), "-n", case.namespace)
    assert submitted.returncode == 0, submitted.stderr

    followed = case.gryvia("logs", "retried", "-f", "-n", case.namespace, timeout=150)

    assert followed.returncode == 0, followed.stderr
    assert followed.stdout.count("attempt ran in ") == 2, followed.stdout
    pods = kubectl_json(
        case.sandbox, "get", "pods", "-n", case.namespace, "-l", "gryvia.io/job=retried"
    )["items"]
    names = sorted((p["metadata"]["creationTimestamp"], p["metadata"]["name"]) for p in pods)
    assert len(names) == 2
    second = names[1][1]
    assert f"job retried: attempt 2, pod {second}" in followed.stderr, followed.stderr
    job = kubectl_json(case.sandbox, "get", "gryviaaijob", "retried", "-n", case.namespace)
    assert job["status"]["phase"] == "Failed"  # it ended with the job
