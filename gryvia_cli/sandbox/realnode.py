"""The sandbox's real node (`gryvia sandbox up --real-node`): a kubelet built from the same
Kubernetes module as the control plane, with containerd 2.x, runc and the CNI bridge plugin,
on a bridge of its own, pulling from the sandbox's registry.

It is tainted `gryvia.io/system-node=true:NoSchedule`, so only pods that tolerate it (the
chart's operator) land on it; GPU jobs stay on the simulated nodes. kwok manages only the
simulated nodes (annotation `kwok.x-k8s.io/node=fake`) and the pod runner leaves this node's
pods alone. Pods on it reach the API server at the `kubernetes` Service's address
(`SERVICE_IP`:443) through a DNAT rule on its bridge to the loopback-bound API server, whose
certificate names that address (`kubeApiserverCertSANs`). What the kubelet needs of this
machine (cgroup v1, no CAP_SYS_RESOURCE) is in `nodeconf`; README, "A real node", says what
works. One real node per machine: the kubelet keeps some host paths
(`/var/lib/kubelet/device-plugins`, the `kubepods` cgroups) that a second would share.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml

from gryvia_cli.sandbox import binaries, certs, netplan, nodeconf, podnet
from gryvia_cli.sandbox.bootstrap import log_tails, wait_nodes_ready
from gryvia_cli.sandbox.netplan import NetworkPlanError, SandboxNet
from gryvia_cli.sandbox.nodeconf import NODE_NAME, NodePaths
from gryvia_cli.sandbox.sandboxes import Sandbox, SandboxError, pid_alive

SERVICE_IP = "10.0.0.1"
"""The `kubernetes` Service's cluster IP under kwokctl's service range (10.0.0.0/24)."""
READY_TIMEOUT = 120.0
SIMULATED = "kwok.x-k8s.io/node=fake"
"""The annotation of the sandbox's simulated nodes (`nodespec`), the ones kwok manages."""


STATE_ROOT = Path("/var/lib/gryvia/real-node")
"""Where real nodes keep their files, one folder per sandbox: a short path, since the
kubelet and containerd listen on unix sockets under it (at most 107 bytes a path; a
sandbox's own folder may be deep, e.g. under pytest's temporary folders)."""


def paths(box: Sandbox) -> NodePaths:
    """The real node's folder of sandbox `box` (`STATE_ROOT/<the sandbox's network id>`)."""
    return NodePaths(STATE_ROOT / netplan.net_id(str(box.workdir.absolute())))


def missing() -> str:
    """Why a real node cannot start here ("" when it can): not root, a binary not built, or
    another kubelet already running on this machine."""
    if os.geteuid() != 0:
        return "a real node needs root (containerd, the kubelet, a bridge, cgroups): run as root"
    absent = binaries.node_missing() + ([] if shutil.which("iptables") else ["iptables"])
    if absent:
        return f"not built yet: {', '.join(absent)} (run 'make node-bin' as root)"
    other = _run(["pgrep", "-x", "kubelet"], "pgrep", check=False)
    if other.strip():
        pid = other.split()[0]
        return f"a kubelet already runs here (pid {pid}): one real node a machine"
    return ""


def scheduler_file(config_path: Path) -> Path:
    """Where `options` writes the scheduler's configuration, beside kwokctl's `config_path`
    (kwokctl copies it into the cluster's folder)."""
    return config_path.with_name(config_path.stem + "-scheduler.yaml")


def options(config_path: Path) -> dict[str, Any]:
    """kwokctl options a real node needs: the API server's certificate also names
    `SERVICE_IP` (pods reach it there), and the scheduler weighs a pod's preferred node
    affinity ten times over (`nodeconf.scheduler_config`), writing that configuration
    beside `config_path`."""
    path = scheduler_file(config_path)
    path.write_text(yaml.safe_dump(nodeconf.scheduler_config()))
    return {"kubeApiserverCertSANs": [SERVICE_IP], "kubeSchedulerConfig": str(path)}


