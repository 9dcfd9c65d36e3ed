"""A StatefulSet pod deleted by hand is saved (finalizer gryvia.io/save-log) and replaced. A job
pod deleted while the operator is down is proved in `test_restart.py`, in the same window as
the operator's restart mid-burst (one operator start for both)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gryvia_operator.api.names import FINALIZER_SAVE_LOG, LABEL_JOB, saved_logs_name
from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, kubectl_json
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _pods(sandbox: SandboxHandle, ns: str, job: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubectl_json(
        sandbox, "get", "pods", "-n", ns, "-l", f"{LABEL_JOB}={job}"
    )["items"]
    return items


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
