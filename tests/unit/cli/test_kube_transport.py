"""Which kubeconfigs the light client (`kube.transport`) serves, and what it sends; the rest
goes to the official client. Requests against a real API server: every CLI integration test
(the sandbox's kubeconfig holds a client certificate)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from gryvia_cli.kube.transport import StaticApiClient, static_client


def config(cluster: dict[str, Any], user: dict[str, Any], source: str = "") -> dict[str, Any]:
    return {
        "clusters": [{"name": "c", "cluster": cluster, "_source": source}],
        "users": [{"name": "u", "user": user, "_source": source}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
    }


SERVER = {"server": "https://10.1.2.3:6443/", "insecure-skip-tls-verify": True}


def test_token_and_certificates_take_the_light_path(tmp_path: Path) -> None:
    client = static_client(config(SERVER, {"token": "t0k"}), "x")
    assert isinstance(client, StaticApiClient)
    assert client.configuration.host == "https://10.1.2.3:6443"
    method, url, headers, body = client.param_serialize(
        method="get",
        resource_path="/api/v1/namespaces/a%20b/pods",
        query_params=[("watch", True), ("limit", 5)],
        header_params={"Accept": "application/json"},
        body={"a": 1},
        auth_settings=["BearerToken"],
    )
    assert (method, url) == (
        "GET",
        "https://10.1.2.3:6443/api/v1/namespaces/a%20b/pods?watch=true&limit=5",
    )
    assert headers["Authorization"] == "Bearer t0k" and headers["User-Agent"] == "gryvia-cli"
    assert body == b'{"a": 1}'
    (tmp_path / "ca.crt").write_text("ca")
    pem = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode()
    kube = str(tmp_path / "kubeconfig")
    certs = static_client(
        config(
            {"server": "https://h:1", "certificate-authority": "ca.crt"},
            {"client-certificate-data": pem, "client-key-data": pem},
            kube,
        ),
        "x",
    )
    assert certs is not None and certs.token is None
    pool = certs.pool.connection_pool_kw
    assert pool["ca_certs"] == str(tmp_path / "ca.crt")
    assert Path(pool["cert_file"]).read_bytes() == b"-----BEGIN CERTIFICATE-----\n"


@pytest.mark.parametrize(
    ("cluster", "user"),
    [
        (SERVER, {"exec": {"command": "aws"}}),
        (SERVER, {"auth-provider": {"name": "oidc"}}),
        (SERVER, {"username": "a", "password": "b"}),
        ({**SERVER, "tls-server-name": "api"}, {"token": "t"}),
        ({**SERVER, "proxy-url": "http://proxy:3128"}, {"token": "t"}),
    ],
)
def test_everything_else_goes_to_the_official_client(
    cluster: dict[str, Any], user: dict[str, Any]
) -> None:
    assert static_client(config(cluster, user), "x") is None


def test_a_proxy_in_the_environment_goes_to_the_official_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    assert static_client(config(SERVER, {"token": "t"}), "x") is None


def test_a_missing_certificate_file_is_left_to_the_official_client(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="does not exist"):
        static_client(
            config(
                {"server": "https://h:1", "certificate-authority": "nope.crt"},
                {},
                str(tmp_path / "k"),
            ),
            "x",
        )
