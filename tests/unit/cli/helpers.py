"""Test helpers for CLI unit tests: a fixed clock, object builders the shared
`tests.builders` lacks, and a CliRunner wrapper that injects a fake access layer."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from typer.testing import CliRunner, Result

from gryvia_cli.cli.session import Session
from tests.builders import make_job, make_node, make_pod
from tests.unit.cli.fakes import FakeAccess

NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)

__all__ = ["NOW", "ago", "event", "gpunode", "make_job", "make_node", "make_pod", "run", "stamp"]


def ago(seconds: float) -> str:
    """An RFC 3339 timestamp `seconds` before NOW."""
    return (NOW - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def stamp(obj: dict[str, Any], seconds_ago: float) -> dict[str, Any]:
    """A copy of `obj` created `seconds_ago` before NOW."""
    out = copy.deepcopy(obj)
    out["metadata"]["creationTimestamp"] = ago(seconds_ago)
    return out


def gpunode(
    name: str, gpu_type: str, gpus: int = 8, *, phase: str | None = "Ready", memory_gb: int = 80
) -> dict[str, Any]:
    """A GryviaGpuNode for Node `name`."""
    obj: dict[str, Any] = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaGpuNode",
        "metadata": {"name": name, "labels": {"gryvia.io/auto-registered": "true"}},
        "spec": {"nodeName": name, "gpuType": gpu_type, "gpuCount": gpus, "memoryGB": memory_gb},
    }
    if phase:
        obj["status"] = {"phase": phase, "driverVersion": "550.127.08", "cudaVersion": "12.4"}
    return obj


def event(
    pod: str,
    message: str,
    *,
    namespace: str = "ml",
    reason: str = "FailedScheduling",
    seconds_ago: float = 5,
    kind: str = "Pod",
) -> dict[str, Any]:
    """A core/v1 Event about `pod`."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{pod}.1", "namespace": namespace},
        "involvedObject": {"kind": kind, "name": pod, "namespace": namespace},
        "reason": reason,
        "message": message,
        "type": "Warning",
        "count": 1,
        "lastTimestamp": ago(seconds_ago),
    }


def run(args: list[str], fake: FakeAccess | None = None, **env: str) -> Result:
    """Invoke the gryvia app with `args`, a fake access layer and the fixed clock."""
    from gryvia_cli.main import app

    state = Session(access_factory=(lambda _s: fake) if fake else None, clock=lambda: NOW)
    return CliRunner().invoke(app, args, obj=state, env=env or None)


def h100(name: str = "gpu-h100-0", gpus: int = 8) -> dict[str, Any]:
    """A Ready H100 Node with GFD labels."""
    return make_node(name).gpus(gpus).product().rdma_capable().obj()
