"""Issue #38, failure 6: nothing of Gryvia blocks a namespace deletion once the operator is
gone. A finished job's pod has its log saved and loses the `gryvia.io/save-log` finalizer while
the operator runs; a running pod deleted with the namespace after the operator stopped is held,
`gryvia status` says so (exit 1) and names the fix, and the fix lets the namespace go."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from gryvia_operator.api.names import FINALIZER_SAVE_LOG, LABEL_JOB, saved_logs_name
from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, kubectl_json, wait_phase
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _job(name: str, script: str) -> dict[str, Any]:
    obj = make_job(name).image("none").gpus(0).command("sh", "-c", script).obj()
    for key in ("uid", "generation", "resourceVersion", "namespace"):
        obj["metadata"].pop(key, None)
    return obj


def _pods(sandbox: SandboxHandle, ns: str, job: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubectl_json(
        sandbox, "get", "pods", "-n", ns, "-l", f"{LABEL_JOB}={job}"
    )["items"]
    return items


def _namespace_gone(sandbox: SandboxHandle, ns: str) -> bool:
    found = sandbox.kubectl_run("get", "namespace", ns, "--ignore-not-found", "-o", "name")
    return not found.stdout.strip()


def test_no_finalizer_outlives_the_operator(
    sandbox: SandboxHandle, namespace: str, live_operator: OperatorProcess
) -> None:
    create(sandbox, namespace, _job("done", "echo finished"), _job("held", "echo up; sleep 300"))
    wait_phase(sandbox, namespace, "done", "Succeeded", timeout=60)

    def released() -> bool:
        pods = _pods(sandbox, namespace, "done")
        return bool(pods) and all(
            FINALIZER_SAVE_LOG not in (p["metadata"].get("finalizers") or []) for p in pods
        )

    wait_for(released, timeout=30, what="the finished pod's save-log finalizer removed")
    saved = kubectl_json(sandbox, "get", "configmap", "-n", namespace, saved_logs_name("done"))
    assert saved["data"]["replica-0.log"] == "finished"

    wait_phase(sandbox, namespace, "held", "Running", timeout=60)
    [running] = _pods(sandbox, namespace, "held")
    assert FINALIZER_SAVE_LOG in running["metadata"]["finalizers"]
    name = running["metadata"]["name"]

    live_operator.stop()
    try:
        sandbox.kubectl_run("delete", "namespace", namespace, "--wait=false")

        def held() -> bool:
            pods = [p for p in _pods(sandbox, namespace, "held") if p["metadata"]["name"] == name]
            return bool(pods) and pods[0].get("status", {}).get("phase") == "Failed"

        wait_for(held, timeout=30, what="the deleted running pod stopped and held")
        env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
        env.update(KUBECONFIG=str(sandbox.kubeconfig), NO_COLOR="1")
        status = run_gryvia("status", env=env, timeout=60)
        assert status.returncode == 1, status.stdout + status.stderr
        assert "Pod finalizers" in status.stdout
        assert namespace in status.stdout
        assert "python -m gryvia_operator.release_finalizers" in status.stdout

        module = "gryvia_operator.release_finalizers"
        fix = subprocess.run(
            [
                sys.executable,
                "-m",
                module,
                "--kubeconfig",
                str(sandbox.kubeconfig),
                "-n",
                namespace,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert fix.returncode == 0, fix.stderr
        assert "from 1 pod(s)" in fix.stdout
        wait_for(lambda: _namespace_gone(sandbox, namespace), timeout=60, what="the namespace gone")
    finally:
        live_operator.start()
