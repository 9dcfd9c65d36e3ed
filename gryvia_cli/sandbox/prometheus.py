"""A real Prometheus server in a sandbox, scraping its dcgm-exporters (docs/gpu-metrics.md).

The server is Debian's `prometheus` package (2.42; `make prometheus-bin` installs it): the HTTP
API Gryvia asks (`/api/v1/query`, stable since Prometheus 2.0) is the same as 3.x's, and the
package installs in seconds where building github.com/prometheus/prometheus from the Go module
proxy would add minutes to a fresh machine's first `make test`.

Debian builds it without Kubernetes service discovery (`kubernetes_sd_configs` is not in its
configuration), so the sandbox does that part: `write_targets` lists the running exporter pods
(label `app=nvidia-dcgm-exporter`) in a file-based discovery file (`file_sd_configs`, re-read
by Prometheus when it changes) with each pod's IP and `metrics` port and labels `node` and
`exporter_pod`, at start and after `sandbox add-nodes`. Prometheus scrapes each pod IP every
SCRAPE_SECONDS with `honor_labels` (dcgm-exporter's `namespace`/`pod`/`container` labels name
the pod holding the GPU, not the exporter), as a real cluster's Prometheus scrapes
dcgm-exporter. It listens on 127.0.0.1 at a free port; the URL is kept in
`<workdir>/prometheus/url` and the pid in the sandbox's pids folder, so `down` stops it. The
builders are pure; `start`, `write_targets` and `stop` do the I/O.
"""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from gryvia_cli.sandbox import binaries, bootstrap
from gryvia_cli.sandbox.gpusim import EXPORTER_NAMESPACE
from gryvia_cli.sandbox.ports import free_port
from gryvia_cli.sandbox.sandboxes import Progress, Sandbox, SandboxError
from gryvia_operator.api.dcgm import EXPORTER_SELECTOR, metrics_port

PROMETHEUS = "prometheus"
SCRAPE_SECONDS = 5
"""The sandbox's scrape interval: the exporters' own sampling window (a real cluster's is
usually 15 to 30 s)."""


def binary() -> str | None:
    """The `prometheus` executable (PATH, then Debian's /usr/bin), or None."""
    return binaries.debian_binary(PROMETHEUS)


def missing() -> str:
    """Why Prometheus cannot run here ('' when it can)."""
    if binary() is None:
        return "prometheus is not installed: run 'make prometheus-bin' (Debian's package)"
    return ""


def scrape_config(targets: Path) -> dict[str, Any]:
    """The server's configuration: one job `dcgm-exporter` over the discovery file `targets`
    (see the module docstring)."""
    return {
        "global": {
            "scrape_interval": f"{SCRAPE_SECONDS}s",
            "scrape_timeout": f"{SCRAPE_SECONDS - 1}s",
            "evaluation_interval": f"{SCRAPE_SECONDS}s",
        },
        "scrape_configs": [
            {
                "job_name": "dcgm-exporter",
                "honor_labels": True,
                "file_sd_configs": [{"files": [str(targets)], "refresh_interval": "5s"}],
            }
        ],
    }


