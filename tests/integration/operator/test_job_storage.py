"""Issue 41 points 1 and 5 against the sandbox: a job names a GryviaStorage whose per-tenant
limit is smaller than it asks for. The storage controller's ResourceQuota refuses the job's
data claim, so the job waits as Pending with status.pending kind Storage naming the quota
(its workload is not created); a job naming the class itself is admitted with a warning and,
its claim never binding (nobody serves the provisioner), says it waits for that claim; a job
naming neither a backend nor a class is denied by the webhook."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.builders import make_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, get_job, kubectl_json
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
API = "gryvia.io/v1alpha1"


def _job(name: str, storage: str, request: str = "1Mi") -> dict[str, Any]:
    """A CPU-only job (`sleep 1`) with a data claim of `request` on `storage`."""
    builder = make_job(name).image("none").gpus(0).script("sleep 1")
    return builder.set(storage=storage, storageRequest=request).manifest()


def _status(sandbox: SandboxHandle, ns: str, name: str) -> dict[str, Any]:
    return dict(get_job(sandbox, ns, name).get("status") or {})


def test_a_claim_over_the_tenants_storage_limit_waits_with_the_reason(
    sandbox: SandboxHandle, fresh_tenant: str
) -> None:
    ns, tag = f"tenant-{fresh_tenant}", uuid.uuid4().hex[:6]
    klass, backend = f"none-{tag}", f"slow-{tag}"
    sandbox.apply(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": klass},
            "provisioner": "example.com/none",
        },
        {
            "apiVersion": API,
            "kind": "GryviaStorage",
            "metadata": {"name": backend},
            "spec": {
                "backend": "existing",
                "storageClass": klass,
                "quotas": [{"tenant": fresh_tenant, "requests": "1Gi"}],
            },
        },
    )
    try:
        quota = f"gryvia-storage-{backend}"
        wait_for(
            lambda: (
                sandbox.kubectl_run("get", "resourcequota", quota, "-n", ns, check=False).returncode
                == 0
            ),
            what=f"ResourceQuota {quota} in {ns}",
        )
        big = _job("big", backend, "5Gi")
        create(sandbox, ns, big)

        def refused() -> dict[str, Any] | None:
            status = _status(sandbox, ns, "big")
            return status if (status.get("pending") or {}).get("kind") == "Storage" else None

        status = wait_for(refused, timeout=30, what="big Pending with kind Storage")
        assert status["phase"] == "Pending"
        message = status["pending"]["message"]
        assert f"exceeded quota: {quota}" in message, message
        assert f"GryviaStorage {backend} spec.quotas" in message
        assert status["message"] == message
        jobs = kubectl_json(sandbox, "get", "jobs.batch", "-n", ns)["items"]
        assert [j["metadata"]["name"] for j in jobs] == []  # no pods wait for a missing claim

        # the class itself: admitted with a warning; the claim never binds, and the job says so
        plain = create(sandbox, ns, _job("plain", klass))
        assert f'spec.storage "{klass}" names no GryviaStorage' in plain.stderr

        def unbound() -> str | None:
            pending = _status(sandbox, ns, "plain").get("pending") or {}
            text = str(pending.get("message") or "")
            return text if pending.get("kind") == "Storage" else None

        text = wait_for(unbound, timeout=30, what="plain waiting for its claim")
        assert text.startswith(f"waits for its data claim {ns}/plain-data (class {klass})"), text
        assert "gryvia health storage" in text

        nope = create(sandbox, ns, _job("nope", f"nope-{tag}"), check=False)
        assert nope.returncode != 0
        assert f'spec.storage "nope-{tag}" names no GryviaStorage and no StorageClass' in (
            nope.stderr
        )
        assert backend in nope.stderr  # the backends that exist are listed
    finally:
        sandbox.kubectl_run("delete", "gryviastorage", backend, "--wait=false", check=False)
        sandbox.kubectl_run("delete", "storageclass", klass, "--wait=false", check=False)
