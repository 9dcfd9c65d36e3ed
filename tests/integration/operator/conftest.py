"""Operator tests against the sandbox (the operator itself is the session fixture `operator` in
tests/conftest.py, with the cluster helpers): per-test namespaces with the operator running."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.conftest import SandboxHandle, create, get_job, kubectl_json, wait_phase
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

__all__ = ["create", "get_job", "kubectl_json", "wait_phase"]


@pytest.fixture
def namespace(sandbox: SandboxHandle, live_operator: OperatorProcess) -> Iterator[str]:
    """A fresh namespace, deleted after the test (without waiting)."""
    with sandbox.fresh_namespace("op") as name:
        yield name


@pytest.fixture
def fresh_tenant(sandbox: SandboxHandle, live_operator: OperatorProcess) -> Iterator[str]:
    """A GryviaTenant `t<hex>` whose namespace `tenant-<name>` exists, deleted after the test."""
    name = f"t{uuid.uuid4().hex[:7]}"
    sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaTenant",
            "metadata": {"name": name},
            "spec": {"displayName": name, "deletionPolicy": "Delete"},
        }
    )
    wait_for(
        lambda: sandbox.kubectl_run("get", "ns", f"tenant-{name}", check=False).returncode == 0,
        what="the tenant namespace",
    )
    yield name
    sandbox.kubectl_run("delete", "gryviatenant", name, "--wait=false", check=False)
