"""The CLI against the sandbox: a private config folder, per-test namespaces, and the session's
operator (a local process, see tests/conftest.py)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SandboxHandle, kubectl_json
from tests.conftest import wait_phase as wait_for_phase
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

REPO = Path(__file__).resolve().parents[3]
WEBHOOK_CONFIG = "gryvia-validating-cli-test"
__all__ = ["kubectl_json", "wait_for_phase"]
Gryvia = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def operator(live_operator: OperatorProcess) -> OperatorProcess:
    """The session's operator, running (see tests/conftest.py)."""
    return live_operator


@pytest.fixture
def namespace(sandbox: SandboxHandle, crds: None) -> Iterator[str]:
    """A fresh namespace, deleted after the test (without waiting)."""
    with sandbox.fresh_namespace("cli") as name:
        yield name


@dataclass(frozen=True)
class CliCase:
    """What a CLI test against the live cluster works with: the sandbox, a fresh namespace,
    the `gryvia` runner and a scratch folder (the session's operator is running)."""

    sandbox: SandboxHandle
    namespace: str
    gryvia: Gryvia
    tmp_path: Path


@pytest.fixture
def case(
    operator: OperatorProcess,
    sandbox: SandboxHandle,
    namespace: str,
    gryvia: Gryvia,
    tmp_path: Path,
) -> CliCase:
    """A CliCase with the operator running."""
    return CliCase(sandbox, namespace, gryvia, tmp_path)


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
        return run_gryvia(*args, env={**cli_env, **(env or {})}, timeout=timeout, input=input)

    return run


def apply(sandbox: SandboxHandle, namespace: str, *objects: dict[str, Any]) -> None:
    """Create objects in `namespace` with kubectl (JSON keeps label values strings)."""
    done = sandbox.apply(*objects, namespace=namespace, verb="create", check=False)
    assert done.returncode == 0, done.stderr


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


def manifest(obj: dict[str, Any]) -> dict[str, Any]:
    """A builder's object without server-owned metadata (uid, resourceVersion, ...) and without
    its namespace (`apply` puts it in the test's)."""
    meta = obj["metadata"]
    for key in ("uid", "resourceVersion", "generation", "creationTimestamp", "namespace"):
        meta.pop(key, None)
    obj.pop("status", None)
    return obj


def wait_for_final_record(sandbox: SandboxHandle, ns: str, uid: str) -> dict[str, Any]:
    """Wait until the job run's usage record `usage-<uid>` is final; return it."""

    def sealed() -> dict[str, Any] | None:
        found = kubectl_json(sandbox, "get", "gryviausagerecord", "-n", ns)["items"]
        mine = [r for r in found if r["metadata"]["name"] == f"usage-{uid}"]
        return mine[0] if mine and mine[0]["spec"].get("final") else None

    return wait_for(sealed, timeout=120, interval=1.0, what=f"final usage record usage-{uid}")
