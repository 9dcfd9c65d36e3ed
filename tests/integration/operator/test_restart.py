"""An operator killed mid-burst and restarted: every job ends with one workload and one
Service, none lost; a job pod deleted while it was down stays (finalizer gryvia.io/save-log)
with its log until it is back, which saves the log's last lines and lets the pod go. Also the
process's health and metrics endpoints."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from typing import Any

import pytest

from gryvia_operator.api.names import FINALIZER_SAVE_LOG, LABEL_JOB, saved_logs_name
from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, kubectl_json, wait_phase
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
JOBS = 200


def _count(sandbox: SandboxHandle, ns: str, kind: str) -> Counter[str]:
    """Objects of `kind` per burst job (job `held` left out)."""
    items = kubectl_json(sandbox, "get", kind, "-n", ns, "-l", "gryvia.io/job")["items"]
    names = (i["metadata"]["labels"]["gryvia.io/job"] for i in items)
    return Counter(name for name in names if name.startswith("burst-"))


def _held_pods(sandbox: SandboxHandle, ns: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubectl_json(
        sandbox, "get", "pods", "-n", ns, "-l", f"{LABEL_JOB}=held"
    )["items"]
    return items


def _running_held_pod(sandbox: SandboxHandle, ns: str) -> str:
    """Start job `held` (three log lines, then sleep) and return its pod's name once the
    lines are in its log; the pod carries the save-log finalizer."""
    script = "for i in 1 2 3; do echo line $i; done; sleep 300"
    job = make_job("held").image("none").gpus(0).command("sh", "-c", script).obj()
    for key in ("uid", "generation", "resourceVersion", "namespace"):
        job["metadata"].pop(key, None)
    create(sandbox, ns, job)
    wait_phase(sandbox, ns, "held", "Running")
    wait_for(
        lambda: "line 3" in sandbox.kubectl_run("logs", "-n", ns, "job/held").stdout,
        what="the pod's third line",
    )
    [pod] = _held_pods(sandbox, ns)
    assert FINALIZER_SAVE_LOG in pod["metadata"]["finalizers"]
    return str(pod["metadata"]["name"])


def _delete_and_see_it_held(sandbox: SandboxHandle, ns: str, name: str) -> None:
    """Delete the pod while the operator is down: the sandbox kubelet stops it (SIGTERM)
    and reports it Failed; the finalizer keeps it."""
    sandbox.kubectl_run("delete", "pod", "-n", ns, name, "--wait=false")

    def stopped_and_held() -> dict[str, Any] | None:
        found = [p for p in _held_pods(sandbox, ns) if p["metadata"]["name"] == name]
        if found and found[0].get("status", {}).get("phase") == "Failed":
            return found[0]
        return None

    held = wait_for(stopped_and_held, timeout=60, what="the deleted pod stopped and held")
    assert held["metadata"]["deletionTimestamp"]
    state = held["status"]["containerStatuses"][0]["state"]
    assert state["terminated"]["exitCode"] == 143  # SIGTERM


def _saved_when_back(sandbox: SandboxHandle, ns: str, name: str) -> None:
    """The restarted operator saved the held pod's three lines and let it go."""

    def gone() -> bool:
        return all(p["metadata"]["name"] != name for p in _held_pods(sandbox, ns))

    wait_for(gone, timeout=60, what="the held pod released by the restarted operator")
    saved = kubectl_json(sandbox, "get", "configmap", "-n", ns, saved_logs_name("held"))
    assert saved["data"]["replica-0.log"] == "line 1\nline 2\nline 3"
    meta = json.loads(saved["data"]["replica-0.json"])
    assert meta["pod"] == name and meta["cut"] is False and meta["lines"] == 3
    owner = saved["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("GryviaAIJob", "held")


def test_sigkill_mid_burst_loses_nothing_and_a_pod_deleted_meanwhile_is_saved(
    sandbox: SandboxHandle, namespace: str, live_operator: OperatorProcess
) -> None:
    held = _running_held_pod(sandbox, namespace)
    items = []
    for i in range(JOBS):
        obj = make_job(f"burst-{i:03d}").gpus(0).suspend().command("true").obj()
        for key in ("uid", "generation", "resourceVersion", "namespace"):
            obj["metadata"].pop(key, None)
        items.append(obj)
    submit = subprocess.Popen(
        [
            str(sandbox.kubectl),
            "--kubeconfig",
            str(sandbox.kubeconfig),
            "create",
            "-n",
            namespace,
            "-f",
            "-",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert submit.stdin is not None
    submit.stdin.write(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    submit.stdin.close()
    try:
        wait_for(
            lambda: sum(_count(sandbox, namespace, "jobs").values()) >= 30,
            timeout=120,
            what="first Jobs",
        )
        live_operator.kill()
        try:
            _delete_and_see_it_held(sandbox, namespace, held)
        finally:
            live_operator.start()
    finally:
        assert submit.wait(timeout=300) == 0, submit.stderr.read() if submit.stderr else ""
    _saved_when_back(sandbox, namespace, held)

    def settled() -> bool:
        return (
            len(_count(sandbox, namespace, "jobs")) == JOBS
            and len(_count(sandbox, namespace, "services")) == JOBS
        )

    wait_for(settled, timeout=180, interval=1, what="every job's Job and Service")
    jobs, services = _count(sandbox, namespace, "jobs"), _count(sandbox, namespace, "services")
    assert set(jobs.values()) == {1} and set(services.values()) == {1}
    assert sum(_count(sandbox, namespace, "statefulsets").values()) == 0

    def all_have_status() -> bool:
        items = kubectl_json(sandbox, "get", "gryviaaijobs", "-n", namespace)["items"]
        listed = [j for j in items if j["metadata"]["name"].startswith("burst-")]
        return len(listed) == JOBS and all(
            j.get("status", {}).get("phase") == "Scheduling" for j in listed
        )

    wait_for(all_have_status, timeout=120, interval=1, what="every job's status")


def test_health_ready_and_metrics(live_operator: OperatorProcess) -> None:
    assert live_operator.get("/healthz") == (200, "ok")
    assert live_operator.get("/readyz") == (200, "ready")
    status, text = live_operator.get("/metrics", live_operator.metrics_port)
    assert status == 200
    assert "gryvia_operator_reconcile_total" in text
    assert "gryvia_operator_reconcile_duration_seconds_bucket" in text
    assert "gryvia_operator_webhook_requests_total" in text
