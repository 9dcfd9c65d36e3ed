"""Admission decisions and the self-registered webhook configuration."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from gryvia_operator.api import GryviaQuota
from gryvia_operator.reconcile.views import node_inventory
from gryvia_operator.webhook.configuration import build_webhook_configuration
from gryvia_operator.webhook.review import (
    PolicyContext,
    ReviewError,
    admit_aijob,
    review_aijob,
    review_usage_record,
)
from tests.builders import gpu_node, make_job, make_node


def _review(obj: Any, operation: str = "CREATE", old: Any = None) -> dict[str, Any]:
    request: dict[str, Any] = {"uid": "u1", "operation": operation, "object": obj}
    if old is not None:
        request["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def test_valid_job_is_allowed() -> None:
    out = review_aijob(_review(make_job().obj()), [("H100", 8)])
    assert out["apiVersion"] == "admission.k8s.io/v1"
    assert out["response"]["uid"] == "u1"
    assert out["response"]["allowed"] is True
    assert "warnings" not in out["response"]


def test_invalid_job_is_denied_with_every_message() -> None:
    obj = make_job().timeout("0s").set(resources={"requests": {"cpu": "0"}}).obj()
    obj["spec"]["distributed"] = {
        "enabled": True,
        "nodes": 2,
        "framework": "tensorflow",
        "elastic": {"minNodes": 1},
    }
    out = review_aijob(_review(obj))
    response = out["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 403
    message = response["status"]["message"]
    assert message.startswith("invalid GryviaAIJob: ")
    assert 'spec.timeout: duration must be positive, got "0s"' in message
    assert "CPU request must be positive, got 0" in message
    assert 'distributed.elastic requires framework pytorch, got "tensorflow"' in message
    assert message.count("; ") >= 2


def test_inventory_warnings_do_not_deny() -> None:
    out = review_aijob(_review(make_job().gpus(8).gpu_type("V100").obj()), [("H100", 8)])
    assert out["response"]["allowed"] is True
    assert out["response"]["warnings"] == [
        'no node currently carries GPU type "V100" (label gryvia.io/gpu)'
    ]
    big = review_aijob(_review(make_job().gpus(16).gpu_type("H100").obj()), [("H100", 8)])
    assert "exceeds the largest current node (8 GPUs)" in big["response"]["warnings"][0]


def test_delete_is_always_allowed() -> None:
    assert admit_aijob({"operation": "DELETE", "object": None}).allowed


def test_update_that_keeps_the_spec_is_allowed_even_when_invalid() -> None:
    bad = make_job().timeout("0s").obj()
    annotated = make_job().timeout("0s").annotate("gryvia.io/cancel", "true").obj()
    request = {"operation": "UPDATE", "object": annotated, "oldObject": bad}
    assert admit_aijob(request).allowed
    changed = make_job().timeout("0s").gpus(2).obj()
    assert not admit_aijob({"operation": "UPDATE", "object": changed, "oldObject": bad}).allowed


def test_malformed_review_raises() -> None:
    with pytest.raises(ReviewError):
        review_aijob({"kind": "AdmissionReview"})
    with pytest.raises(ReviewError):
        review_aijob({"request": {"operation": "CREATE"}})


def test_usage_record_final_is_immutable() -> None:
    old = {"spec": {"final": True, "cost": 1.0}}
    denied = review_usage_record(_review({"spec": {"final": True, "cost": 2.0}}, "UPDATE", old))
    assert denied["response"]["allowed"] is False
    assert denied["response"]["status"]["message"] == (
        "invalid GryviaUsageRecord: GryviaUsageRecord spec is immutable once final is true"
    )
    same = review_usage_record(
        _review({"spec": old["spec"], "metadata": {"labels": {"a": "b"}}}, "UPDATE", old)
    )
    assert same["response"]["allowed"] is True
    open_record = {"spec": {"final": False, "cost": 1.0}}
    assert review_usage_record(_review({"spec": {"final": True}}, "UPDATE", open_record))[
        "response"
    ]["allowed"]
    assert review_usage_record(_review({"spec": {}}, "CREATE"))["response"]["allowed"]


def test_node_inventory_uses_the_larger_count() -> None:
    nodes = [
        gpu_node("a", "H100", 8),
        make_node("b")
        .gpus(4, allocatable=2)
        .gpu_type("L40")
        .label("gryvia.io/gpu-count", "4")
        .view(),
        make_node("cpu").view(),
    ]
    assert node_inventory(nodes) == [("H100", 8), ("L40", 4)]


def test_webhook_configuration() -> None:
    body = build_webhook_configuration("https://127.0.0.1:9443/", b"PEM", name="g")
    assert body["metadata"]["name"] == "g"
    aijob, usage, entries, invoices, names = body["webhooks"]
    assert aijob["name"] == "vgryviaaijob.gryvia.io"
    assert aijob["clientConfig"] == {
        "url": "https://127.0.0.1:9443/validate-gryvia-io-v1alpha1-gryviaaijob",
        "caBundle": base64.b64encode(b"PEM").decode(),
    }
    assert aijob["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    assert aijob["failurePolicy"] == "Ignore"
    assert aijob["sideEffects"] == "None"
    assert aijob["timeoutSeconds"] == 5
    assert aijob["namespaceSelector"]["matchExpressions"][0]["values"] == ["kube-system"]
    assert usage["clientConfig"]["url"].endswith("/validate-gryvia-io-v1alpha1-gryviausagerecord")
    assert usage["rules"][0]["operations"] == ["UPDATE"]
    for hook, plural in ((entries, "gryvialedgerentries"), (invoices, "gryviainvoices")):
        assert hook["rules"][0]["resources"] == [plural]
        assert hook["rules"][0]["operations"] == ["UPDATE", "DELETE"]
        assert hook["rules"][0]["scope"] == "Cluster"
        assert "namespaceSelector" not in hook
    assert names["clientConfig"]["url"].endswith("/validate-gryvia-io-v1alpha1-names")
    assert names["rules"][0]["resources"] == [
        "gryviaautotuners",
        "gryviaworkflows",
        "gryviaworkspaces",
        "gryviainferenceservices",
    ]
    assert names["rules"][0]["operations"] == ["CREATE"]


def _h100_only() -> PolicyContext:
    quota = GryviaQuota.model_validate(
        {
            "metadata": {"name": "ml"},
            "spec": {
                "team": "ml",
                "namespaces": ["ml"],
                "gpuQuota": {"maxGPUs": 8, "maxGPUsPerJob": 4, "allowedGPUTypes": ["H100"]},
            },
        }
    )
    return PolicyContext(quotas=(quota,))


def test_policy_judges_create_and_every_spec_update() -> None:
    policy = _h100_only()
    t4 = make_job().gpu_type("T4").obj()
    denial = 'GPU type "T4" is not allowed for this namespace (allowed: H100)'
    created = admit_aijob({"operation": "CREATE", "object": t4}, None, policy)
    assert not created.allowed and denial in created.message
    # Rejected while the webhook was down, then patched (still T4): still refused.
    patched = {**t4, "spec": {**t4["spec"], "priority": 7}}
    update = admit_aijob({"operation": "UPDATE", "object": patched, "oldObject": t4}, None, policy)
    assert not update.allowed and update.message == f"not allowed by quota policy: {denial}"
    # A valid job patched into a disallowed type or size is refused too.
    h100 = make_job().gpu_type("H100").obj()
    for change in ({"gpuType": "T4"}, {"gpus": 8}):
        into = {**h100, "spec": {**h100["spec"], **change}}
        verdict = admit_aijob(
            {"operation": "UPDATE", "object": into, "oldObject": h100}, None, policy
        )
        assert not verdict.allowed and "not allowed by quota policy" in verdict.message
    fine = {**h100, "spec": {**h100["spec"], "priority": 9}}
    assert admit_aijob(
        {"operation": "UPDATE", "object": fine, "oldObject": h100}, None, policy
    ).allowed


def test_update_that_only_changes_suspend_or_metadata_skips_the_policy() -> None:
    policy = _h100_only()
    t4 = make_job().gpu_type("T4").set(suspend=True).obj()
    released = {**t4, "spec": {**t4["spec"], "suspend": False}}
    request = {"operation": "UPDATE", "object": released, "oldObject": t4}
    assert admit_aijob(request, None, policy).allowed
    labelled = {**t4, "metadata": {**t4["metadata"], "labels": {"a": "b"}}}
    request = {"operation": "UPDATE", "object": labelled, "oldObject": t4}
    assert admit_aijob(request, None, policy).allowed


def test_a_job_that_can_never_run_gets_the_fail_fast_warning() -> None:

    three = make_job().gpus(8).gpu_type("H100").distributed(3).obj()
    verdict = admit_aijob(
        {"operation": "CREATE", "object": three}, [("H100", 8), ("H100", 8)], PolicyContext()
    )
    assert verdict.allowed
    assert "this job can never run (TooLarge): needs 3 nodes with 8 H100 each, only 2 exist" in (
        verdict.warnings
    )
    fits = make_job().gpus(8).gpu_type("H100").obj()
    ok = admit_aijob({"operation": "CREATE", "object": fits}, [("H100", 8)], PolicyContext())
    assert not any("never run" in w for w in ok.warnings)
