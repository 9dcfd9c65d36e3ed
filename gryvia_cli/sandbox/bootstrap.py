"""After kwokctl: register the simulated nodes, wait for them, prove that pods run and log.

Everything here goes through the sandbox's own kubectl and kubeconfig.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gryvia_cli.sandbox import binaries, gpusim
from gryvia_cli.sandbox.sandboxes import Sandbox, SandboxError

PROBE_POD = "gryvia-sandbox-probe"


def run_kubectl(
    box: Sandbox, *args: str, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run kubectl against sandbox `box` (120 s at most). With `check`, a non-zero exit
    raises SandboxError naming the command and kubectl's message."""
    proc = subprocess.run(
        [str(binaries.path_of("kubectl")), "--kubeconfig", str(box.kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if check and proc.returncode != 0:
        raise SandboxError(f"kubectl {' '.join(args[:3])} failed: {proc.stderr.strip()}")
    return proc


def kubectl(box: Sandbox, *args: str, stdin: str | None = None) -> str:
    """Run kubectl against sandbox `box` and return its stdout. Raises SandboxError."""
    return run_kubectl(box, *args, stdin=stdin).stdout


def create_nodes(box: Sandbox, nodes: list[dict[str, Any]]) -> None:
    """Create the Node objects `nodes` and the GPU files their exporters read (`gpusim`).
    Raises SandboxError (e.g. a name exists already)."""
    gpusim.write_nodes(box.state, nodes)
    # JSON, not YAML: label values such as "08" must stay strings.
    kubectl(
        box,
        "create",
        "-f",
        "-",
        stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}),
    )


def create_gpu_exporter(box: Sandbox) -> None:
    """Start the GPU exporter DaemonSet (`gpusim.exporter_manifests`). Raises SandboxError."""
    manifests = gpusim.exporter_manifests(box.state, sys.executable)
    kubectl(
        box,
        "apply",
        "-f",
        "-",
        stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": manifests}),
    )


def wait_nodes_ready(box: Sandbox, names: list[str], timeout: float = 120.0) -> None:
    """Return once every node of `names` is Ready; raise SandboxError after `timeout` s."""
    deadline = time.monotonic() + timeout
    pending = set(names)
    while time.monotonic() < deadline:
        out = json.loads(kubectl(box, "get", "nodes", "-o", "json"))
        for node in out["items"]:
            conds = {c["type"]: c["status"] for c in node["status"].get("conditions", [])}
            if conds.get("Ready") == "True":
                pending.discard(node["metadata"]["name"])
        if not pending:
            return
        time.sleep(0.3)
    raise SandboxError(
        f"nodes not Ready after {timeout:.0f}s: {', '.join(sorted(pending))}"
        + log_tails(box.workdir / "logs")
    )


def log_tails(folder: Path, lines: int = 15) -> str:
    """The last `lines` lines of each `*.log` in `folder` (the sandbox's components), as text
    to append to an error ("" when there are none): the sandbox is removed after a failed
    `up`, so what its components said must travel with the error."""
    parts = []
    for log in sorted(folder.glob("*.log")) if folder.is_dir() else []:
        with contextlib.suppress(OSError):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            if tail:
                parts.append(f"\n--- {log.name} (last {len(tail)} lines)\n" + "\n".join(tail))
    return "".join(parts)


def probe_pod_logs(box: Sandbox, timeout: float = 120.0) -> None:
    """Run one pod end to end and read its log through the API server.

    kwokctl installs kwok's Logs CRD after kwok-controller starts, so the controller's watch
    of Logs objects may back off for a few seconds; `up` returns only once logs are served.
    Raises SandboxError after `timeout` seconds.
    """
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": PROBE_POD, "namespace": "kube-system"},
        "spec": {
            "restartPolicy": "Never",
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {"name": "probe", "image": "none", "command": ["echo", "sandbox ready"]}
            ],
        },
    }
    deadline = time.monotonic() + timeout
    while True:  # the default ServiceAccount appears a moment after the API server
        try:
            kubectl(box, "create", "-f", "-", stdin=json.dumps(pod))
            break
        except SandboxError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.25)
    try:
        while time.monotonic() < deadline:
            proc = subprocess.run(
                [
                    str(binaries.path_of("kubectl")),
                    "--kubeconfig",
                    str(box.kubeconfig),
                    "logs",
                    "-n",
                    "kube-system",
                    PROBE_POD,
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode == 0 and "sandbox ready" in proc.stdout:
                return
            time.sleep(0.25)
        raise SandboxError(f"pod logs not served after {timeout:.0f}s: {proc.stderr.strip()}")
    finally:
        kubectl(box, "delete", "pod", "-n", "kube-system", PROBE_POD, "--wait=false")
