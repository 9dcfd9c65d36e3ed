"""The validating webhook, self-registered by the operator; CEL when the operator is down."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, kubectl_json
from tests.support.operator import OperatorProcess

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


def _webhook_only_invalid() -> dict[str, Any]:
    job = (
        make_job("bad")
        .gpus(0)
        .timeout("0s")
        .set(
            resources={"requests": {"cpu": "0"}, "limits": {"memory": "1Gi"}},
        )
    )
    obj = job.manifest()
    obj["spec"]["resources"]["requests"]["memory"] = "2Gi"
    return obj


def test_invalid_job_is_denied_with_all_messages(sandbox: SandboxHandle, namespace: str) -> None:
    out = create(sandbox, namespace, _webhook_only_invalid(), check=False)
    assert out.returncode != 0
    assert 'admission webhook "vgryviaaijob.gryvia.io" denied the request' in out.stderr
    assert "invalid GryviaAIJob: " in out.stderr
    assert 'spec.timeout: duration must be positive, got "0s"' in out.stderr
    assert "CPU request must be positive, got 0" in out.stderr
    assert "memory limit (1Gi) must be >= memory request (2Gi)" in out.stderr


def test_warnings_for_missing_gpu_type(sandbox: SandboxHandle, namespace: str) -> None:
    out = create(sandbox, namespace, make_job("warn").gpus(2).gpu_type("B200").suspend().manifest())
    assert 'no node currently carries GPU type "B200"' in out.stderr


def test_final_usage_record_cannot_change(sandbox: SandboxHandle, namespace: str) -> None:
    record = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaUsageRecord",
        "metadata": {"name": "usage-1"},
        "spec": {
            "tenant": "t",
            "job": "j",
            "jobUID": "u",
            "gpus": 1,
            "rate": 1.0,
            "start": "2025-01-01T00:00:00Z",
            "gpuHours": 1.0,
            "cost": 1.0,
            "final": True,
        },
    }
    create(sandbox, namespace, record)
    out = sandbox.kubectl_run(
        "patch",
        "gryviausagerecord",
        "-n",
        namespace,
        "usage-1",
        "--type=merge",
        "-p",
        '{"spec":{"cost":2}}',
        check=False,
    )
    assert out.returncode != 0
    assert "spec is immutable once final is true" in out.stderr


def test_with_the_operator_down_cel_still_refuses(
    sandbox: SandboxHandle, namespace: str, live_operator: OperatorProcess
) -> None:
    """Down = its webhook does not answer: the process is frozen (SIGSTOP), so each call
    runs into the configuration's timeout, the slower of the two ways a webhook is down."""
    with live_operator.frozen():
        config = kubectl_json(
            sandbox, "get", "validatingwebhookconfiguration", "gryvia-validating-test"
        )
        assert config["webhooks"][0]["failurePolicy"] == "Ignore"
        cel_invalid = make_job("cel").gpus(0).set(priority=150).manifest()
        out = create(sandbox, namespace, cel_invalid, check=False)
        assert out.returncode != 0
        assert "spec.priority must be between 0 and 100" in out.stderr
        # webhook-only rules are not enforced while it is down (failurePolicy Ignore)
        assert create(sandbox, namespace, _webhook_only_invalid(), check=False).returncode == 0


def test_a_workspace_name_too_long_for_its_pod_is_refused(
    sandbox: SandboxHandle, namespace: str
) -> None:
    # the pod <workspace>-0 is its hostname (a DNS label), so 61 characters is the most
    workspace = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaWorkspace",
        "metadata": {"name": "w" * 62},
        "spec": {"image": "busybox", "gpus": 0, "stopped": True},
    }
    out = create(sandbox, namespace, workspace, check=False)
    assert out.returncode != 0
    assert 'admission webhook "vgryvianames.gryvia.io" denied the request' in out.stderr
    assert "metadata.name is 62 characters; this GryviaWorkspace allows at most 61" in out.stderr
    workspace["metadata"]["name"] = "w" * 61
    create(sandbox, namespace, workspace)
