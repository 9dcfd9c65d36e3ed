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
from typing import TYPE_CHECKING

import pytest

from gryvia_cli.sandbox.platform import DEMO_FEATURES
from gryvia_operator.api.crd import generate as crdgen
from tests.support import timing
from tests.support.hookreceiver import ALLOWED
from tests.support.ports import free_port
from tests.support.wait import wait_for

if TYPE_CHECKING:
    from tests.conftest import SandboxHandle

WEBHOOK_CONFIG = "gryvia-validating-test"

FEATURES = (
    *DEMO_FEATURES,
    f"--job-hook-allowed-cidr={ALLOWED}/32",
    "--checkpoint-poll-seconds=1",
    "--gpu-sample-seconds=5",
    "--job-record-rollup-seconds=3",
)
"""The session operator's flags: the demo's features (every opt-in feature that leaves shared state
alone when none of its objects exist), hooks allowed to the tests' receiver address, checkpoint
logs read every second, GPUs sampled every 5 s (the exporters' own window) and job records
rolled up every 3 s (hourly by default). A test that needs
another configuration (the admission gate, simulated device plugins, a feature off) says so with
`@pytest.mark.operator(...)` (see `configuration`)."""


def configuration(marker: pytest.Mark | None) -> tuple[str, ...]:
    """The operator flags a test needs: FEATURES, plus the args of its `operator` marker;
    `@pytest.mark.operator(*flags, features=False)` leaves FEATURES out (a test that depends on
    the features being off)."""
    if marker is None:
        return FEATURES
    base = FEATURES if marker.kwargs.get("features", True) else ()
    return base + tuple(marker.args)


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
    env: dict[str, str] = field(default_factory=dict)
    """Environment variables added to the test process's (e.g. `POD_NAME`)."""

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
            env={**os.environ, "PYTHONUNBUFFERED": "1", **self.env},
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

    def configure(self, flags: tuple[str, ...], *, fresh: bool = False) -> None:
        """Run with exactly `flags` from now on: restarted when they differ from the running
        operator's (one start per change of configuration; the session orders tests by it),
        or when `fresh` (a test that needs what the operator reads only at start)."""
        if flags == self.extra and not fresh:
            return
        running = self.proc is not None and self.proc.poll() is None
        self.stop()
        self.extra = flags
        if running:
            self.start()

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """SIGSTOP for the block, SIGCONT after it: the process lives but answers nothing
        (its webhook accepts connections and never replies: the API server's call times
        out), as a hung pod; no restart follows."""
        assert self.proc is not None and self.proc.poll() is None, "not running"
        self.proc.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            self.proc.send_signal(signal.SIGCONT)

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


@contextlib.contextmanager
def webhook_down(sandbox: SandboxHandle, operator: OperatorProcess) -> Iterator[None]:
    """The operator's validating webhook unregistered for the block and registered again after
    it from the saved configuration (the operator is restarted only if that fails)."""
    saved = sandbox.kubectl_json("get", "validatingwebhookconfiguration", WEBHOOK_CONFIG)
    saved["metadata"] = {
        k: v for k, v in saved["metadata"].items() if k in ("name", "labels", "annotations")
    }
    sandbox.kubectl_run("delete", "validatingwebhookconfiguration", WEBHOOK_CONFIG)
    try:
        yield
    finally:
        restored = sandbox.kubectl_run("create", "-f", "-", input=json.dumps(saved), check=False)
        if restored.returncode != 0:
            operator.stop()
            operator.start()  # registers the webhook again
        wait_for(
            lambda: _webhook_refuses(sandbox),
            timeout=60,
            what="the API server calling the webhook again",
        )


WEBHOOK_ONLY_INVALID = {
    "apiVersion": "gryvia.io/v1alpha1",
    "kind": "GryviaAIJob",
    "metadata": {"name": "webhook-probe"},
    "spec": {"type": "training", "gpus": 0, "image": "none", "command": ["true"], "timeout": "0s"},
}
"""A job only the webhook refuses (CEL admits a zero timeout): a server-side dry run of it
tells whether the API server calls the webhook."""


def _webhook_refuses(sandbox: SandboxHandle) -> bool:
    probe = sandbox.apply(
        WEBHOOK_ONLY_INVALID,
        namespace="default",
        verb="create",
        check=False,
        extra=("--dry-run=server",),
    )
    return "denied the request" in probe.stderr
