"""Exec credential plugins (`kube.execcred`): the cache, 401s, interactiveMode,
provideClusterInfo and the one-line error, with real plugin processes (no cluster)."""

from __future__ import annotations

import base64
import json
import os
import pty
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from gryvia_cli.kube.execcred import ExecCredentials, ExecPlugin, ExecPluginError

V1 = "client.authentication.k8s.io/v1"
T0 = datetime(2030, 1, 1, tzinfo=UTC).timestamp()

PLUGIN = (
    f"V1 = {V1!r}\n"
    """
import json, os, sys
from pathlib import Path
d = Path(sys.argv[1])
calls = d / "calls"
n = len(calls.read_text().splitlines()) + 1 if calls.exists() else 1
with calls.open("a") as f:
    f.write("call\\n")
(d / "exec-info.json").write_text(os.environ["KUBERNETES_EXEC_INFO"])
if (d / "fail").exists():
    sys.stderr.write((d / "fail").read_text())
    sys.exit(1)
status = {"token": f"tok-{n}"}
if (d / "expiry").exists():
    status["expirationTimestamp"] = (d / "expiry").read_text()
print(json.dumps({"apiVersion": os.environ.get("API", V1), "kind": "ExecCredential",
                  "status": status}))
"""
)


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Path:
    """A folder with plugin.py (records each call in `calls`, KUBERNETES_EXEC_INFO in
    exec-info.json; fails with the text of `fail`; tokens tok-1, tok-2 ...)."""
    (tmp_path / "plugin.py").write_text(PLUGIN)
    return tmp_path


def exec_block(d: Path, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": V1,
        "command": sys.executable,
        "args": [str(d / "plugin.py"), str(d)],
        "interactiveMode": "Never",
        **extra,
    }


def calls(d: Path) -> int:
    path = d / "calls"
    return len(path.read_text().splitlines()) if path.exists() else 0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def test_a_token_is_reused_until_shortly_before_its_expiry(plugin_dir: Path) -> None:
    (plugin_dir / "expiry").write_text("2030-01-01T00:01:00Z")  # 60 s after T0
    clock = Clock()
    creds = ExecCredentials(
        ExecPlugin.from_kubeconfig(exec_block(plugin_dir), {}, ""), terminal=False, clock=clock
    )
    assert creds.current().token == "tok-1"
    for clock.now in (T0 + 1, T0 + 30, T0 + 53.9):
        assert creds.current().token == "tok-1"
    assert calls(plugin_dir) == 1
    clock.now = T0 + 54  # 10% of a 60-second lifetime before expiry
    assert creds.current().token == "tok-2"
    assert calls(plugin_dir) == 2


def test_a_token_without_expiry_is_kept_until_invalidated(plugin_dir: Path) -> None:
    clock = Clock()
    creds = ExecCredentials(
        ExecPlugin.from_kubeconfig(exec_block(plugin_dir), {}, ""), terminal=False, clock=clock
    )
    creds.current()
    clock.now += 86400
    assert creds.current().token == "tok-1"
    creds.invalidate()
    assert creds.current().token == "tok-2"


class _Api(BaseHTTPRequestHandler):
    accepted = "tok-2"
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        self.seen.append(token)
        ok = token == self.accepted
        body = json.dumps({"gitVersion": "v1.36.3"} if ok else {"kind": "Status", "code": 401})
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def api_server() -> Iterator[str]:
    """An HTTP server that answers /version for token tok-2 only, 401 otherwise."""
    _Api.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def kubeconfig(path: Path, server: str, user: dict[str, Any], **cluster: Any) -> Path:
    data = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, **cluster}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_401_fetches_the_credential_again_once(plugin_dir: Path, api_server: str) -> None:
    from gryvia_cli.kube.connect import connect

    path = kubeconfig(plugin_dir / "kc", api_server, {"exec": exec_block(plugin_dir)})
    access = connect(path, None)
    assert access.server_version()["gitVersion"] == "v1.36.3"
    assert _Api.seen == ["tok-1", "tok-2"] and calls(plugin_dir) == 2
    access.server_version()
    assert _Api.seen[-1] == "tok-2" and calls(plugin_dir) == 2  # cached again


