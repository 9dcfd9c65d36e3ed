"""Issue 38, failure 10: a proxy that asks for Basic authentication, given as `user:password`
in the kubeconfig's `proxy-url` (kubectl's way), lets the CLI through for requests and for
the exec stream; a wrong password is refused by the proxy and the password is never
printed. The proxy is a real tinyproxy (Debian's package, `make proxy-bin`)."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.cli.conftest import CliCase
from tests.integration.cli.test_exec import submit_two_replicas
from tests.support.ports import free_port
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

USER, PASSWORD = "ops", "s3cr3t"
"""tinyproxy's BasicAuth takes letters and digits only (the escaping of other characters is
covered by the unit tests of `kube.proxy.proxy_credentials`)."""


@contextlib.contextmanager
def tinyproxy(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A tinyproxy on 127.0.0.1 that wants Basic credentials USER/PASSWORD; yields (port,
    its log file)."""
    binary = shutil.which("tinyproxy")
    assert binary, "tinyproxy is not installed: run `make proxy-bin` (Debian's tinyproxy)"
    port, log = free_port(), tmp_path / "tinyproxy.log"
    conf = tmp_path / "tinyproxy.conf"
    conf.write_text(
        f'Port {port}\nListen 127.0.0.1\nTimeout 600\nLogFile "{log}"\nLogLevel Connect\n'
        f"MaxClients 50\nAllow 127.0.0.1\nBasicAuth {USER} {PASSWORD}\n"
    )
    proc = subprocess.Popen([binary, "-d", "-c", str(conf)], stdout=subprocess.DEVNULL)
    try:
        wait_for(lambda: _listening(port), timeout=10, interval=0.2, what="tinyproxy listening")
        yield port, log
    finally:
        proc.terminate()
        proc.wait(10)


def _listening(port: int) -> bool:
    import socket

    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
        return True
    return False


def _through(kubeconfig: Path, out: Path, proxy: str) -> Path:
    config: dict[str, Any] = yaml.safe_load(kubeconfig.read_text())
    for entry in config.get("clusters") or []:
        entry["cluster"]["proxy-url"] = proxy
    out.write_text(yaml.safe_dump(config))
    return out


def test_basic_proxy_credentials_in_the_proxy_url_let_requests_and_exec_through(
    case: CliCase,
) -> None:
    submit_two_replicas(case, "viaproxy", "sleep 600")
    kubeconfig, ns = case.sandbox.kubeconfig, case.namespace
    with tinyproxy(case.tmp_path) as (port, log):
        good = _through(
            kubeconfig, case.tmp_path / "good", f"http://{USER}:{PASSWORD}@127.0.0.1:{port}"
        )
        env = {"KUBECONFIG": str(good)}
        listed = case.gryvia("list", "jobs", "-n", ns, "-o", "name", env=env)
        assert listed.returncode == 0, listed.stderr
        assert "viaproxy" in listed.stdout

        def ran() -> subprocess.CompletedProcess[str] | None:
            done = case.gryvia("exec", "viaproxy", "-n", ns, "--", "echo", "hi", env=env)
            return done if done.returncode == 0 else None

        done = wait_for(ran, timeout=60, interval=0.5, what="exec through the proxy")
        assert done.stdout == "hi\n"
        assert "CONNECT" in log.read_text(errors="replace")  # it did go through the proxy

        bad = _through(kubeconfig, case.tmp_path / "bad", f"http://{USER}:wrong@127.0.0.1:{port}")
        refused = case.gryvia("list", "jobs", "-n", ns, env={"KUBECONFIG": str(bad)})
        assert refused.returncode != 0
        # the proxy's refusal is shown (tinyproxy answers a CONNECT with 401, squid with 407)
        assert "401 Unauthorized" in refused.stderr or "407" in refused.stderr, refused.stderr
        assert "wrong" not in refused.stderr  # the password is never printed
