"""Which proxy the CLI uses for the API server (`kube.proxy`), as kubectl decides."""

from __future__ import annotations

import base64

import pytest

from gryvia_cli.kube.proxy import proxy_credentials, proxy_for

ENV = {"HTTPS_PROXY": "proxy.corp:3128", "HTTP_PROXY": "http://plain:80"}


@pytest.mark.parametrize(
    ("server", "no_proxy", "expected"),
    [
        ("https://api.example.com:6443", "", "http://proxy.corp:3128"),
        ("http://api.example.com:8080", "", "http://plain:80"),
        ("https://127.0.0.1:6443", "", None),  # loopback is never proxied
        ("https://localhost:6443", "", None),
        ("https://[::1]:6443", "", None),
        ("https://api.example.com:6443", "*", None),
        ("https://api.example.com:6443", "example.com", None),
        ("https://example.com:6443", "example.com", None),
        ("https://example.com:6443", ".example.com", "http://proxy.corp:3128"),
        ("https://api.example.com:6443", "*.example.com", None),
        ("https://notexample.com:6443", "example.com", "http://proxy.corp:3128"),
        ("https://api.example.com:6443", "api.example.com:443", "http://proxy.corp:3128"),
        ("https://api.example.com:6443", "api.example.com:6443", None),
        ("https://10.1.2.3:6443", "10.0.0.0/8", None),
        ("https://10.1.2.3:6443", "10.1.2.3", None),
        ("https://11.1.2.3:6443", "10.0.0.0/8, other", "http://proxy.corp:3128"),
    ],
)
def test_environment_proxy_like_go(server: str, no_proxy: str, expected: str | None) -> None:
    assert proxy_for(server, None, {**ENV, "NO_PROXY": no_proxy}) == expected


def test_proxy_url_wins_over_the_environment() -> None:
    env = {**ENV, "NO_PROXY": "*"}
    assert proxy_for("https://127.0.0.1:6443", "socks5://jump:1080", env) == "socks5://jump:1080"


def test_lower_case_names_and_no_proxy_set() -> None:
    assert proxy_for("https://a.b:1", None, {"https_proxy": "http://p:1"}) == "http://p:1"
    assert proxy_for("https://a.b:1", None, {}) is None
    assert proxy_for("https://a.b:1", None, {"ALL_PROXY": "http://p:1"}) is None


def test_credentials_in_the_proxy_url_become_basic_proxy_authorization() -> None:
    # issue 38, failure 10: `user:password@` in a proxy URL was dropped and the proxy said 407
    url, headers = proxy_credentials("http://ops%40corp:p%3Ass@jump:3128")
    assert url == "http://jump:3128"  # no password left in what errors may print
    token = base64.b64encode(b"ops@corp:p:ss").decode()
    assert headers == {"proxy-authorization": f"Basic {token}"}
    assert proxy_credentials("http://jump:3128") == ("http://jump:3128", {})
    assert proxy_credentials(None) == (None, {})
