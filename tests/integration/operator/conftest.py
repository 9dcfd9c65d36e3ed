"""Operator tests against the sandbox (the operator itself is the session fixture `operator` in
tests/conftest.py, with the cluster helpers): per-test namespaces with the operator running."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import SandboxHandle, create, get_job, kubectl_json, wait_phase
from tests.support.operator import OperatorProcess

__all__ = ["create", "get_job", "kubectl_json", "wait_phase"]


@pytest.fixture
def namespace(sandbox: SandboxHandle, live_operator: OperatorProcess) -> Iterator[str]:
    """A fresh namespace, deleted after the test (without waiting)."""
    with sandbox.fresh_namespace("op") as name:
        yield name
