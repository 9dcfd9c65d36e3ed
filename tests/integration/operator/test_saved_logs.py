"""A job pod deleted while the operator is down stays (finalizer gryvia.io/save-log) with its
log until the operator is back, which saves the log's last lines and lets the pod go."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gryvia_operator.api.names import FINALIZER_SAVE_LOG, LABEL_JOB, saved_logs_name
from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, kubectl_json, wait_phase
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _pods(sandbox: SandboxHandle, ns: str, job: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubectl_json(
        sandbox, "get", "pods", "-n", ns, "-l", f"{LABEL_JOB}={job}"
    )["items"]
    return items


def test_a_pod_deleted_while_the_operator_is_down_is_saved_when_it_is_back(
    sandbox: SandboxHandle, namespace: str, live_operator: OperatorProcess
) -> None:
    script = "for i in 1 2 3; do echo line $i; done; sleep 300"
    job = make_job("held").image("none").gpus(0).command("sh", "-c", script).obj()
    for key in ("uid", "generation", "resourceVersion", "namespace"):
        job["metadata"].pop(key, None)
    create(sandbox, namespace, job)
    wait_phase(sandbox, namespace, "held", "Running")
    wait_for(
        lambda: "line 3" in sandbox.kubectl_run("logs", "-n", namespace, "job/held").stdout,
        what="the pod's third line",
    )
    [pod] = _pods(sandbox, namespace, "held")
    assert FINALIZER_SAVE_LOG in pod["metadata"]["finalizers"]
    name = pod["metadata"]["name"]
    live_operator.stop()
    try:
        sandbox.kubectl_run("delete", "pod", "-n", namespace, name, "--wait=false")

        def stopped_and_held() -> dict[str, Any] | None:
            found = [p for p in _pods(sandbox, namespace, "held") if p["metadata"]["name"] == name]
            if found and found[0].get("status", {}).get("phase") == "Failed":
                return found[0]
            return None

        # the sandbox kubelet stopped it and reported it Failed; the finalizer keeps it
        held = wait_for(stopped_and_held, timeout=60, what="the deleted pod stopped and held")
        assert held["metadata"]["deletionTimestamp"]
        state = held["status"]["containerStatuses"][0]["state"]
        assert state["terminated"]["exitCode"] == 143  # SIGTERM
    finally:
        live_operator.start()

    def gone() -> bool:
        return all(p["metadata"]["name"] != name for p in _pods(sandbox, namespace, "held"))

    wait_for(gone, timeout=60, what="the held pod released by the restarted operator")
    saved = kubectl_json(sandbox, "get", "configmap", "-n", namespace, saved_logs_name("held"))
    assert saved["data"]["replica-0.log"] == "line 1\nline 2\nline 3"
    meta = json.loads(saved["data"]["replica-0.json"])
    assert meta["pod"] == name and meta["cut"] is False and meta["lines"] == 3
    owner = saved["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("GryviaAIJob", "held")


def test_a_statefulset_pod_deleted_by_hand_is_saved_and_replaced(
    sandbox: SandboxHandle, namespace: str
) -> None:
    script = "echo serving; sleep 300"
    job = make_job("serve").type("inference").image("none").gpus(0).command("sh", "-c", script)
    manifest = job.obj()
    for key in ("uid", "generation", "resourceVersion", "namespace"):
        manifest["metadata"].pop(key, None)
    create(sandbox, namespace, manifest)

    def running_pod() -> dict[str, Any] | None:
        pods = [
            p
            for p in _pods(sandbox, namespace, "serve")
            if "deletionTimestamp" not in p["metadata"]
        ]
        return pods[0] if pods and pods[0].get("status", {}).get("phase") == "Running" else None

    first = wait_for(running_pod, timeout=90, what="the StatefulSet's pod running")
    assert FINALIZER_SAVE_LOG in first["metadata"]["finalizers"]
    wait_for(
        lambda: (
            "serving"
            in sandbox.kubectl_run("logs", "-n", namespace, first["metadata"]["name"]).stdout
        ),
        what="its first line",
    )
    sandbox.kubectl_run("delete", "pod", "-n", namespace, first["metadata"]["name"], "--wait=false")

    def replaced() -> dict[str, Any] | None:
        pod = running_pod()
        return pod if pod and pod["metadata"]["uid"] != first["metadata"]["uid"] else None

    wait_for(replaced, timeout=90, what="the pod replaced by the StatefulSet")
    saved = kubectl_json(sandbox, "get", "configmap", "-n", namespace, saved_logs_name("serve"))
    assert saved["data"]["replica-0.log"] == "serving"
    assert json.loads(saved["data"]["replica-0.json"])["pod"] == first["metadata"]["name"]
