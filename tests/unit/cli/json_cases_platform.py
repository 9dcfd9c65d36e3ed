"""The cases of tests/unit/cli/test_json_schemas.py for the platform report, the local
sandboxes and the manifest checks (PlatformStatus, SandboxList, SandboxStatus,
ValidationReport): each prints the document through the CLI, over the fake access layer of
the command's own tests, or over sandbox folders made in a temporary GRYVIA_SANDBOX_HOME."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

DEAD_PID = 4194305
"""Above Linux's largest pid_max (2**22): no process has it."""


def _platform(operator: bool) -> Callable[[], str]:
    def printed() -> str:
        from tests.unit.cli.helpers import run
        from tests.unit.cli.test_cli_read import cluster

        fake = cluster()
        if operator:
            fake.add(
                {
                    "kind": "Deployment",
                    "metadata": {"name": "gryvia-operator", "namespace": "gryvia-system"},
                    "spec": {"replicas": 1},
                    "status": {"readyReplicas": 1, "availableReplicas": 1},
                }
            )
        return run(["status", "-o", "json"], fake).stdout

    return printed


def _sandbox(home: Path, name: str, pids: dict[str, int]) -> None:
    """The folder of sandbox `name` with its pid files and, when it has any, a kubeconfig."""
    folder = home / "clusters" / name
    (folder / "pids").mkdir(parents=True)
    for component, pid in pids.items():
        (folder / "pids" / f"{component}.pid").write_text(str(pid))
    if pids:
        (folder / "gryvia").mkdir()
        (folder / "gryvia" / "kubeconfig").write_text(
            "clusters:\n- name: x\n  cluster:\n    server: https://127.0.0.1:6443\n"
        )


def _sandbox_list(tmp_path: Path) -> str:
    from tests.unit.cli.helpers import run

    _sandbox(tmp_path, "demo", {"etcd": os.getpid(), "kube-apiserver": os.getpid()})
    _sandbox(tmp_path, "half", {"etcd": os.getpid(), "kube-apiserver": DEAD_PID})
    _sandbox(tmp_path, "old", {})
    return run(["sandbox", "list", "-o", "json"], GRYVIA_SANDBOX_HOME=str(tmp_path)).stdout


def _sandbox_status(running: bool) -> Callable[[Path], str]:
    def printed(tmp_path: Path) -> str:
        from tests.unit.cli.helpers import run

        apiserver = os.getpid() if running else DEAD_PID
        _sandbox(tmp_path, "demo", {"etcd": os.getpid(), "kube-apiserver": apiserver})
        args = ["sandbox", "status", "--name", "demo", "-o", "json"]
        result = run(args, GRYVIA_SANDBOX_HOME=str(tmp_path))
        assert result.exit_code == (0 if running else 1)
        return result.stdout

    return printed


def _validate(tmp_path: Path) -> str:
    from tests.builders import job_yaml
    from tests.unit.cli.helpers import run

    path = tmp_path / "jobs.yaml"
    config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"
    path.write_text(
        "---\n".join(
            [
                job_yaml("ok", gpus=1, gpu_type="H100"),
                job_yaml("Bad", gpus=-2, gpu_type="h100"),
                job_yaml("lower", gpus=4, gpu_type="h100"),
                config_map,
            ]
        )
    )
    result = run(["validate", str(path), "-o", "json"])
    assert result.exit_code == 1
    return result.stdout


CASES: list[tuple[str, str, Callable[..., str]]] = [
    ("PlatformStatus", "no operator", _platform(False)),
    ("PlatformStatus", "operator running", _platform(True)),
    ("SandboxList", "running, degraded, stopped", _sandbox_list),
    ("SandboxStatus", "running", _sandbox_status(True)),
    ("SandboxStatus", "degraded", _sandbox_status(False)),
    ("ValidationReport", "valid, error, warning, skipped", _validate),
]
"""(kind, what, a function printing the document)."""
