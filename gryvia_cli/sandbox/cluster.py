"""Bring a sandbox cluster up and down: kwokctl with local binaries, nodes, the pod runner.

The folders and names of a sandbox are in `sandboxes`, kwokctl's configuration and invocation
in `kwokctl`, node registration and the readiness checks in `bootstrap`; this module orders
them, and stops and removes everything again on `down` or on a failed `up`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

from gryvia_cli.sandbox import (
    binaries,
    bootstrap,
    kueue,
    nodespec,
    oidc,
    podnet,
    prometheus,
    realnode,
    registry,
    s3,
    storage,
)
from gryvia_cli.sandbox import kubeconfig as kc
from gryvia_cli.sandbox.kwokctl import config_file, dry_run_commands, kwokctl_config, run_kwokctl
from gryvia_cli.sandbox.netplan import NetworkPlanError
from gryvia_cli.sandbox.ports import component_ports, port_taken
from gryvia_cli.sandbox.sandboxes import (
    RUNNER,
    Progress,
    Sandbox,
    SandboxError,
    check_name,
    home,
    list_sandboxes,
    pid_alive,
)

__all__ = [
    "RUNNER",
    "Sandbox",
    "SandboxError",
    "add_nodes",
    "check_name",
    "down",
    "dry_run_commands",
    "home",
    "kwokctl_config",
    "list_sandboxes",
    "pid_alive",
    "up",
]


def up(
    name: str,
    nodes: str,
    *,
    api_port: int | None = None,
    wait: bool = True,
    progress: Progress = lambda _: None,
    dry_run: bool = False,
    with_kueue: bool = False,
    with_oidc: bool = False,
    with_prometheus: bool = False,
    with_registry: bool = False,
    with_storage: bool = False,
    with_s3: bool = False,
    kueue_block_admission: bool = False,
    with_real_node: bool = False,
) -> Sandbox:
    """Create and start sandbox `name` with the nodes of spec `nodes`; return it.

    Raises SandboxError (name taken and running, port in use, kwokctl failure, nodes not
    Ready within 120 s), NodeSpecError, or BinariesMissingError. `with_kueue` also installs and
    starts Kueue (`kueue.start`, with `waitForPodsReady.blockAdmission` when
    `kueue_block_admission`; SandboxError at once when it is not built). On failure
    everything started is stopped and removed again; when a component lost a port kwokctl had
    picked to another process, the start is tried again (up to PORT_RACE_ATTEMPTS times). With
    `with_oidc`, Dex starts first and the API server trusts it (`oidc`); `oidc.load(name)` then
    finds it. With `with_prometheus`, a Prometheus server scrapes the GPU exporters
    (`prometheus.start`; SandboxError at once when it is not installed); `prometheus.url(box)`
    then gives its URL. With `with_registry`, an OCI registry runs on loopback
    (`registry.start`); `registry.address(box)` then gives its `host:port`. With
    `with_storage`, the local-path provisioner serves StorageClass `local-path`
    (`storage.start`); with `with_s3`, an S3 server runs on loopback (`s3.start`;
    `s3.load(box)` then gives its endpoint and keys). Both SandboxError at once when not built.
    With `with_real_node`, a kubelet with containerd joins as node `system-0` (`realnode`;
    the registry starts too, its images' source); SandboxError at once when it cannot run here.
    """
    check_name(name)
    groups = nodespec.parse_node_spec(nodes)
    box = Sandbox(name)
    missing = binaries.missing()
    if missing:
        raise binaries.BinariesMissingError(
            f"not built yet: {', '.join(missing)} (run 'make k8s-bin')"
        )
    if with_kueue and (why := kueue.missing()):
        raise SandboxError(why)
    if with_prometheus and (why := prometheus.missing()):
        raise SandboxError(why)
    if with_registry and (why := registry.missing()):
        raise SandboxError(why)
    if with_storage and (why := storage.missing()):
        raise SandboxError(why)
    if with_s3 and (why := s3.missing()):
        raise SandboxError(why)
    if with_real_node and (why := realnode.missing() or registry.missing()):
        raise SandboxError(why)
    if box.workdir.exists():
        if any(box.alive().values()):
            raise SandboxError(
                f"sandbox {name!r} is already running: use it, or stop it first with "
                f"'gryvia sandbox down --name {name}'"
            )
        progress(f"removing stale sandbox {name!r} left by an earlier run")
        down(name)
    if api_port and port_taken(api_port):
        raise SandboxError(f"--api-port {api_port} is in use: pick another or leave it out")
    given = {"kubeApiserverPort": api_port} if api_port else {}
    config_path = config_file(name)
    config_path.parent.mkdir(parents=True, exist_ok=True)
    config_path.write_text(kwokctl_config(binaries.bin_dir(), given))
    if dry_run:
        return box
    attempt = 1
    try:
        while True:
            try:
                patches: list[dict[str, Any]] = []
                if with_oidc:
                    progress("starting Dex, the OIDC issuer")
                    issuer, patch = oidc.start(name)
                    progress(f"OIDC issuer {issuer.issuer}")
                    patches.append(patch)
                ports = component_ports(api_port)
                extra = realnode.options(config_path) if with_real_node else None
                patches += realnode.patches(box) if with_real_node else []
                config_path.write_text(kwokctl_config(binaries.bin_dir(), ports, patches, extra))
                _start(box, groups, config_path, wait=wait, progress=progress)
                if with_kueue:
                    kueue.start(box, progress, block_admission=kueue_block_admission)
                if with_prometheus:
                    prometheus.start(box, progress)
                if with_registry or with_real_node:
                    where = registry.start(box, progress)
                    if with_real_node:
                        realnode.start(box, where, progress)
                if with_storage:
                    storage.start(box, progress)
                if with_s3:
                    s3.start(box, progress)
                return box
            except SandboxError:
                lost = _lost_port_race(box)
                down(name)
                if not lost or attempt >= PORT_RACE_ATTEMPTS:
                    raise
                progress(f"a port kwokctl picked was taken meanwhile: starting again ({attempt})")
                attempt += 1
            except BaseException:
                down(name)
                raise
    finally:
        config_path.unlink(missing_ok=True)
        realnode.scheduler_file(config_path).unlink(missing_ok=True)


PORT_RACE_ATTEMPTS = 3
"""Starts tried when a component lost its port: kwokctl picks free ports before starting the
components, and another process (another sandbox, a test) may bind one in between."""


def _lost_port_race(box: Sandbox) -> bool:
    """True when a component's log says its port was taken (`bind: address already in use`)."""
    for log in sorted((box.workdir / "logs").glob("*.log")):
        with contextlib.suppress(OSError):
            if b"bind: address already in use" in log.read_bytes():
                return True
    return False


def _start(
    box: Sandbox,
    groups: list[nodespec.NodeGroup],
    config_path: Path,
    *,
    wait: bool,
    progress: Progress,
) -> None:
    """Start the control plane, network, nodes and pod runner of `box` (see `up`); the
    caller stops everything on failure."""
    kwok_kubeconfig = box.workdir.parent / f".{box.name}-kwok-kubeconfig"
    try:
        progress("starting etcd, kube-apiserver, controller-manager, scheduler, kwok")
        run_kwokctl(
            box,
            "create",
            "cluster",
            "--timeout",
            "180s",
            "--wait",
            "120s",
            "--kubeconfig",
            str(kwok_kubeconfig),
            config=config_path,
        )
        box.state.mkdir(parents=True, exist_ok=True)
        kc.write_sandbox_kubeconfig(box.workdir / "kubeconfig.yaml", box.kubeconfig, box.context)
        _create_network(box, progress)
        built = nodespec.build_nodes(groups)
        progress(f"registering {len(built)} simulated nodes")
        bootstrap.create_nodes(box, built)
        progress("starting the pod runner")
        _start_runner(box)
        progress("starting the GPU exporters (dcgm-exporter's format, one per GPU node)")
        bootstrap.create_gpu_exporter(box)
        if wait:
            progress("waiting for nodes to be Ready")
            bootstrap.wait_nodes_ready(box, [n["metadata"]["name"] for n in built])
            progress("checking that pods run and their logs are served")
            bootstrap.probe_pod_logs(box)
    finally:
        kwok_kubeconfig.unlink(missing_ok=True)


def add_nodes(name: str, nodes: str) -> list[str]:
    """Add the nodes of spec `nodes` to running sandbox `name`, numbered after existing ones
    (and their exporters to its Prometheus' targets, when it runs one).

    Returns the new node names. Raises SandboxError if a name exists already.
    """
    box = Sandbox(name)
    existing = set(bootstrap.kubectl(box, "get", "nodes", "-o", "name").split())
    groups = nodespec.parse_node_spec(nodes)
    built = nodespec.build_nodes(groups, taken={n.removeprefix("node/") for n in existing})
    bootstrap.create_nodes(box, built)
    if prometheus.url(box):  # its discovery file lists the new nodes' exporters too
        prometheus.write_targets(box)
    return [n["metadata"]["name"] for n in built]


def _create_network(box: Sandbox, progress: Progress) -> None:
    """Give the sandbox its bridge, or warn that pods will share the host network."""
    why = podnet.available()
    if not why:
        try:
            net = podnet.create_sandbox_network(box.name, box.workdir, box.state)
        except (podnet.NetworkError, NetworkPlanError) as exc:
            podnet.remove_sandbox_network(box.workdir)
            why = str(exc)
        else:
            progress(f"pod network: bridge {net.bridge}, {net.subnet}, a namespace per pod")
            return
    progress(
        f"warning: pods share the host network ({why}): each gets a 127.244.x.y address, "
        "two pods listening on one port collide, and Services get no EndpointSlices"
    )


def _start_runner(box: Sandbox) -> None:
    module = "gryvia_cli.sandbox.runner"
    argv = [sys.executable, "-m", module, "--kubeconfig", str(box.kubeconfig)]
    box.start(RUNNER, [*argv, "--state", str(box.state)])


def down(name: str) -> bool:
    """Stop sandbox `name` and delete its folder: every process it started, and its bridge,
    pod network namespaces and veths, are gone after.

    Returns False if no such sandbox existed.
    """
    box = Sandbox(name)
    oidc.stop(name)
    if not box.workdir.exists():
        podnet.remove_sandbox_network(box.workdir)  # a crash may have left them
        return False
    pids = box.pids()
    runner = pids.pop(RUNNER, None)
    if runner and pid_alive(runner):
        os.kill(runner, signal.SIGTERM)
        _wait_gone([runner], 10)
    _kill_pod_groups(box)
    realnode.stop(box)
    if binaries.bin_dir().joinpath("kwokctl").exists():
        run_kwokctl(box, "delete", "cluster", check=False)
    for pid in pids.values():  # whatever kwokctl did not stop
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    _wait_gone(list(pids.values()), 10)
    podnet.remove_sandbox_network(box.workdir)
    shutil.rmtree(box.workdir, ignore_errors=True)
    return True


def _kill_pod_groups(box: Sandbox) -> None:
    procs = box.state / "procs"
    for entry in procs.glob("*") if procs.is_dir() else []:
        with contextlib.suppress(ValueError, ProcessLookupError, PermissionError):
            os.killpg(int(entry.name), signal.SIGKILL)


def _wait_gone(pids: list[int], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.1)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
