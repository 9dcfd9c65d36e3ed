"""Shared fixtures: the bare API server (envtest style) for tests that need only the API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.controlplane import ControlPlane, control_plane


@pytest.fixture(scope="session")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A real etcd + kube-apiserver on loopback ports, shared by the whole session."""
    with control_plane(tmp_path_factory.mktemp("apiserver")) as plane:
        yield plane


@pytest.fixture
def api_client(apiserver: ControlPlane) -> Iterator[object]:
    """A `kubernetes.client.ApiClient` for the bare API server (admin, client certificate)."""
    from kubernetes import config

    client = config.new_client_from_config(config_file=str(apiserver.kubeconfig))
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def repo_root() -> Path:
    """The source tree's root folder."""
    return Path(__file__).resolve().parent.parent
