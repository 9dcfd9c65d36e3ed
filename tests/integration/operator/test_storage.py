"""Issue 41 point 1, GryviaStorage on the session operator (no provisioner here: the one that
binds is in tests/integration/test_sandbox_storage.py, under `make test-all`).

A `csi` backend of a driver nobody runs: the operator creates its StorageClass (owned by the
backend), puts the tenant's per-class ResourceQuota into the tenant's namespace, and its probe
claim is not bound in time, so the backend is NotReady with the claim's last event and the
fix; an `existing` backend whose class is missing names the class and the fix. The API
server's quota admission refuses a claim over the tenant's limit. Deleting the backend
removes what it made (garbage collection)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from tests.conftest import SandboxHandle
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
API = "gryvia.io/v1alpha1"


def _get(sandbox: SandboxHandle, *args: str) -> Any:
    done = sandbox.kubectl_run("get", *args, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def test_a_backend_makes_its_class_and_quotas_and_reports_a_silent_provisioner(
    sandbox: SandboxHandle, fresh_tenant: str
) -> None:
    name = f"gst-{uuid.uuid4().hex[:6]}"
    sandbox.apply(
        {
            "apiVersion": API,
            "kind": "GryviaStorage",
            "metadata": {"name": name},
            "spec": {
                "backend": "csi",
                "provisioner": "example.com/nobody",
                "capacity": "10Gi",
                "probeTimeoutSeconds": 5,
                "quotas": [{"tenant": fresh_tenant, "requests": "1Gi", "claims": 2}],
            },
        }
    )
    try:
        made = wait_for(lambda: _get(sandbox, "storageclass", name), what="the backend's class")
        assert made["provisioner"] == "example.com/nobody"
        assert made["metadata"]["ownerReferences"][0]["name"] == name
        ns = f"tenant-{fresh_tenant}"
        quota = wait_for(
            lambda: _get(sandbox, "resourcequota", f"gryvia-storage-{name}", "-n", ns),
            what="the tenant's storage quota",
        )
        assert quota["spec"]["hard"][f"{name}.storageclass.storage.k8s.io/requests.storage"] == (
            "1Gi"
        )

        def verdict() -> dict[str, Any] | None:
            status = (_get(sandbox, "gryviastorage", name) or {}).get("status") or {}
            return status if (status.get("probe") or {}).get("result") else None

        status = wait_for(verdict, timeout=60, what="the first probe's verdict")
        assert status["phase"] == "NotReady"
        assert status["provisionerAnswering"] is False
        assert status["probe"]["result"] == "Pending"
        assert "was not bound after 5 s" in status["message"]
        assert "example.com/nobody" in status["message"]
        assert status["storageClass"] == name and status["free"] == "10Gi"
        claim = status["probe"]["claim"]
        wait_for(
            lambda: (
                claim
                not in sandbox.kubectl_run(
                    "get", "pvc", "-A", "-l", f"gryvia.io/storage={name}", "-o", "name"
                ).stdout
            ),
            what="the timed-out probe claim's deletion",
        )

        over = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "too-big", "namespace": ns},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": name,
                "resources": {"requests": {"storage": "5Gi"}},
            },
        }
        refused = sandbox.kubectl_run("create", "-f", "-", input=json.dumps(over), check=False)
        assert refused.returncode != 0
        assert f"exceeded quota: gryvia-storage-{name}" in refused.stderr
    finally:
        sandbox.kubectl_run("delete", "gryviastorage", name, "--wait=false", check=False)
    wait_for(
        lambda: _get(sandbox, "storageclass", name) is None,
        timeout=60,
        what="the class's garbage collection",
    )


def test_an_existing_backend_without_its_class_names_the_class_and_the_fix(
    sandbox: SandboxHandle, live_operator: OperatorProcess
) -> None:
    name = f"gse-{uuid.uuid4().hex[:6]}"
    sandbox.apply(
        {
            "apiVersion": API,
            "kind": "GryviaStorage",
            "metadata": {"name": name},
            "spec": {"backend": "existing", "storageClass": f"{name}-none"},
        }
    )
    try:

        def message() -> str | None:
            status = (_get(sandbox, "gryviastorage", name) or {}).get("status") or {}
            return status.get("message") if status.get("phase") else None

        text = wait_for(message, what="the backend's status")
        assert f'StorageClass "{name}-none" does not exist' in text
        assert "spec.storageClass" in text
        assert _get(sandbox, "storageclass", f"{name}-none") is None
    finally:
        sandbox.kubectl_run("delete", "gryviastorage", name, "--wait=false", check=False)