def patches(box: Sandbox) -> list[dict[str, Any]]:
    """kwokctl `componentsPatches` a real node needs: the API server reaches kubelets at their
    InternalIP with the admin client certificate (logs, exec), and kwok manages only the
    simulated nodes."""
    pki = box.workdir / "pki"
    return [
        {
            "name": "kube-apiserver",
            "extraArgs": [
                {"key": "kubelet-client-certificate", "value": str(pki / "admin.crt")},
                {"key": "kubelet-client-key", "value": str(pki / "admin.key")},
                {"key": "kubelet-preferred-address-types", "value": "InternalIP,Hostname"},
            ],
        },
        {
            "name": "kwok-controller",
            "extraArgs": [
                {"key": "manage-all-nodes", "value": "false"},
                {"key": "manage-nodes-with-annotation-selector", "value": SIMULATED},
            ],
        },
    ]


def _run(argv: list[str], what: str, check: bool = True) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    if check and done.returncode != 0:
        raise SandboxError(f"{what} failed: {(done.stderr or done.stdout).strip()[-400:]}")
    return done.stdout


def _host_ip() -> str:
    """This machine's primary IPv4 address (the kubelet refuses a loopback node IP)."""
    with contextlib.suppress(SandboxError, ValueError, IndexError, KeyError):
        routes = json.loads(_run(["ip", "-4", "-j", "route", "get", "1.1.1.1"], "ip route"))
        return str(routes[0]["prefsrc"])
    for link in json.loads(_run(["ip", "-4", "-j", "addr", "show", "scope", "global"], "ip addr")):
        for addr in link.get("addr_info", []):
            return str(addr["local"])
    raise SandboxError("no global IPv4 address on this machine for the kubelet's node IP")


def _dnat(bridge: str, api_port: int, add: bool) -> list[str]:
    return [
        "iptables", "-t", "nat", "-A" if add else "-D", "PREROUTING", "-i", bridge,
        "-d", SERVICE_IP, "-p", "tcp", "--dport", "443",
        "-j", "DNAT", "--to-destination", f"127.0.0.1:{api_port}",
    ]  # fmt: skip


