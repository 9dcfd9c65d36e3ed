"""Gryvia on a sandbox: the chart's CRDs and cluster objects (helm) and the operator as a local
process with every opt-in feature the sandbox can serve. `gryvia sandbox up` installs both
(unless `--bare`), as the demo does, so README's "Using it" works on a fresh sandbox.

The operator runs as a process of the sandbox (its pid and log sit beside kwokctl's, so
`gryvia sandbox down` stops it), with a kubeconfig instead of a service account, and registers
its own webhook on a loopback port. The chart's Deployment is installed with 0 replicas: a
sandbox pod runs its command as a local process, not the operator image, and has no service
account token to reach the API server with (docs/chart.md).
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from gryvia_cli.errors import GryviaError
from gryvia_cli.sandbox import binaries, cluster, hookreceiver, prometheus
from gryvia_cli.sandbox.ports import free_port
from gryvia_cli.sandbox.sandboxes import Progress

OPERATOR = "gryvia-operator"
DEMO_FEATURES = (
    "--enable-workflows",
    "--enable-autotuners",
    "--enable-inference",
    "--enable-model-registry",
    "--enable-reservations",
    "--enable-priorities",
    "--enable-job-hooks",
    "--enable-checkpoint-guards",
    "--enable-gpu-metrics",
    "--billing-ledger",
)
"""The opt-in features the sandbox's and the demo's operator run with, and the test session's:
all that leave shared state alone while none of their objects exist, but the admission gate,
which changes what is admitted, so it stays a choice (docs/operator.md)."""
SANDBOX_FEATURES = (*DEMO_FEATURES, "--enable-gpu-sharing", "--simulate-device-plugin")
"""What `gryvia sandbox up` and the demo run: DEMO_FEATURES and GPU sharing, which needs the
NVIDIA device plugin the sandbox has not, so the operator plays its part
(`--simulate-device-plugin`: node capacity as the plugin would report it; it patches
nodes/status, which the sandbox's admin credentials allow and the chart's ClusterRole rightly
does not grant). The tests run GPU sharing only where they say so (`@pytest.mark.operator`)."""


def install_chart(box: cluster.Sandbox, chart: Path) -> None:
    """Install the chart's CRDs and cluster objects (RBAC, tenant roles, peering); the operator
    itself runs as a local process, so the Deployment has 0 replicas and the webhook
    configuration is registered by the operator."""
    helm = [str(binaries.path_of("helm")), "--kubeconfig", str(box.kubeconfig)]
    args = [
        "upgrade",
        "--install",
        "gryvia",
        str(chart),
        "-n",
        "gryvia-system",
        "--create-namespace",
        "--set",
        "replicaCount=0",
        "--set",
        "webhook.enabled=false",
        "--wait",
        "--timeout",
        "120s",
    ]
    proc = subprocess.run([*helm, *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GryviaError(f"helm install failed: {proc.stderr.strip()}")


def start_operator(
    box: cluster.Sandbox, timeout: float = 60.0, *, kueue: bool = False, prometheus_url: str = ""
) -> int:
    """Start the operator with a self-registered webhook and SANDBOX_FEATURES, job hooks allowed
    to the demo's local receiver (`hookreceiver.ALLOWED_CIDR`), and `--enable-kueue` with
    `kueue`, `--prometheus-url` with `prometheus_url`, unless it runs; return its pid.
    Raises GryviaError when it exits or is not ready."""
    pids = box.pids()
    if OPERATOR in pids and cluster.pid_alive(pids[OPERATOR]):
        return pids[OPERATOR]
    health = free_port()
    proc = box.start(
        OPERATOR,
        [
            sys.executable,
            "-m",
            "gryvia_operator",
            "--kubeconfig",
            str(box.kubeconfig),
            "--webhook-self-register",
            "--webhook-port",
            str(free_port()),
            "--health-port",
            str(health),
            "--metrics-port",
            str(free_port()),
            "--probe-host",
            "127.0.0.1",
            "--log-format",
            "text",
            *SANDBOX_FEATURES,
            f"--job-hook-allowed-cidr={hookreceiver.ALLOWED_CIDR}",
            *(["--enable-kueue"] if kueue else []),
            *([f"--prometheus-url={prometheus_url}"] if prometheus_url else []),
        ],
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise GryviaError(
                f"the operator exited with {proc.returncode}",
                hint=f"see {box.workdir / 'logs' / f'{OPERATOR}.log'}",
            )
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{health}/readyz", timeout=2) as r:
                if r.status == 200:
                    return proc.pid
        except OSError:
            pass
        time.sleep(0.3)
    raise GryviaError(f"the operator was not ready after {timeout:.0f}s")


def install(box: cluster.Sandbox, progress: Progress, *, kueue: bool = False) -> None:
    """Install the chart (`install_chart`) and start the operator (`start_operator`) on `box`.
    Raises GryviaError when this is not a source checkout (no chart), helm fails, or the
    operator does not start."""
    root = binaries.repo_root()
    if root is None:
        raise GryviaError(
            "the chart is not here (an installed gryvia, not a source checkout)",
            hint="run 'gryvia sandbox up --bare' and install the chart yourself",
        )
    progress("installing the chart's CRDs and cluster objects (helm)")
    install_chart(box, root / "charts" / "gryvia")
    progress("starting the operator and its webhook (every feature the sandbox can serve)")
    start_operator(box, kueue=kueue, prometheus_url=prometheus.url(box))
