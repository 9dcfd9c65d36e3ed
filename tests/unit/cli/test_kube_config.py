"""Kubeconfig sources, merging, contexts, namespaces and credential loading (no cluster)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gryvia_cli.errors import KubeconfigError
from gryvia_cli.kube.config import (
    ContextInfo,
    describe_context,
    effective_namespace,
    kubeconfig_source,
    load_client_configuration,
)


def kubeconfig(
    path: Path,
    contexts: dict[str, dict[str, Any]],
    current: str | None,
    users: dict[str, Any] | None = None,
) -> Path:
    """Write a kubeconfig with one cluster per context (server https://<ctx>:6443)."""
    data: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": c,
                "cluster": {"server": f"https://{c}:6443", "insecure-skip-tls-verify": True},
            }
            for c in contexts
        ],
        "users": [
            {"name": u, "user": spec}
            for u, spec in (users or {"admin": {"token": "t0k3n"}}).items()
        ],
        "contexts": [
            {"name": c, "context": {"cluster": c, "user": body.get("user", "admin"), **body}}
            for c, body in contexts.items()
        ],
    }
    if current:
        data["current-context"] = current
    path.write_text(yaml.safe_dump(data))
    return path


def test_sources_in_order(tmp_path: Path, isolated_env: Path) -> None:
    one = kubeconfig(tmp_path / "one", {"a": {}}, "a")
    two = kubeconfig(tmp_path / "two", {"b": {}}, "b")
    env = {"KUBECONFIG": f"{tmp_path / 'missing'}:{one}:{two}", "HOME": str(isolated_env)}
    assert kubeconfig_source(None, env) == f"{one}:{two}"
    assert kubeconfig_source(two, env) == str(two)
    with pytest.raises(KubeconfigError, match="does not exist"):
        kubeconfig_source(tmp_path / "nope", env)
    assert kubeconfig_source(None, {"HOME": str(isolated_env)}) is None
    default = isolated_env / ".kube" / "config"
    default.parent.mkdir()
    kubeconfig(default, {"home": {}}, "home")
    assert kubeconfig_source(None, {"HOME": str(isolated_env)}) == str(default)


def test_merged_files_give_every_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = kubeconfig(tmp_path / "one", {"a": {"namespace": "team-a"}}, "a")
    two = kubeconfig(tmp_path / "two", {"b": {}}, None)
    monkeypatch.setenv("KUBECONFIG", f"{one}:{two}")
    info = describe_context(None, None)
    assert (info.name, info.server, info.user, info.namespace) == (
        "a",
        "https://a:6443",
        "admin",
        "team-a",
    )
    other = describe_context(None, "b")
    assert other.server == "https://b:6443" and other.namespace is None
    assert other.files == (str(one), str(two))


def test_unknown_context_and_no_current_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path / "k", {"a": {}}, None)))
    with pytest.raises(KubeconfigError) as err:
        describe_context(None, None)
    assert "no current context" in err.value.message and "a" in (err.value.hint or "")
    with pytest.raises(KubeconfigError, match='context "zzz" is not defined'):
        describe_context(None, "zzz")


def test_missing_kubeconfig_gives_the_hint() -> None:
    with pytest.raises(KubeconfigError) as err:
        describe_context(None, None)
    assert err.value.hint == "point KUBECONFIG at your cluster, or pass --context <name>"


def test_effective_namespace_order() -> None:
    ctx = ContextInfo("c", "c", "https://c", "u", "from-kubeconfig", ())
    assert effective_namespace("flag", {"c": "saved"}, ctx) == ("flag", "--namespace")
    assert effective_namespace(None, {"c": "saved"}, ctx) == ("saved", "gryvia config")
    assert effective_namespace(None, {"other": "x"}, ctx) == ("from-kubeconfig", "kubeconfig")
    bare = ContextInfo("c", "c", "https://c", "u", None, ())
    assert effective_namespace(None, {}, bare) == ("default", "default")


def test_token_credentials_load(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "k", {"a": {}}, "a")
    cfg = load_client_configuration(path, "a")
    assert cfg.host == "https://a:6443"
    assert cfg.api_key["BearerToken"] == "Bearer t0k3n"


def test_exec_plugin_credentials_load(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.py"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": "from-exec"},
    }
    plugin.write_text(f"import json\nprint(json.dumps({credential!r}))\n")
    users = {
        "exec-user": {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": sys.executable,
                "args": [str(plugin)],
                "interactiveMode": "Never",
            }
        }
    }
    path = kubeconfig(tmp_path / "k", {"a": {"user": "exec-user"}}, "a", users)
    cfg = load_client_configuration(path, "a")
    assert cfg.api_key["BearerToken"] == "Bearer from-exec"


def test_broken_exec_plugin_is_a_kubeconfig_error(tmp_path: Path) -> None:
    users = {
        "bad": {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": str(tmp_path / "no-such-plugin"),
                "interactiveMode": "Never",
                "installHint": "install it with make plugin",
            }
        }
    }
    path = kubeconfig(tmp_path / "k", {"a": {"user": "bad"}}, "a", users)
    with pytest.raises(KubeconfigError, match="not found: install it with make plugin"):
        load_client_configuration(path, "a")


def test_unreadable_certificate_is_a_kubeconfig_error(tmp_path: Path) -> None:
    users = {
        "cert": {
            "client-certificate": str(tmp_path / "none.crt"),
            "client-key": str(tmp_path / "none.key"),
        }
    }
    path = kubeconfig(tmp_path / "k", {"a": {"user": "cert"}}, "a", users)
    with pytest.raises(KubeconfigError):
        load_client_configuration(path, "a")
    assert json  # imported for the plugin body


def test_in_cluster_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gryvia_cli.kube import config as kube_config

    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("t")
    (sa / "namespace").write_text("team-x\n")
    monkeypatch.setattr(kube_config, "SA_DIR", sa)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    info = describe_context(None, None)
    assert info.in_cluster and info.server == "https://10.0.0.1:443" and info.namespace == "team-x"
    assert effective_namespace(None, {}, info) == ("team-x", "in-cluster service account")


def test_proxy_follows_kubectl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("NO_PROXY", "")
    path = kubeconfig(tmp_path / "k", {"a": {}}, "a")
    assert load_client_configuration(path, "a").proxy == "http://proxy:3128"
    data = yaml.safe_load(path.read_text())
    data["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:6443"
    path.write_text(yaml.safe_dump(data))
    assert load_client_configuration(path, "a").proxy is None  # loopback: never proxied
    data["clusters"][0]["cluster"]["proxy-url"] = "http://jump:8080"
    path.write_text(yaml.safe_dump(data))
    monkeypatch.setenv("NO_PROXY", "*")  # does not apply to a proxy-url
    cfg = load_client_configuration(path, "a")
    assert (cfg.proxy, cfg.no_proxy) == ("http://jump:8080", None)
