"""The operator as a local process against a sandbox: one `python -m gryvia_operator` at a time,
with fixed ports, its webhook self-registered; started, killed (SIGKILL) and restarted by tests."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gryvia_operator.api.crd import generate as crdgen
from tests.support import timing
from tests.support.ports import free_port
from tests.support.wait import wait_for

WEBHOOK_CONFIG = "gryvia-validating-test"


def apply_crds(kubectl: Path, kubeconfig: Path) -> None:
    """Apply every Gryvia CRD and wait until all are Established."""
    body = json.dumps({"apiVersion": "v1", "kind": "List", "items": crdgen.build_crds()})
    base = [str(kubectl), "--kubeconfig", str(kubeconfig)]
    subprocess.run(
        [*base, "apply", "-f", "-"],
        input=body,
        text=True,
        capture_output=True,
        check=True,
        timeout=120,
    )
    subprocess.run(
        [*base, "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"],
        capture_output=True,
        check=True,
        timeout=90,
    )


@dataclass
class OperatorProcess:
    """One `python -m gryvia_operator` subprocess at a time, with fixed ports."""

    kubeconfig: Path
    log: Path
    health_port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)
    webhook_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    extra: tuple[str, ...] = ()

    def start(self) -> None:
        """Start the operator and wait until /readyz says ready."""
        assert self.proc is None or self.proc.poll() is not None, "already running"
        timing.count_operator_start()
        out = self.log.open("ab")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gryvia_operator",
                "--kubeconfig",
                str(self.kubeconfig),
                "--webhook-self-register",
                "--webhook-config-name",
                WEBHOOK_CONFIG,
                "--webhook-port",
                str(self.webhook_port),
                "--health-port",
                str(self.health_port),
                "--metrics-port",
                str(self.metrics_port),
                "--probe-host",
                "127.0.0.1",
                "--workers",
                "8",
                *self.extra,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        out.close()
        wait_for(self._ready, timeout=60, what=f"operator /readyz (log: {self.log})")

    def _ready(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"operator exited with {self.proc.returncode}; see {self.log}")
        with contextlib.suppress(OSError):
            url = f"http://127.0.0.1:{self.health_port}/readyz"
            with urllib.request.urlopen(url, timeout=2) as resp:
                return bool(resp.status == 200)
        return False

    def kill(self) -> None:
        """SIGKILL: no cleanup at all, as a crashed pod."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 20 s."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()

    @contextlib.contextmanager
    def flags(self, *extra: str) -> Iterator[OperatorProcess]:
        """Restart with the extra flags `extra` for the block, then without them again."""
        self.stop()
        self.extra = extra
        self.start()
        try:
            yield self
        finally:
            self.stop()
            self.extra = ()
            self.start()

    def ensure_running(self) -> None:
        """Start the operator unless it runs."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()

    def get(self, path: str, port: int | None = None) -> tuple[int, str]:
        """GET a path of the health (default) or another port; (status, body)."""
        url = f"http://127.0.0.1:{port or self.health_port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
