"""The sandbox's pod network, applied: the bridge, pod namespaces and veths, via `ip`.

The plan (names, ranges, commands) is `netplan`'s; this module runs it. Everything is created
with `ip -batch` (one process per step) and removed by name prefix, so `down`, a failed `up`
and the next `up` after a crash all leave nothing behind. Needs root, `ip` and `nsenter`;
`available()` says whether they work here, else the sandbox falls back to the host network.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

from gryvia_cli.errors import GryviaError
from gryvia_cli.sandbox import netplan
from gryvia_cli.sandbox.netplan import SandboxNet

#: Set to "host" to keep pods in the host network namespace (today's fallback) even as root.
MODE_ENV = "GRYVIA_SANDBOX_NETWORK"
LOCK_FILE = Path("/run/lock/gryvia-sandbox-network.lock")


class NetworkError(GryviaError):
    """An `ip` command failed; the message has its stderr."""


def available() -> str:
    """Return "" when pods can get their own network here, else why not (for a warning)."""
    if os.environ.get(MODE_ENV, "") == "host":
        return f"{MODE_ENV}=host"
    if os.geteuid() != 0:
        return "not running as root"
    missing = [tool for tool in ("ip", "nsenter", "unshare") if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not found"
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return "network namespaces cannot be created here"
    return ""


def run_batch(lines: Sequence[str], *, netns: str = "", force: bool = False) -> None:
    """Run `ip [-n NETNS] [-force] -batch -` with `lines`. Raises NetworkError unless `force`
    (then failures of single lines, e.g. an already removed device, are ignored)."""
    if not lines:
        return
    cmd = ["ip", *(["-n", netns] if netns else []), *(["-force"] if force else []), "-b", "-"]
    proc = subprocess.run(
        cmd, input="\n".join(lines) + "\n", capture_output=True, text=True, check=False
    )
    if proc.returncode != 0 and not force:
        raise NetworkError(f"ip {' '.join(cmd[1:-2])}: {proc.stderr.strip()}")


def _ip_json(*args: str) -> list[dict[str, object]]:
    proc = subprocess.run(["ip", "-j", *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        return []
    data = json.loads(proc.stdout)
    return data if isinstance(data, list) else []


def _links() -> list[str]:
    return [str(link.get("ifname", "")) for link in _ip_json("link", "show")]


def _namespaces() -> list[str]:
    return [str(ns.get("name", "")) for ns in _ip_json("netns", "list")]


@contextlib.contextmanager
def _machine_lock() -> Iterator[None]:
    """Serialise range choice and bridge creation between sandboxes on this machine."""
    LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
    with LOCK_FILE.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def create_sandbox_network(name: str, workdir: Path, state: Path) -> SandboxNet:
    """Create sandbox `name`'s bridge on a free range and record the plan in `state`.

    Raises NetworkError (an `ip` command failed) or NetworkPlanError (no range free).
    """
    with _machine_lock():
        remove_sandbox_network(workdir)  # a crashed sandbox of the same folder
        taken = netplan.parse_taken(_ip_json("-4", "route", "show", "table", "all"))
        net = netplan.plan_network(name, str(workdir.absolute()), taken)
        run_batch(netplan.bridge_up_batch(net))
    (state / netplan.NETWORK_FILE).write_text(net.to_json())
    return net


def create_bridge(bridge: str, nid: str) -> SandboxNet:
    """Create bridge `bridge` with its address on a free range (the first tried derived from
    `nid`), under the same machine lock as the sandboxes' networks (the real node's bridge,
    `realnode`). Raises NetworkError or NetworkPlanError."""
    with _machine_lock():
        taken = netplan.parse_taken(_ip_json("-4", "route", "show", "table", "all"))
        net = SandboxNet(nid, bridge, netplan.choose_subnet(nid, taken))
        run_batch(netplan.bridge_up_batch(net))
    return net


def load(state: Path) -> SandboxNet | None:
    """Return the network recorded in `state`, or None (the sandbox uses the host network)."""
    path = state / netplan.NETWORK_FILE
    return SandboxNet.from_json(path.read_text()) if path.exists() else None


def remove_sandbox_network(workdir: Path) -> list[str]:
    """Remove every pod namespace, veth and the bridge (with its address) of the sandbox in
    `workdir`; return the commands run. Safe to call when none exist."""
    if shutil.which("ip") is None:
        return []
    nid = netplan.net_id(str(workdir.absolute()))
    lines = netplan.leftovers_batch(nid, _links(), _namespaces())
    run_batch(lines, force=True)
    return lines


def remove_pod_leftovers(net: SandboxNet) -> None:
    """Remove pod namespaces and veths an earlier pod runner of this sandbox left."""
    run_batch(
        netplan.leftovers_batch(net.net_id, _links(), _namespaces(), pods_only=True), force=True
    )


def setup_pod(net: SandboxNet, ip: str) -> str:
    """Give the pod with address `ip` its namespace, veth pair and routes; return the
    namespace's name. Raises NetworkError (what was created is removed again)."""
    host, inside = netplan.pod_up_batches(net, ip)
    try:
        run_batch(host)
        run_batch(inside, netns=net.netns(ip))
    except NetworkError:
        teardown_pod(net, ip)
        raise
    return net.netns(ip)


def teardown_pod(net: SandboxNet, ip: str) -> None:
    """Remove the pod's veth pair and namespace (missing ones are ignored)."""
    run_batch(netplan.pod_down_batch(net, ip), force=True)