def test_a_second_401_is_the_api_servers_answer(plugin_dir: Path, api_server: str) -> None:
    from gryvia_cli.errors import ForbiddenError
    from gryvia_cli.kube.connect import connect

    _Api.accepted = "never"
    try:
        access = connect(
            kubeconfig(plugin_dir / "kc", api_server, {"exec": exec_block(plugin_dir)}), None
        )
        with pytest.raises(ForbiddenError, match="401"):
            access.server_version()
    finally:
        _Api.accepted = "tok-2"
    assert calls(plugin_dir) == 2


@pytest.mark.parametrize(
    ("mode", "terminal", "interactive"),
    [
        ("Never", False, False),
        ("Never", True, False),
        ("IfAvailable", False, False),
        ("IfAvailable", True, True),
        ("Always", True, True),
    ],
)
def test_interactive_mode(plugin_dir: Path, mode: str, terminal: bool, interactive: bool) -> None:
    plugin = ExecPlugin.from_kubeconfig(exec_block(plugin_dir, interactiveMode=mode), {}, "")
    assert plugin.interactive(terminal) is interactive
    plugin.run(terminal)
    info = json.loads((plugin_dir / "exec-info.json").read_text())
    assert info == {
        "apiVersion": V1,
        "kind": "ExecCredential",
        "spec": {"interactive": interactive},
    }


def test_always_without_a_terminal_fails_without_running(plugin_dir: Path) -> None:
    plugin = ExecPlugin.from_kubeconfig(exec_block(plugin_dir, interactiveMode="Always"), {}, "")
    with pytest.raises(ExecPluginError, match=r"needs a terminal \(interactiveMode: Always\)"):
        plugin.run(False)
    assert calls(plugin_dir) == 0


def test_interactive_mode_defaults_and_checks() -> None:
    block = {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "p"}
    assert ExecPlugin.from_kubeconfig(block, {}, "").interactive_mode == "IfAvailable"
    with pytest.raises(ExecPluginError, match="interactiveMode must be set"):
        ExecPlugin.from_kubeconfig({**block, "apiVersion": V1}, {}, "")
    with pytest.raises(ExecPluginError, match="interactiveMode Sometimes is not one of"):
        ExecPlugin.from_kubeconfig({**block, "interactiveMode": "Sometimes"}, {}, "")


def test_provide_cluster_info_passes_the_cluster(plugin_dir: Path) -> None:
    ca = plugin_dir / "ca.crt"
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\nxyz\n")
    cluster = {
        "server": "https://api.example:6443",
        "certificate-authority": "ca.crt",
        "tls-server-name": "api",
        "proxy-url": "http://proxy:3128",
        "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": {"a": 1}}],
    }
    block = exec_block(plugin_dir, provideClusterInfo=True, env=[{"name": "API", "value": V1}])
    ExecPlugin.from_kubeconfig(block, cluster, "/elsewhere", str(plugin_dir)).run(False)
    spec = json.loads((plugin_dir / "exec-info.json").read_text())["spec"]
    assert spec["cluster"] == {
        "server": "https://api.example:6443",
        "certificate-authority-data": base64.b64encode(ca.read_bytes()).decode(),
        "tls-server-name": "api",
        "proxy-url": "http://proxy:3128",
        "config": {"a": 1},
    }
    ExecPlugin.from_kubeconfig(exec_block(plugin_dir), cluster, "").run(False)
    assert "cluster" not in json.loads((plugin_dir / "exec-info.json").read_text())["spec"]