def start(box: Sandbox, registry: str, progress: Any) -> None:
    """Start the real node of `box`, whose images come from the registry at `registry`
    (`host:port`, mirroring `nodeconf.MIRRORED`), and wait until its Node is Ready.

    Raises SandboxError naming the step that failed (the caller stops the sandbox)."""
    from gryvia_cli.sandbox.ports import free_port

    node = paths(box)
    stop(box)  # what a crashed run of this sandbox left
    for folder in (node.etc / "cni", node.run, node.var, node.pki):
        folder.mkdir(parents=True, exist_ok=True)
    (node.root / "ip_forward").write_text(Path("/proc/sys/net/ipv4/ip_forward").read_text())
    nid = netplan.net_id(str(node.root))
    net = podnet.create_bridge(f"gk{nid}", nid)
    bridge = net.bridge
    (node.root / netplan.NETWORK_FILE).write_text(net.to_json())
    Path(f"/proc/sys/net/ipv4/conf/{bridge}/route_localnet").write_text("1")
    kubeconfig = yaml.safe_load(box.kubeconfig.read_text())
    server = kubeconfig["clusters"][0]["cluster"]["server"]
    api_port = int(server.rsplit(":", 1)[1])
    _run(_dnat(bridge, api_port, add=True), "iptables DNAT to the API server")
    (node.root / "api-port").write_text(str(api_port))

    bins, pki = binaries.bin_dir(), box.workdir / "pki"
    toml = nodeconf.containerd_config(node, binaries.RUNC, binaries.CNI_BIN_DIR)
    (node.etc / "containerd.toml").write_text(toml)
    for name in nodeconf.MIRRORED:
        hosts = node.etc / "certs.d" / name / "hosts.toml"
        hosts.parent.mkdir(parents=True, exist_ok=True)
        hosts.write_text(nodeconf.hosts_toml(name, registry))
    conflist = nodeconf.cni_config(bridge, str(net.subnet), net.gateway, node.var / "cni-ipam")
    (node.etc / "cni" / "10-gryvia.conflist").write_text(json.dumps(conflist, indent=2))
    cert, key = certs.client_certificate(
        (pki / "ca.crt").read_bytes(), (pki / "ca.key").read_bytes(),
        f"system:node:{NODE_NAME}", "system:nodes", dt.datetime.now(dt.UTC), 30,
    )  # fmt: skip
    (node.pki / "kubelet.crt").write_bytes(cert)
    (node.pki / "kubelet.key").write_bytes(key)
    kubelet_kc = nodeconf.kubelet_kubeconfig(
        server, pki / "ca.crt", node.pki / "kubelet.crt", node.pki / "kubelet.key"
    )
    (node.etc / "kubelet.kubeconfig").write_text(yaml.safe_dump(kubelet_kc))
    config = nodeconf.kubelet_config(node, pki / "ca.crt", free_port(), free_port())
    (node.etc / "kubelet.yaml").write_text(yaml.safe_dump(config))

    progress("starting containerd for the real node")
    env = {"PATH": f"{bins}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    containerd = [str(bins / "containerd"), "--config", str(node.etc / "containerd.toml")]
    box.start("containerd", containerd, env=env)
    _wait(node.socket.exists, 30, "containerd's socket", box)
    archive = node.var / "pause.tar"
    archive.write_bytes(nodeconf.pause_image_archive((bins / "pause").read_bytes()))
    _run([*_ctr(node), "images", "import", str(archive)], "ctr images import (pause)")

    progress(f"starting the kubelet of real node {NODE_NAME}")
    host_ip = _host_ip()
    box.start(
        "kubelet",
        [
            str(bins / "kubelet"), "--config", str(node.etc / "kubelet.yaml"),
            "--kubeconfig", str(node.etc / "kubelet.kubeconfig"),
            "--hostname-override", NODE_NAME, "--root-dir", str(node.var / "kubelet"),
            "--cert-dir", str(node.var / "kubelet" / "pki"),
            "--node-ip", host_ip, "--address", host_ip,
            "--node-labels", f"{nodeconf.SYSTEM_LABEL}=true", "--v", "1",
        ],
        env=env,
    )  # fmt: skip
    wait_nodes_ready(box, [NODE_NAME], READY_TIMEOUT)


def _ctr(node: NodePaths) -> list[str]:
    return [str(binaries.bin_dir() / "ctr"), "--address", str(node.socket), "-n", "k8s.io"]


def _wait(done: Any, timeout: float, what: str, box: Sandbox) -> None:
    """Poll `done()` every 0.25 s. Raises SandboxError after `timeout` seconds, with the tails
    of the sandbox's logs (the sandbox is removed after a failed start, its logs too)."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            tails = log_tails(box.workdir / "logs")
            raise SandboxError(f"timed out after {timeout:.0f}s waiting for {what}{tails}")
        time.sleep(0.25)


def stop(box: Sandbox) -> None:
    """Stop the real node of `box` (if it has one) and remove what it left on this machine:
    its containers and their shims, mounts under its folder, the DNAT rule, the bridge, the
    kubelet's cgroups, and `net.ipv4.ip_forward` as it was before (the CNI bridge plugin
    turns it on)."""
    node = paths(box)
    if not node.root.exists():
        return
    pids = box.pids()
    _stop_pid(pids.get("kubelet"), 10)
    if node.socket.exists():
        ctr = _ctr(node)
        tasks = _run([*ctr, "tasks", "ls", "-q"], "ctr tasks ls", check=False).split()
        for task in tasks:
            _run([*ctr, "tasks", "kill", "-s", "KILL", task], "ctr tasks kill", check=False)
    _stop_pid(pids.get("containerd"), 10)
    ours = f"containerd-shim-runc-v2 .*-address {node.socket}"
    shims = _run(["pgrep", "-f", ours], "pgrep", check=False)
    for pid in shims.split():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)
    mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    for mount in sorted((m for m in mounts if m.startswith(f"{node.root}/")), reverse=True):
        _run(["umount", "-l", mount], "umount", check=False)
    with contextlib.suppress(OSError, ValueError, NetworkPlanError):
        net = SandboxNet.from_json((node.root / netplan.NETWORK_FILE).read_text())
        api_port = int((node.root / "api-port").read_text())
        _run(_dnat(net.bridge, api_port, add=False), "iptables -D", check=False)
        _run(["ip", "link", "del", net.bridge], "ip link del", check=False)
    for tree in Path("/sys/fs/cgroup").glob("*/kubepods"):
        for folder in sorted((p for p in tree.rglob("*") if p.is_dir()), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()
        with contextlib.suppress(OSError):
            tree.rmdir()
    with contextlib.suppress(OSError):
        before = (node.root / "ip_forward").read_text().strip()
        Path("/proc/sys/net/ipv4/ip_forward").write_text(before)
    shutil.rmtree(node.root, ignore_errors=True)


def _stop_pid(pid: int | None, grace: float) -> None:
    if pid is None or not pid_alive(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
