"""The CLI against the sandbox: a private config folder, per-test namespaces, and the operator
as a local process (started when `gryvia_operator/main.py` exists, else its tests skip)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SandboxHandle
from tests.support.ports import free_port
from tests.support.wait import wait_for

REPO = Path(__file__).resolve().parents[3]
WEBHOOK_CONFIG = "gryvia-validating-cli-test"
Gryvia = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="package")
def crds(sandbox: SandboxHandle) -> None:
    """Every Gryvia CRD, applied and established."""
    from gryvia_operator.api import crdgen

    body = json.dumps({"apiVersion": "v1", "kind": "List", "items": crdgen.build_crds()})
    subprocess.run(
        [str(sandbox.kubectl), "--kubeconfig", str(sandbox.kubeconfig), "apply", "-f", "-"],
        input=body,
        text=True,
        capture_output=True,
        check=True,
        timeout=120,
    )
    sandbox.kubectl_run("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")


@pytest.fixture(scope="package")
def operator_proc(
    sandbox: SandboxHandle, crds: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[subprocess.Popen[bytes] | None]:
    """`python -m gryvia_operator` against the sandbox, ready; None when it is not built yet."""
    if not (REPO / "gryvia_operator" / "main.py").exists():
        yield None
        return
    log = tmp_path_factory.mktemp("cli-operator") / "operator.log"
    health = free_port()
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gryvia_operator",
                "--kubeconfig",
                str(sandbox.kubeconfig),
                "--webhook-self-register",
                "--webhook-config-name",
                WEBHOOK_CONFIG,
                "--webhook-port",
                str(free_port()),
                "--health-port",
                str(health),
                "--metrics-port",
                str(free_port()),
                "--probe-host",
                "127.0.0.1",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def ready() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"operator exited with {proc.returncode}; see {log}")
        url = f"http://127.0.0.1:{health}/readyz"
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status == 200
        return False

    try:
        wait_for(ready, timeout=90, what=f"operator /readyz (log: {log})")
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        sandbox.kubectl_run(
            "delete",
            "validatingwebhookconfiguration",
            WEBHOOK_CONFIG,
            "--ignore-not-found",
            check=False,
        )


@pytest.fixture
def operator(operator_proc: subprocess.Popen[bytes] | None) -> subprocess.Popen[bytes]:
    """The running operator; skips the test when the operator is not available."""
    if operator_proc is None:
        pytest.skip("gryvia_operator/main.py does not exist yet")
    assert operator_proc.poll() is None, "the operator died"
    return operator_proc


@pytest.fixture
def namespace(sandbox: SandboxHandle, crds: None) -> Iterator[str]:
    """A fresh namespace, deleted after the test (without waiting)."""
    name = f"cli-{uuid.uuid4().hex[:8]}"
    sandbox.kubectl_run("create", "namespace", name)
    yield name
    sandbox.kubectl_run("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture
def cli_env(sandbox: SandboxHandle, tmp_path: Path) -> dict[str, str]:
    """Environment for `gryvia` subprocesses: the sandbox kubeconfig, a private config folder,
    no colours, no developer GRYVIA_* settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env.update(
        KUBECONFIG=str(sandbox.kubeconfig),
        GRYVIA_CONFIG_HOME=str(tmp_path / "gryvia-config"),
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture
def gryvia(cli_env: dict[str, str]) -> Gryvia:
    """Run `python -m gryvia_cli ARGS...` and return the completed process (never raises)."""

    def run(
        *args: str,
        timeout: float = 120,
        input: str | None = None,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gryvia_cli", *args],
            env={**cli_env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
            check=False,
        )

    return run


def apply(sandbox: SandboxHandle, namespace: str, *objects: dict[str, Any]) -> None:
    """Create objects in `namespace` with kubectl (JSON keeps label values strings)."""
    proc = subprocess.run(
        [
            str(sandbox.kubectl),
            "--kubeconfig",
            str(sandbox.kubeconfig),
            "create",
            "-n",
            namespace,
            "-f",
            "-",
        ],
        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}),
        text=True,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def patch_status(sandbox: SandboxHandle, namespace: str, name: str, status: dict[str, Any]) -> None:
    """Set a GryviaAIJob's status through the status subresource."""
    sandbox.kubectl_run(
        "patch",
        "gryviaaijob",
        name,
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": status}),
    )


def kubectl_json(sandbox: SandboxHandle, *args: str) -> Any:
    """`kubectl ARGS -o json`, parsed."""
    return json.loads(sandbox.kubectl_run(*args, "-o", "json").stdout)


def manifest(obj: dict[str, Any]) -> dict[str, Any]:
    """A builder's object without server-owned metadata (uid, resourceVersion, ...) and without
    its namespace (`apply` puts it in the test's)."""
    meta = obj["metadata"]
    for key in ("uid", "resourceVersion", "generation", "creationTimestamp", "namespace"):
        meta.pop(key, None)
    obj.pop("status", None)
    return obj