def test_a_failing_plugin_is_one_line_with_its_stderr(plugin_dir: Path) -> None:
    (plugin_dir / "fail").write_text("error: token revoked\n\n  ask your admin\n")
    plugin = ExecPlugin.from_kubeconfig(exec_block(plugin_dir), {}, "")
    with pytest.raises(ExecPluginError) as err:
        plugin.run(False)
    name = Path(sys.executable).name
    assert err.value.message == (
        f"exec plugin {name} failed with exit code 1: error: token revoked; ask your admin"
    )
    assert err.value.hint is None and not err.value.causes


def test_bad_output_is_named(plugin_dir: Path) -> None:
    block = exec_block(plugin_dir, env=[{"name": "API", "value": "other/v1"}])
    with pytest.raises(ExecPluginError, match="apiVersion other/v1 is not " + V1):
        ExecPlugin.from_kubeconfig(block, {}, "").run(False)


def test_a_relative_command_starts_at_the_kubeconfigs_folder() -> None:
    block = {"apiVersion": V1, "command": "bin/plugin", "interactiveMode": "Never"}
    assert ExecPlugin.from_kubeconfig(block, {}, "/etc/kube").args[0] == "/etc/kube/bin/plugin"
    block["command"] = "plugin"  # looked up on PATH, as kubectl does
    assert ExecPlugin.from_kubeconfig(block, {}, "/etc/kube").args[0] == "plugin"


def test_under_a_terminal_the_cli_prints_one_line(plugin_dir: Path) -> None:
    """The reported bug: under a terminal the official client lost the plugin's stderr
    (`'NoneType' object has no attribute 'strip'`) and added an unrelated hint."""
    (plugin_dir / "fail").write_text("token expired: run login again\n")
    path = kubeconfig(plugin_dir / "kc", "https://127.0.0.1:1", {"exec": exec_block(plugin_dir)})
    primary, secondary = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "gryvia_cli", "--kubeconfig", str(path), "list", "jobs"],
            stdin=secondary,
            capture_output=True,
            text=True,
            env={**os.environ, "NO_COLOR": "1", "HOME": str(plugin_dir)},
            check=False,
            timeout=60,
        )
    finally:
        os.close(primary)
        os.close(secondary)
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    name = Path(sys.executable).name
    assert len(lines) == 1, done.stderr
    assert f"exec plugin {name} failed with exit code 1: token expired: run login again" in lines[0]


def test_certificate_credentials_point_the_configuration_at_their_files(tmp_path: Path) -> None:
    from types import SimpleNamespace

    plugin = tmp_path / "cert.py"
    status = {"clientCertificateData": "CERT PEM\n", "clientKeyData": "KEY PEM\n"}
    body = {"apiVersion": V1, "kind": "ExecCredential", "status": status}
    plugin.write_text(f"import json\nprint(json.dumps({body!r}))\n")
    block = {"apiVersion": V1, "command": sys.executable, "args": [str(plugin)]}
    creds = ExecCredentials(
        ExecPlugin.from_kubeconfig({**block, "interactiveMode": "Never"}, {}, ""), terminal=False
    )
    cfg = SimpleNamespace(api_key={}, cert_file=None, key_file=None)
    creds.apply(cfg)
    assert Path(cfg.cert_file).read_text() == "CERT PEM\n"
    assert Path(cfg.key_file).read_text() == "KEY PEM\n"
    assert oct(Path(cfg.key_file).stat().st_mode & 0o777) == "0o600"
    assert "BearerToken" not in cfg.api_key


def test_a_401_does_not_drop_a_credential_another_thread_already_replaced(
    plugin_dir: Path,
) -> None:
    creds = ExecCredentials(
        ExecPlugin.from_kubeconfig(exec_block(plugin_dir), {}, ""), terminal=False
    )
    stale = creds.current()
    creds.invalidate(stale)
    fresh = creds.current()
    creds.invalidate(stale)  # a second thread's 401 for the same old token
    assert creds.current() is fresh and calls(plugin_dir) == 2