def target_groups(pods: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The file-discovery groups of the running exporter pods among `pods` (API objects): one
    group a pod, target `<pod IP>:<metrics port>`, labels `node` and `exporter_pod`."""
    groups = []
    for pod in pods:
        status, spec = pod.get("status") or {}, pod.get("spec") or {}
        if status.get("phase") != "Running" or not status.get("podIP"):
            continue
        groups.append(
            {
                "targets": [f"{status['podIP']}:{metrics_port(pod)}"],
                "labels": {
                    "node": str(spec.get("nodeName") or ""),
                    "exporter_pod": str((pod.get("metadata") or {}).get("name") or ""),
                },
            }
        )
    return sorted(groups, key=lambda g: g["labels"]["node"])


def targets_file(box: Sandbox) -> Path:
    """The discovery file Prometheus reads."""
    return box.workdir / PROMETHEUS / "targets.json"


def write_targets(box: Sandbox, timeout: float = 60.0) -> int:
    """Write the discovery file once every exporter pod the DaemonSet wants runs with an IP
    (at most `timeout` s; after that, those that do); return how many it lists. Replaced
    atomically, so Prometheus never reads half a file. Raises SandboxError when kubectl fails."""
    deadline = time.monotonic() + timeout
    while True:
        found = json.loads(
            bootstrap.kubectl(
                box, "get", "pods", "-n", EXPORTER_NAMESPACE, "-l", EXPORTER_SELECTOR, "-o", "json"
            )
        )
        groups = target_groups(found.get("items") or [])
        sets = json.loads(
            bootstrap.kubectl(box, "get", "daemonsets", "-n", EXPORTER_NAMESPACE, "-o", "json")
        )
        wanted = sum(
            int((d.get("status") or {}).get("desiredNumberScheduled") or 0)
            for d in sets.get("items") or []
        )
        if len(groups) >= wanted or time.monotonic() >= deadline:
            break
        time.sleep(0.5)
    path = targets_file(box)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    part.write_text(json.dumps(groups, indent=1))
    part.replace(path)
    return len(groups)


def url_file(box: Sandbox) -> Path:
    """Where the running server's URL is kept."""
    return box.workdir / PROMETHEUS / "url"


def url(box: Sandbox) -> str:
    """The URL of the sandbox's Prometheus ("" when it has none running)."""
    pid = box.pids().get(PROMETHEUS)
    if pid is None or not box.alive().get(PROMETHEUS):
        return ""
    try:
        return url_file(box).read_text().strip()
    except OSError:
        return ""


def start(box: Sandbox, progress: Progress, timeout: float = 60.0) -> str:
    """Start Prometheus for `box` and wait until it is ready; return its URL.

    Files go to `<workdir>/prometheus/` (configuration, TSDB), the log to
    `<workdir>/logs/prometheus.log`. Raises SandboxError when it is not installed, exits, or
    is not ready within `timeout` seconds.
    """
    exe = binary()
    if exe is None:
        raise SandboxError(missing())
    folder = box.workdir / PROMETHEUS
    (folder / "data").mkdir(parents=True, exist_ok=True)
    listed = write_targets(box)
    config = folder / "prometheus.yml"
    config.write_text(yaml.safe_dump(scrape_config(targets_file(box)), sort_keys=False))
    port = free_port()
    address = f"http://127.0.0.1:{port}"
    progress(f"starting Prometheus at {address} (scraping {listed} GPU exporter(s))")
    argv = [
        exe, f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=1d",
        "--log.level=warn",
    ]  # fmt: skip
    log_path = box.workdir / "logs" / f"{PROMETHEUS}.log"
    proc = box.start(PROMETHEUS, argv)
    url_file(box).write_text(address + "\n")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SandboxError(f"Prometheus exited with {proc.returncode}: see {log_path}")
        try:
            with urllib.request.urlopen(f"{address}/-/ready", timeout=2) as reply:
                if reply.status == 200:
                    return address
        except OSError:
            pass
        time.sleep(0.2)
    raise SandboxError(f"Prometheus was not ready after {timeout:.0f}s: see {log_path}")


def stop(box: Sandbox, timeout: float = 10.0) -> bool:
    """Stop the sandbox's Prometheus (SIGTERM, then SIGKILL after `timeout` s); False when
    none was running."""
    pid_file = box.workdir / "pids" / f"{PROMETHEUS}.pid"
    pid = box.pids().get(PROMETHEUS)
    if pid is None or not box.alive().get(PROMETHEUS):
        pid_file.unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and box.alive().get(PROMETHEUS):
        time.sleep(0.1)
    if box.alive().get(PROMETHEUS):
        os.kill(pid, signal.SIGKILL)
    pid_file.unlink(missing_ok=True)
    return True
