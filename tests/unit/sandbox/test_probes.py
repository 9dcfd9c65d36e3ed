"""Readiness probes of the sandbox's pod runner: commands built from the probe, and real
probes run against a local HTTP server, a closed port and exec commands."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator

import pytest

from gryvia_cli.sandbox.podstatus import ContainerRecord, build_status
from gryvia_cli.sandbox.probes import probe_argv, probe_ready


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/ready" else 503)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield int(httpd.server_address[1])
    httpd.shutdown()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_no_probe_means_ready() -> None:
    assert probe_argv({"name": "c"}, "10.0.0.2") is None
    assert probe_ready({"name": "c"}, "10.0.0.2")


def test_http_probe_url_uses_pod_ip_and_named_port() -> None:
    ctr = {
        "name": "c",
        "ports": [{"name": "http", "containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
    }
    argv = probe_argv(ctr, "10.0.0.2")
    assert argv is not None and "http://10.0.0.2:8080/healthz" in argv


def test_unknown_named_port_fails_the_probe() -> None:
    ctr = {"name": "c", "readinessProbe": {"httpGet": {"path": "/", "port": "web"}}}
    with pytest.raises(ValueError, match="web"):
        probe_argv(ctr, "127.0.0.1")
    assert not probe_ready(ctr, "127.0.0.1")


def test_http_probe_passes_on_200_and_fails_on_503(server: int) -> None:
    good = {"name": "c", "readinessProbe": {"httpGet": {"path": "/ready", "port": server}}}
    bad = {"name": "c", "readinessProbe": {"httpGet": {"path": "/other", "port": server}}}
    assert probe_ready(good, "127.0.0.1")
    assert not probe_ready(bad, "127.0.0.1")


def test_http_probe_fails_when_nothing_listens() -> None:
    ctr = {"name": "c", "readinessProbe": {"httpGet": {"path": "/", "port": _closed_port()}}}
    assert not probe_ready(ctr, "127.0.0.1")


def test_tcp_probe(server: int) -> None:
    assert probe_ready(
        {"name": "c", "readinessProbe": {"tcpSocket": {"port": server}}}, "127.0.0.1"
    )
    closed = {"name": "c", "readinessProbe": {"tcpSocket": {"port": _closed_port()}}}
    assert not probe_ready(closed, "127.0.0.1")


def test_exec_probe_runs_in_the_containers_directory(tmp_path) -> None:
    (tmp_path / "ready").write_text("x")
    ok = {"name": "c", "readinessProbe": {"exec": {"command": ["test", "-f", "ready"]}}}
    assert probe_ready(ok, "127.0.0.1", cwd=str(tmp_path))
    (tmp_path / "ready").unlink()
    assert not probe_ready(ok, "127.0.0.1", cwd=str(tmp_path))


def test_status_not_ready_until_probe_passes() -> None:
    pod = {"metadata": {}, "spec": {"containers": [{"name": "a", "image": "i"}]}}
    args = {
        "uid": "u",
        "pod_ip": "10.0.0.2",
        "host_ip": "127.0.0.1",
        "started": "2026-01-01T00:00:00Z",
        "containers": {"a": ContainerRecord("a", started_at="2026-01-01T00:00:00Z")},
        "alive": {"a"},
        "stamp": "2026-01-01T00:00:01Z",
    }
    waiting = build_status(pod, unready={"a"}, **args)  # type: ignore[arg-type]
    ready = {c["type"]: c for c in waiting["conditions"]}["Ready"]
    assert ready["status"] == "False" and ready["reason"] == "ContainersNotReady"
    assert waiting["containerStatuses"][0]["ready"] is False
    assert waiting["containerStatuses"][0]["started"] is True
    passed = build_status(pod, **args)  # type: ignore[arg-type]
    assert {c["type"]: c["status"] for c in passed["conditions"]}["Ready"] == "True"
