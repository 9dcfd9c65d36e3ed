"""Kueue in the sandbox: its configuration, the webhooks rewritten for loopback, its CRDs, and
the certificate the API server must trust."""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from gryvia_cli.sandbox import kueue
from gryvia_cli.sandbox.sandboxes import SandboxError


def _hook(name: str, path: str) -> dict[str, Any]:
    return {
        "name": name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": {
            "service": {"name": "webhook-service", "namespace": "system", "path": path}
        },
        "failurePolicy": "Fail",
        "rules": [{"apiGroups": ["x"], "apiVersions": ["v1"], "operations": ["CREATE"]}],
        "sideEffects": "None",
    }


MANIFEST = [
    {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "mutating-webhook-configuration"},
        "webhooks": [
            _hook("mjob.kb.io", "/mutate-batch-v1-job"),
            _hook("mpod.kb.io", "/mutate--v1-pod"),
            _hook("mworkload.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-workload"),
            _hook("mrayjob.kb.io", "/mutate-ray-io-v1-rayjob"),
        ],
    },
    {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "validating-webhook-configuration"},
        "webhooks": [
            _hook("vjob.kb.io", "/validate-batch-v1-job"),
            _hook("vclusterqueue.kb.io", "/validate-kueue-x-k8s-io-v1beta2-clusterqueue"),
            _hook("vdeployment.kb.io", "/validate-apps-v1-deployment"),
        ],
    },
]


def test_configuration_admits_without_blocking_unless_asked_on_loopback() -> None:
    config = kueue.build_configuration(
        webhook_port=9443, health_port=8081, metrics_port=8443, cert_dir="/c"
    )
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    assert config["integrations"] == {"frameworks": ["batch/job"]}
    ready = config["waitForPodsReady"]
    assert ready["blockAdmission"] is False and ready["timeout"] == "10m"
    asked = kueue.build_configuration(
        webhook_port=9443, health_port=8081, metrics_port=8443, cert_dir="/c", block_admission=True
    )
    assert asked["waitForPodsReady"]["blockAdmission"] is True
    assert ready["requeuingStrategy"]["backoffBaseSeconds"] == 60
    assert ready["requeuingStrategy"]["backoffMaxSeconds"] == 3600
    assert config["webhook"] == {"host": "127.0.0.1", "port": 9443, "certDir": "/c"}
    assert config["health"]["healthProbeBindAddress"] == "127.0.0.1:8081"
    assert config["metrics"]["bindAddress"] == "127.0.0.1:8443"
    assert config["internalCertManagement"] == {"enable": False}
    assert config["leaderElection"] == {"leaderElect": False}
    assert config["manageJobsWithoutQueueName"] is False
    # Kueue's release concurrency: Workloads are created and admitted five at a time
    concurrency = config["controller"]["groupKindConcurrency"]
    assert concurrency["Job.batch"] == concurrency["Workload.kueue.x-k8s.io"] == 5


def test_webhooks_keep_kueue_kinds_and_batch_jobs_pointed_at_loopback() -> None:
    configs = kueue.build_webhook_configurations(MANIFEST, "https://127.0.0.1:9443/", b"PEM")
    by_kind = {c["kind"]: c for c in configs}
    mutating = by_kind["MutatingWebhookConfiguration"]
    validating = by_kind["ValidatingWebhookConfiguration"]
    assert mutating["metadata"]["name"] == kueue.MUTATING_NAME
    assert validating["metadata"]["name"] == kueue.VALIDATING_NAME
    assert [h["name"] for h in mutating["webhooks"]] == ["mjob.kb.io", "mworkload.kb.io"]
    assert [h["name"] for h in validating["webhooks"]] == ["vjob.kb.io", "vclusterqueue.kb.io"]
    job = mutating["webhooks"][0]
    assert job["clientConfig"] == {
        "url": "https://127.0.0.1:9443/mutate-batch-v1-job",
        "caBundle": base64.b64encode(b"PEM").decode(),
    }
    assert job["failurePolicy"] == "Fail"  # Kueue's own policy is kept
    # The input manifest is not changed.
    assert "service" in MANIFEST[0]["webhooks"][0]["clientConfig"]


def test_a_manifest_without_webhook_configurations_is_an_error() -> None:
    with pytest.raises(SandboxError, match="rebuild kueue"):
        kueue.build_webhook_configurations([{"kind": "Service"}], "https://127.0.0.1:1", b"")


def test_crds_lose_their_conversion_webhook() -> None:
    crd = {
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "workloads.kueue.x-k8s.io"},
        "spec": {"conversion": {"strategy": "Webhook"}, "group": "kueue.x-k8s.io"},
    }
    out = kueue.build_crds([crd, {"kind": "Namespace"}, {}])
    assert out == [
        {
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "workloads.kueue.x-k8s.io"},
            "spec": {"group": "kueue.x-k8s.io"},
        }
    ]
    assert "conversion" in crd["spec"]


def test_serving_certificate_is_for_loopback_and_signed_by_the_ca() -> None:
    now = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    ca_pem, cert_pem, key_pem = kueue.make_certificates(now)
    ca = x509.load_pem_x509_certificate(ca_pem)
    cert = x509.load_pem_x509_certificate(cert_pem)
    cert.verify_directly_issued_by(ca)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert cert.not_valid_after_utc == now + dt.timedelta(days=365)
    assert b"PRIVATE KEY" in key_pem


def test_missing_build_is_named_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRYVIA_K8S_BIN_DIR", str(tmp_path))
    assert "tools/k8s/build-kueue.sh" in kueue.missing()
