"""Issue 21 part 5 against the sandbox, operator running with `--enable-inference`.

`gryvia serve create` serves `python3 -m http.server` with a readiness path: the service
becomes Ready (the sandbox's pod runner really GETs the path), its Service has one ready
endpoint, and `gryvia serve scale --replicas 2` gives 2 ready endpoints. A second service
whose readiness path answers 404 runs its pod but is never Ready (the probe is measured).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SandboxHandle
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
SERVER = ["--", "python3", "-m", "http.server", "8080"]


@pytest.fixture(scope="module")
def isvc_operator(sandbox: SandboxHandle, operator: OperatorProcess) -> Iterator[OperatorProcess]:
    """The session's operator (it runs with --enable-inference)."""
    yield operator


@pytest.fixture(scope="module")
def space(sandbox: SandboxHandle, isvc_operator: OperatorProcess) -> Iterator[str]:
    with sandbox.fresh_namespace("isvc") as name:
        yield name


def gryvia(sandbox: SandboxHandle, tmp: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env |= {
        "KUBECONFIG": str(sandbox.kubeconfig),
        "GRYVIA_CONFIG_HOME": str(tmp / "config"),
        "NO_COLOR": "1",
    }
    done = run_gryvia(*args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def status(sandbox: SandboxHandle, ns: str, name: str) -> dict[str, Any]:
    obj = sandbox.kubectl_json("get", "gryviainferenceservice", "-n", ns, name, "-o", "json")
    return dict(obj.get("status") or {})


def ready_endpoints(sandbox: SandboxHandle, ns: str, name: str) -> list[str]:
    """Addresses of the Service's ready endpoints, from its EndpointSlices."""
    slices = sandbox.kubectl_json(
        "get", "endpointslices", "-n", ns, "-l", f"kubernetes.io/service-name={name}", "-o", "json"
    )
    out = []
    for item in slices.get("items") or []:
        for ep in item.get("endpoints") or []:
            if (ep.get("conditions") or {}).get("ready"):
                out += ep.get("addresses") or []
    return sorted(out)


def test_ready_then_two_ready_endpoints(sandbox: SandboxHandle, space: str, tmp_path: Path) -> None:
    common = ("--image", "none", "--port", "8080", "-n", space)
    gryvia(sandbox, tmp_path, "serve", "create", "web", *common, "--health-path", "/", *SERVER)
    gryvia(
        sandbox, tmp_path, "serve", "create", "bad", *common, "--health-path", "/missing", *SERVER
    )

    st = wait_for(
        lambda: (s := status(sandbox, space, "web")).get("phase") == "Ready" and s,
        timeout=120,
        what="web Ready",
    )
    assert st["readyReplicas"] == 1 and st["servingVersion"] == "latest"
    assert st["url"] == f"http://web.{space}.svc:8080"
    assert len(wait_for(lambda: ready_endpoints(sandbox, space, "web"), what="1 endpoint")) == 1
    listing = gryvia(sandbox, tmp_path, "serve", "list", "-n", space)
    assert "web" in listing and "Ready" in listing and "1/1" in listing

    gryvia(sandbox, tmp_path, "serve", "scale", "web", "--replicas", "2", "-n", space)
    two = wait_for(
        lambda: len(e := ready_endpoints(sandbox, space, "web")) == 2 and e,
        timeout=120,
        what="2 ready endpoints",
    )
    assert len(set(two)) == 2
    wait_for(
        lambda: (
            (s := status(sandbox, space, "web")).get("phase") == "Ready"
            and s.get("readyReplicas") == 2
        ),
        timeout=60,
        what="web Ready with 2",
    )

    # The 404 service: its pod runs, but the probe never passes, so it is never Ready.
    def bad_running() -> bool:
        pods = sandbox.kubectl_json(
            "get", "pods", "-n", space, "-l", "gryvia.io/inference-service=bad", "-o", "json"
        )
        return any(
            "running" in (c.get("state") or {})
            for p in pods.get("items") or []
            for c in (p.get("status") or {}).get("containerStatuses") or []
        )

    wait_for(bad_running, timeout=60, what="bad's pod running")
    bad = status(sandbox, space, "bad")
    assert bad.get("phase") == "Pending" and bad.get("readyReplicas") == 0, bad
    assert ready_endpoints(sandbox, space, "bad") == []
