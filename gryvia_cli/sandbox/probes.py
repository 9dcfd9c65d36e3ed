"""Readiness probes for the sandbox's pod runner: what a kubelet measures before it calls a
container Ready.

A container with a `readinessProbe` is Ready only once the probe has passed: `httpGet` is an
HTTP GET of `http://<host or pod IP>:<port><path>` answered 200-399 (the kubelet's rule), `exec`
a command exiting 0, `tcpSocket` a TCP connect. Each probe runs as a short child process inside
the pod's network namespace (so the pod's address and loopback are the pod's own), with the
probe's `timeoutSeconds` (default 1 s, as in Kubernetes). A container without a probe is Ready
while it runs. `periodSeconds`, `successThreshold` and `failureThreshold` are simplified: the
runner probes about once a second and takes each result as it comes.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from gryvia_cli.sandbox import netplan

_HTTP = (
    "import sys, urllib.request\n"
    "try:\n"
    "    r = urllib.request.urlopen(sys.argv[1], timeout=float(sys.argv[2]))\n"
    "    sys.exit(0 if 200 <= r.status < 400 else 1)\n"
    "except Exception:\n"
    "    sys.exit(1)\n"
)
_TCP = (
    "import socket, sys\n"
    "try:\n"
    "    socket.create_connection((sys.argv[1], int(sys.argv[2])), float(sys.argv[3])).close()\n"
    "except OSError:\n"
    "    sys.exit(1)\n"
)


def _port(container: Mapping[str, Any], port: Any) -> int:
    """Resolve a probe's `port`: a number, or the name of one of the container's ports."""
    if isinstance(port, int) or (isinstance(port, str) and port.isdigit()):
        return int(port)
    for entry in container.get("ports") or []:
        if entry.get("name") == port:
            return int(entry["containerPort"])
    raise ValueError(f"probe port {port!r} is not a port of container {container.get('name')}")


def probe_argv(container: Mapping[str, Any], pod_ip: str) -> list[str] | None:
    """Return the command that runs `container`'s readiness probe (exit 0 = passed), or None
    when it has none. Raises ValueError for a probe naming a port the container lacks."""
    probe = container.get("readinessProbe") or {}
    timeout = str(float(probe.get("timeoutSeconds") or 1))
    if "httpGet" in probe:
        get = probe["httpGet"]
        host = get.get("host") or pod_ip
        path = str(get.get("path") or "/")
        scheme = str(get.get("scheme") or "HTTP").lower()
        url = f"{scheme}://{host}:{_port(container, get.get('port'))}{path}"
        return [sys.executable, "-c", _HTTP, url, timeout]
    if "tcpSocket" in probe:
        sock = probe["tcpSocket"]
        port = _port(container, sock.get("port"))
        return [sys.executable, "-c", _TCP, sock.get("host") or pod_ip, str(port), timeout]
    if "exec" in probe:
        return [str(part) for part in (probe["exec"].get("command") or [])] or None
    return None


def probe_ready(
    container: Mapping[str, Any],
    pod_ip: str,
    *,
    netns: str = "",
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> bool:
    """Run `container`'s readiness probe once; True when it passed or there is none.

    `netns` (empty: the host's network) is the pod's network namespace; `cwd` and `env` are
    the container's, for `exec` probes. A probe that cannot start or outlives its timeout
    (plus one second for the interpreter) fails.
    """
    try:
        argv: Sequence[str] | None = probe_argv(container, pod_ip)
    except ValueError:
        return False
    if argv is None:
        return True
    if netns:
        argv = netplan.netns_argv(netns, argv)
    timeout = float((container.get("readinessProbe") or {}).get("timeoutSeconds") or 1) + 1
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
