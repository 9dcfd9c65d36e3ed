"""`gryvia workspace` against the sandbox with the operator running: a shell runs in the
workspace, a file in its home survives stop and start (the home PVC is bound to a hostPath PV,
which the pod runner links at the home path), and a 1-minute idle timeout stops it (stopped,
not deleted: the workspace and its PVC stay, its run is metered)."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SandboxHandle
from tests.integration.cli.conftest import CliCase, kubectl_json
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


@pytest.fixture
def home_class(sandbox: SandboxHandle, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(storage class, folder) of one static hostPath PV (the sandbox has no provisioner)."""
    klass = f"ws-{uuid.uuid4().hex[:6]}"
    folder = tmp_path / "pv"
    folder.mkdir()
    sandbox.apply(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": klass},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": klass,
                "hostPath": {"path": str(folder)},
            },
        }
    )
    try:
        yield klass, folder
    finally:
        sandbox.kubectl_run("delete", "pv", klass, "--wait=false", check=False)


def _workspace(case: CliCase, name: str) -> dict[str, Any]:
    found: dict[str, Any] = kubectl_json(
        case.sandbox, "get", "gryviaworkspace", "-n", case.namespace, name
    )
    return found


def _phase(case: CliCase, name: str, phase: str) -> dict[str, Any] | None:
    ws = _workspace(case, name)
    return ws if (ws.get("status") or {}).get("phase") == phase else None


def _shell(case: CliCase, name: str, script: str) -> subprocess.CompletedProcess[str]:
    """Run `sh -c script` through `gryvia workspace shell`, retrying until the pod's exec
    endpoint exists (kwok's Exec object appears a moment after the pod runs)."""

    def ran() -> subprocess.CompletedProcess[str] | None:
        done = case.gryvia(
            "workspace", "shell", name, "-n", case.namespace, "--", "sh", "-c", script
        )
        return done if done.returncode == 0 else None

    return wait_for(ran, timeout=60, interval=0.5, what=f"a shell in workspace {name}")


def test_workspace_shell_home_survives_stop_start_and_idle_timeout_stops_it(
    case: CliCase, home_class: tuple[str, Path]
) -> None:
    klass, folder = home_class
    ns = case.namespace
    created = case.gryvia(
        "workspace", "create", "dev", "--image", "busybox", "--storage", "1Gi",
        "--storage-class", klass, "--idle-timeout", "1", "-n", ns,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    wait_for(lambda: _phase(case, "dev", "Running"), timeout=90, interval=0.5, what="Running")

    shown = _shell(case, "dev", "echo $HOSTNAME; pwd")
    hostname, cwd = shown.stdout.splitlines()
    assert hostname == "dev-0"
    assert Path(cwd).resolve() == folder.resolve()  # the home PVC's volume

    _shell(case, "dev", 'echo kept > "$HOME/notes.txt"')
    assert (folder / "notes.txt").read_text() == "kept\n"

    stopped = case.gryvia("workspace", "stop", "dev", "-n", ns)
    assert stopped.returncode == 0, stopped.stderr
    wait_for(lambda: _phase(case, "dev", "Stopped"), timeout=60, interval=0.5, what="Stopped")
    wait_for(
        lambda: not kubectl_json(case.sandbox, "get", "pods", "-n", ns)["items"],
        timeout=60,
        interval=0.5,
        what="the workspace pod gone",
    )
    refused = case.gryvia("workspace", "shell", "dev", "-n", ns, "--", "true")
    assert refused.returncode != 0 and "gryvia workspace start dev" in refused.stderr

    started = case.gryvia("workspace", "start", "dev", "-n", ns)
    assert started.returncode == 0, started.stderr
    wait_for(lambda: _phase(case, "dev", "Running"), timeout=90, interval=0.5, what="Running")
    assert _shell(case, "dev", 'cat "$HOME/notes.txt"').stdout == "kept\n"

    # No session and no CPU sample (the sandbox has no metrics API): idle 1 minute -> stopped.
    ws = wait_for(
        lambda: _phase(case, "dev", "Stopped"), timeout=150, interval=1, what="the idle stop"
    )
    assert ws["status"]["stopReason"] == "Idle"
    assert ws["spec"]["stopped"] is True
    assert ws["status"]["runs"] == 2
    pvcs = kubectl_json(case.sandbox, "get", "pvc", "-n", ns)["items"]
    assert [p["metadata"]["name"] for p in pvcs] == ["dev-home"]
    listed = case.gryvia("workspace", "list", "-n", ns)
    assert listed.returncode == 0 and "Idle" in listed.stdout, listed.stdout

    def sealed() -> list[dict[str, Any]] | None:
        items = kubectl_json(case.sandbox, "get", "gryviausagerecords", "-n", ns)["items"]
        return items if len(items) == 2 and all(i["spec"]["final"] for i in items) else None

    records = wait_for(sealed, timeout=30, interval=0.5, what="two sealed usage records")
    assert {r["spec"]["job"] for r in records} == {"dev"}


def test_a_gpu_workspace_is_active_while_its_gpus_are_busy(
    case: CliCase, home_class: tuple[str, Path]
) -> None:
    """A workspace whose command keeps its GPU busy (a simulated GPU is busy while its holder's
    processes run): with no shell session and no CPU samples (no metrics API), only the
    operator's GPU readings can move its last activity past the start of its run."""
    klass, _ = home_class
    spin = ["nice", "-n", "19", "sh", "-c", "while :; do :; done"]
    created = case.gryvia(
        "workspace", "create", "gpu", "--image", "busybox", "--gpus", "1", "--gpu-type", "L40",
        "--storage", "1Gi", "--storage-class", klass, "--idle-timeout", "30",
        "--idle-gpu-percent", "20", *(x for word in spin for x in ("--command", word)),
        "-n", case.namespace,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    ws = wait_for(lambda: _phase(case, "gpu", "Running"), timeout=90, interval=0.5, what="Running")
    assert ws["spec"]["idleGPUActivityPercent"] == 20
    started = ws["status"]["startedAt"]

    def active_after_start() -> dict[str, Any] | None:
        found = _workspace(case, "gpu")
        last = (found.get("status") or {}).get("lastActivityAt") or ""
        return found if last > started else None  # RFC 3339 UTC stamps order as text

    wait_for(active_after_start, timeout=90, interval=1, what="GPU activity after its start")
    shown = case.gryvia("workspace", "get", "gpu", "-n", case.namespace)
    assert shown.returncode == 0 and "GPU activity at most 20 %" in shown.stdout, shown.stdout
