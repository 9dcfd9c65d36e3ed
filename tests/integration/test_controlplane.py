"""The bare control-plane fixture is a real kube-apiserver at the pinned release."""

from __future__ import annotations

import uuid

import pytest
from kubernetes import client

from gryvia_cli.sandbox import binaries

pytestmark = pytest.mark.integration


def test_creates_namespace_and_configmap(api_client: client.ApiClient) -> None:
    core = client.CoreV1Api(api_client)
    name = f"t-{uuid.uuid4().hex[:8]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    core.create_namespaced_config_map(
        name,
        client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm"), data={"gpus": "8"}),
    )
    read = core.read_namespaced_config_map("cm", name)
    assert read.data == {"gpus": "8"}
    assert read.metadata.uid
    assert name in [ns.metadata.name for ns in core.list_namespace().items]


def test_version_reports_pinned_release(api_client: client.ApiClient) -> None:
    info = client.VersionApi(api_client).get_code()
    assert info.git_version == binaries.kubernetes_version()
    assert info.major == "1"
    assert info.minor == binaries.kubernetes_version().split(".")[1]


def test_admission_webhooks_enabled(api_client: client.ApiClient) -> None:
    reg = client.AdmissionregistrationV1Api(api_client)
    assert reg.list_validating_webhook_configuration().items == []
