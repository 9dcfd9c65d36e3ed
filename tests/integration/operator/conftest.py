"""The operator as a local process against the sandbox: CRDs applied, webhook self-registered,
started once for the package, restartable and killable by tests."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gryvia_operator.api import crdgen
from tests.conftest import SandboxHandle
from tests.support.ports import free_port
from tests.support.wait import wait_for

WEBHOOK_CONFIG = "gryvia-validating-test"


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


def kubectl_json(sandbox: SandboxHandle, *args: str) -> Any:
    """Run `kubectl ... -o json` and parse the output."""
    return json.loads(sandbox.kubectl_run(*args, "-o", "json").stdout)


def create(
    sandbox: SandboxHandle, ns: str, *objs: dict[str, Any], check: bool = True
) -> subprocess.CompletedProcess[str]:
    """`kubectl create` the objects in namespace `ns`."""
    return subprocess.run(
        [
            str(sandbox.kubectl),
            "--kubeconfig",
            str(sandbox.kubeconfig),
            "create",
            "-n",
            ns,
            "-f",
            "-",
        ],
        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)}),
        text=True,
        capture_output=True,
        check=check,
        timeout=300,
    )


def get_job(sandbox: SandboxHandle, ns: str, name: str) -> dict[str, Any]:
    """The GryviaAIJob `ns/name`."""
    obj: dict[str, Any] = kubectl_json(sandbox, "get", "gryviaaijob", "-n", ns, name)
    return obj


def wait_phase(
    sandbox: SandboxHandle, ns: str, name: str, *phases: str, timeout: float = 90
) -> dict[str, Any]:
    """Wait until the job's phase is one of `phases`; return the job."""

    def check() -> dict[str, Any] | None:
        job = get_job(sandbox, ns, name)
        return job if job.get("status", {}).get("phase") in phases else None

    result: dict[str, Any] = wait_for(check, timeout=timeout, what=f"{ns}/{name} in {phases}")
    return result


@pytest.fixture(scope="package")
def crds(sandbox: SandboxHandle) -> None:
    """Every Gryvia CRD, applied and established."""
    body = json.dumps({"apiVersion": "v1", "kind": "List", "items": crdgen.build_crds()})
    subprocess.run(
        [str(sandbox.kubectl), "--kubeconfig", str(sandbox.kubeconfig), "apply", "-f", "-"],
        input=body,
        text=True,
        capture_output=True,
        check=True,
    )
    sandbox.kubectl_run("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")


@pytest.fixture(scope="package")
def operator(
    sandbox: SandboxHandle, crds: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    """The operator running against the sandbox; killed (and its webhook removed) at the end."""
    log = tmp_path_factory.mktemp("operator") / "operator.log"
    proc = OperatorProcess(sandbox.kubeconfig, log)
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()
        sandbox.kubectl_run(
            "delete",
            "validatingwebhookconfiguration",
            WEBHOOK_CONFIG,
            "--ignore-not-found",
            check=False,
        )


@pytest.fixture
def live_operator(operator: OperatorProcess) -> OperatorProcess:
    """The package operator, (re)started if an earlier test stopped it."""
    operator.ensure_running()
    return operator


@pytest.fixture
def namespace(sandbox: SandboxHandle, live_operator: OperatorProcess) -> Iterator[str]:
    """A fresh namespace, deleted after the test (without waiting)."""
    name = f"op-{uuid.uuid4().hex[:8]}"
    sandbox.kubectl_run("create", "namespace", name)
    yield name
    sandbox.kubectl_run("delete", "namespace", name, "--wait=false", check=False)
