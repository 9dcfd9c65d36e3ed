"""The pure decision of a GryviaStorage: class, probe, quotas, status."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from gryvia_operator.api.quantity import format_bytes
from gryvia_operator.api.storage import GryviaStorage
from gryvia_operator.reconcile.storage import (
    SELECTED_NODE,
    ClaimView,
    StorageObserved,
    reconcile_storage,
)

NOW = datetime(2026, 12, 6, 7, 0, tzinfo=UTC)
CLASS = {
    "metadata": {"name": "fast"},
    "provisioner": "rancher.io/local-path",
    "volumeBindingMode": "WaitForFirstConsumer",
}


def storage(status: dict[str, Any] | None = None, **spec: Any) -> GryviaStorage:
    body: dict[str, Any] = {
        "metadata": {"name": "fast", "uid": "u1", "generation": 1},
        "spec": {"backend": "local-path", **spec},
    }
    if status is not None:
        body["status"] = status
    return GryviaStorage.model_validate(body)


def seen(**over: Any) -> StorageObserved:
    base: dict[str, Any] = {
        "storage_class": CLASS,
        "claims": (),
        "probes": (),
        "probe_event": None,
        "node": "node-a",
        "tenant_namespaces": {},
        "quotas": {},
        "probe_namespace": "gryvia-system",
    }
    base.update(over)
    return StorageObserved(**base)


def claim(
    name: str, phase: str = "Pending", ns: str = "gryvia-system", size: int = 2**20
) -> ClaimView:
    return ClaimView(ns, name, "fast", phase, size, NOW)


def test_a_described_backend_creates_its_class_and_waits_for_it() -> None:
    plan = reconcile_storage(storage(mountOptions=["nfsvers=4.1"]), seen(storage_class=None), NOW)
    made = [c for c in plan.create if c["kind"] == "StorageClass"]
    assert made[0]["provisioner"] == "rancher.io/local-path"
    assert made[0]["mountOptions"] == ["nfsvers=4.1"]
    assert made[0]["metadata"]["ownerReferences"][0]["uid"] == "u1"
    assert plan.status["phase"] == "NotReady"
    assert not any(c["kind"] == "PersistentVolumeClaim" for c in plan.create)


def test_an_existing_backend_whose_class_is_missing_names_the_fix() -> None:
    plan = reconcile_storage(
        storage(backend="existing", storageClass="nope"), seen(storage_class=None), NOW
    )
    assert plan.create == []
    assert plan.status["phase"] == "NotReady"
    assert 'StorageClass "nope" does not exist' in plan.status["message"]
    assert "spec.storageClass" in plan.status["message"]


def test_a_class_of_another_provisioner_is_a_conflict() -> None:
    other = {**CLASS, "provisioner": "ebs.csi.aws.com"}
    plan = reconcile_storage(storage(), seen(storage_class=other), NOW)
    assert "ebs.csi.aws.com" in plan.status["message"]
    assert "spec.backend existing" in plan.status["message"]


def test_the_first_probe_pins_its_claim_to_a_node_and_binds() -> None:
    plan = reconcile_storage(storage(), seen(), NOW)
    probe = next(c for c in plan.create if c["kind"] == "PersistentVolumeClaim")
    assert probe["metadata"]["namespace"] == "gryvia-system"
    assert probe["metadata"]["annotations"][SELECTED_NODE] == "node-a"
    assert probe["spec"]["storageClassName"] == "fast"
    status = plan.status
    assert status["probe"]["claim"] == probe["metadata"]["name"]
    assert status["phase"] == "NotReady"
    later = NOW + timedelta(seconds=3)
    bound = reconcile_storage(
        storage(status), seen(probes=(claim(probe["metadata"]["name"], "Bound"),)), later
    )
    assert bound.status["probe"]["result"] == "Bound"
    assert bound.status["probe"]["bindSeconds"] == 3.0
    assert bound.status["phase"] == "Ready"
    assert bound.status["provisionerAnswering"] is True
    assert ("PersistentVolumeClaim", "gryvia-system", probe["metadata"]["name"]) in bound.delete


def test_a_probe_not_bound_in_time_says_why_and_the_next_one_comes_after_the_period() -> None:
    first = reconcile_storage(storage(probeTimeoutSeconds=5, probeSeconds=60), seen(), NOW)
    name = first.status["probe"]["claim"]
    event = 'waiting for a volume to be created by external provisioner "rancher.io/local-path"'
    late = NOW + timedelta(seconds=6)
    plan = reconcile_storage(
        storage(first.status, probeTimeoutSeconds=5, probeSeconds=60),
        seen(probes=(claim(name),), probe_event=event),
        late,
    )
    assert plan.status["probe"]["result"] == "Pending"
    assert event in plan.status["message"]
    assert plan.status["phase"] == "NotReady"
    assert plan.status["provisionerAnswering"] is False
    assert plan.requeue_after == pytest.approx(60.0)
    again = reconcile_storage(
        storage(plan.status, probeTimeoutSeconds=5, probeSeconds=60), seen(), late + timedelta(60)
    )
    assert again.status["probe"]["claim"] != name
    assert again.status["provisionerAnswering"] is False  # kept while the new probe runs


def test_a_probe_request_starts_a_probe_at_once_and_is_recorded() -> None:
    done = {
        "probe": {
            "claim": "old",
            "startedAt": NOW.isoformat(),
            "finishedAt": NOW.isoformat(),
            "result": "Bound",
            "bindSeconds": 1.0,
        },
        "provisionerAnswering": True,
    }
    obj = storage(done)
    obj.metadata.annotations = {"gryvia.io/probe": "2026-12-06T07:00:05Z"}
    plan = reconcile_storage(obj, seen(), NOW + timedelta(seconds=5))
    assert plan.status["lastProbeRequest"] == "2026-12-06T07:00:05Z"
    assert plan.status["probe"].get("finishedAt") is None


def test_quotas_go_to_every_namespace_of_the_tenant_and_leave_others() -> None:
    obj = storage(quotas=[{"tenant": "vision", "requests": "2Ti", "claims": 3}])
    have = {
        ("tenant-old", "gryvia-storage-fast"): {"x": "1"},
        ("tenant-vision", "gryvia-storage-fast"): {
            "fast.storageclass.storage.k8s.io/requests.storage": "1Ti"
        },
    }
    plan = reconcile_storage(
        obj, seen(tenant_namespaces={"vision": ["tenant-vision", "vision-dev"]}, quotas=have), NOW
    )
    made = [c for c in plan.create if c["kind"] == "ResourceQuota"]
    assert [c["metadata"]["namespace"] for c in made] == ["vision-dev"]
    assert made[0]["spec"]["hard"] == {
        "fast.storageclass.storage.k8s.io/requests.storage": "2Ti",
        "fast.storageclass.storage.k8s.io/persistentvolumeclaims": "3",
    }
    assert plan.patch[0][:3] == ("ResourceQuota", "tenant-vision", "gryvia-storage-fast")
    assert ("ResourceQuota", "tenant-old", "gryvia-storage-fast") in plan.delete
    assert plan.status["quotaNamespaces"] == 2


def test_used_and_free_follow_the_claims() -> None:
    claims = (claim("a", "Bound", "t", 2**40), claim("b", "Bound", "t", 2**39))
    plan = reconcile_storage(storage(capacity="2Ti"), seen(claims=claims), NOW)
    assert plan.status["used"] == "1536Gi"
    assert plan.status["free"] == "512Gi"
    assert plan.status["claims"] == 2


def test_bad_specs_name_the_field() -> None:
    with pytest.raises(ValidationError, match=r"spec\.provisioner is required"):
        storage(backend="csi")
    with pytest.raises(ValidationError, match="server:/export"):
        storage(backend="nfs", endpoint="nfs-server")


def test_format_bytes() -> None:
    assert format_bytes(0) == "0"
    assert format_bytes(3 * 2**30) == "3Gi"
    assert format_bytes(1000) == "1000"


def test_a_status_patch_clears_keys_left_out_of_nested_objects() -> None:
    from gryvia_operator.controller.passes import merge_patch

    before = {"probe": {"claim": "a", "finishedAt": "t", "result": "Bound"}, "used": "1Gi"}
    after = {"probe": {"claim": "b"}}
    assert merge_patch(before, after) == {
        "used": None,
        "probe": {"claim": "b", "finishedAt": None, "result": None},
    }
