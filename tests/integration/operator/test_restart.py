"""An operator killed mid-burst and restarted: every job ends with one workload and one
Service, none lost. Also the process's health and metrics endpoints."""

from __future__ import annotations

import subprocess
import time
from collections import Counter

import pytest

from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import kubectl_json
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
JOBS = 200


def _count(sandbox: SandboxHandle, ns: str, kind: str) -> Counter[str]:
    items = kubectl_json(sandbox, "get", kind, "-n", ns, "-l", "gryvia.io/job")["items"]
    return Counter(i["metadata"]["labels"]["gryvia.io/job"] for i in items)


def test_sigkill_mid_burst_loses_nothing(
    sandbox: SandboxHandle, namespace: str, live_operator: OperatorProcess
) -> None:
    import json

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
        time.sleep(1)
        live_operator.start()
    finally:
        assert submit.wait(timeout=300) == 0, submit.stderr.read() if submit.stderr else ""

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
        listed = kubectl_json(sandbox, "get", "gryviaaijobs", "-n", namespace)["items"]
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
