"""Helpers for operator tests against the sandbox (the operator itself is the session fixture
`operator` in tests/conftest.py): kubectl shortcuts, phase waits, per-test namespaces."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import SandboxHandle
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for


def kubectl_json(sandbox: SandboxHandle, *args: str) -> Any:
    """Run `kubectl ... -o json` and parse the output."""
    return sandbox.kubectl_json(*args)


def create(
    sandbox: SandboxHandle, ns: str, *objs: dict[str, Any], check: bool = True
) -> subprocess.CompletedProcess[str]:
    """`kubectl create` the objects in namespace `ns`."""
    return sandbox.apply(*objs, namespace=ns, verb="create", check=check)


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


@pytest.fixture
def namespace(sandbox: SandboxHandle, live_operator: OperatorProcess) -> Iterator[str]:
    """A fresh namespace, deleted after the test (without waiting)."""
    with sandbox.fresh_namespace("op") as name:
        yield name
