"""Bring a sandbox cluster up and down: kwokctl with local binaries, nodes, the pod runner.

A sandbox named N lives in `$GRYVIA_SANDBOX_HOME/clusters/N` (default
`~/.local/state/gryvia/sandbox`), kwokctl's work folder, with Gryvia's own files (pod runner
state, kubeconfig) under `gryvia/` inside it. Every binary kwokctl runs is a local path, so
nothing is downloaded (`kwokctl --dry-run` shows it).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from gryvia_cli.errors import GryviaError
from gryvia_cli.sandbox import binaries, kubeconfig, nodespec

NAME_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$")
RUNNER = "gryvia-pod-runner"
Progress = Callable[[str], None]


class SandboxError(GryviaError):
    """A sandbox operation failed; the message says what and how to fix it."""


def home() -> Path:
    """Root folder of all sandboxes (kwokctl's KWOK_WORKDIR)."""
    env = os.environ.get("GRYVIA_SANDBOX_HOME")
    if env:
        return Path(env)
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "gryvia" / "sandbox"


@dataclass(frozen=True)
class Sandbox:
    """One sandbox's folders and files, by name."""

    name: str

    @property
    def workdir(self) -> Path:
        """kwokctl's folder for this cluster."""
        return home() / "clusters" / self.name

    @property
    def state(self) -> Path:
        """Gryvia's files: pod runner state, pods, hosts file."""
        return self.workdir / "gryvia"

    @property
    def kubeconfig(self) -> Path:
        """A kubeconfig with the single context `gryvia-<name>`."""
        return self.state / "kubeconfig"

    @property
    def context(self) -> str:
        """The kubeconfig context name."""
        return f"gryvia-{self.name}"

    def pids(self) -> dict[str, int]:
        """Component name -> pid, from kwokctl's and the runner's pid files."""
        out: dict[str, int] = {}
        for pid_file in sorted((self.workdir / "pids").glob("*.pid")):
            with contextlib.suppress(ValueError, OSError):
                out[pid_file.stem] = int(pid_file.read_text().strip())
        return out

    def alive(self) -> dict[str, bool]:
        """Component name -> whether its process is running."""
        return {name: pid_alive(pid) for name, pid in self.pids().items()}


def pid_alive(pid: int) -> bool:
    """True when process `pid` exists and has not exited (zombies count as exited)."""
    with contextlib.suppress(OSError):  # a zombie has exited already
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def check_name(name: str) -> None:
    """Raise SandboxError unless `name` is a DNS label of at most 32 characters."""
    if not NAME_RE.match(name):
        raise SandboxError(
            f"--name {name!r} is not valid: use 1-32 lowercase letters, digits and '-', "
            "starting and ending with a letter or digit"
        )


def list_sandboxes() -> list[Sandbox]:
    """Return every sandbox with a folder, running or not."""
    root = home() / "clusters"
    return [Sandbox(p.name) for p in sorted(root.iterdir()) if p.is_dir()] if root.is_dir() else []


def kwokctl_config(bin_dir: Path, api_port: int | None) -> str:
    """Return kwokctl's configuration: local binaries, secure port, admission and RBAC on,
    kwok's Logs CRDs, and the node Stages (pods are left to the pod runner)."""
    options: dict[str, Any] = {
        "runtime": "binary",
        "bindAddress": "127.0.0.1",
        "securePort": True,
        "kubeAdmission": True,
        "kubeAuthorization": True,
        "enableCRDs": ["Logs", "ClusterLogs"],
        "kubeApiserverBinary": str(bin_dir / "kube-apiserver"),
        "kubeControllerManagerBinary": str(bin_dir / "kube-controller-manager"),
        "kubeSchedulerBinary": str(bin_dir / "kube-scheduler"),
        "kubectlBinary": str(bin_dir / "kubectl"),
        "etcdBinary": str(bin_dir / "etcd"),
        "kwokControllerBinary": str(bin_dir / "kwok"),
    }
    if api_port:
        options["kubeApiserverPort"] = api_port
    head = yaml.safe_dump(
        {
            "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
            "kind": "KwokctlConfiguration",
            "options": options,
        },
        sort_keys=False,
    )
    stages = resources.files("gryvia_cli.sandbox").joinpath("data/node-stages.yaml").read_text()
    return head + "---\n" + stages


def _kwokctl(
    box: Sandbox, *args: str, config: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    cmd = [str(binaries.path_of("kwokctl"))]
    if config is not None:
        cmd += ["--config", str(config)]
    cmd += [*args, "--name", box.name]
    env = os.environ | {"KWOK_WORKDIR": str(home())}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        raise SandboxError(f"kwokctl {args[0]} {args[1]} failed:\n{tail}")
    return proc


def _port_free(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def up(
    name: str,
    nodes: str,
    *,
    api_port: int | None = None,
    wait: bool = True,
    progress: Progress = lambda _: None,
    dry_run: bool = False,
) -> Sandbox:
    """Create and start sandbox `name` with the nodes of spec `nodes`; return it.

    Raises SandboxError (name taken and running, port in use, kwokctl failure, nodes not
    Ready within 120 s), NodeSpecError, or BinariesMissingError. On failure everything started
    is stopped and removed again.
    """
    check_name(name)
    groups = nodespec.parse_node_spec(nodes)
    box = Sandbox(name)
    missing = binaries.missing()
    if missing:
        raise binaries.BinariesMissingError(
            f"not built yet: {', '.join(missing)} (run 'make k8s-bin')"
        )
    if box.workdir.exists():
        if any(box.alive().values()):
            raise SandboxError(
                f"sandbox {name!r} is already running: use it, or stop it first with "
                f"'gryvia sandbox down --name {name}'"
            )
        progress(f"removing stale sandbox {name!r} left by an earlier run")
        down(name)
    if api_port and not _port_free(api_port):
        raise SandboxError(f"--api-port {api_port} is in use: pick another or leave it out")
    config_path = home() / f".{name}-kwokctl.yaml"
    config_path.parent.mkdir(parents=True, exist_ok=True)
    config_path.write_text(kwokctl_config(binaries.bin_dir(), api_port))
    if dry_run:
        return box
    try:
        progress("starting etcd, kube-apiserver, controller-manager, scheduler, kwok")
        _kwokctl(
            box,
            "create",
            "cluster",
            "--timeout",
            "180s",
            "--wait",
            "120s",
            "--kubeconfig",
            str(box.workdir.parent / f".{name}-kwok-kubeconfig"),
            config=config_path,
        )
        box.state.mkdir(parents=True, exist_ok=True)
        kubeconfig.write_sandbox_kubeconfig(
            box.workdir / "kubeconfig.yaml", box.kubeconfig, box.context
        )
        progress(f"registering {sum(g.count for g in groups)} simulated nodes")
        _create_nodes(box, nodespec.build_nodes(groups))
        progress("starting the pod runner")
        _start_runner(box)
        if wait:
            progress("waiting for nodes to be Ready")
            _wait_nodes_ready(box, [n["metadata"]["name"] for n in nodespec.build_nodes(groups)])
            progress("checking that pods run and their logs are served")
            _probe_pod_logs(box)
    except BaseException:
        down(name)
        raise
    finally:
        config_path.unlink(missing_ok=True)
        (box.workdir.parent / f".{name}-kwok-kubeconfig").unlink(missing_ok=True)
    return box


def dry_run_commands(name: str) -> str:
    """Return the commands kwokctl would run for sandbox `name` (`kwokctl --dry-run`)."""
    box = Sandbox(name)
    config_path = home() / f".{name}-kwokctl.yaml"
    config_path.parent.mkdir(parents=True, exist_ok=True)
    config_path.write_text(kwokctl_config(binaries.bin_dir(), None))
    try:
        return _kwokctl(
            box, "create", "cluster", "--dry-run", "--kubeconfig", os.devnull, config=config_path
        ).stdout
    finally:
        config_path.unlink(missing_ok=True)


def _kubectl(box: Sandbox, *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(
        [str(binaries.path_of("kubectl")), "--kubeconfig", str(box.kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SandboxError(f"kubectl {' '.join(args[:2])} failed: {proc.stderr.strip()}")
    return proc.stdout


def _create_nodes(box: Sandbox, nodes: list[dict[str, Any]]) -> None:
    # JSON, not YAML: label values such as "08" must stay strings.
    _kubectl(
        box,
        "create",
        "-f",
        "-",
        stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}),
    )


def add_nodes(name: str, nodes: str) -> list[str]:
    """Add the nodes of spec `nodes` to running sandbox `name`, numbered after existing ones.

    Returns the new node names. Raises SandboxError if a name exists already.
    """
    box = Sandbox(name)
    existing = set(_kubectl(box, "get", "nodes", "-o", "name").split())
    groups = nodespec.parse_node_spec(nodes)
    built = nodespec.build_nodes(groups, taken={n.removeprefix("node/") for n in existing})
    _create_nodes(box, built)
    return [n["metadata"]["name"] for n in built]


def _start_runner(box: Sandbox) -> None:
    log = (box.workdir / "logs" / f"{RUNNER}.log").open("ab")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gryvia_cli.sandbox.runner",
            "--kubeconfig",
            str(box.kubeconfig),
            "--state",
            str(box.state),
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    (box.workdir / "pids" / f"{RUNNER}.pid").write_text(str(proc.pid))


def _wait_nodes_ready(box: Sandbox, names: list[str], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    pending = set(names)
    while time.monotonic() < deadline:
        out = json.loads(_kubectl(box, "get", "nodes", "-o", "json"))
        for node in out["items"]:
            conds = {c["type"]: c["status"] for c in node["status"].get("conditions", [])}
            if conds.get("Ready") == "True":
                pending.discard(node["metadata"]["name"])
        if not pending:
            return
        time.sleep(0.3)
    raise SandboxError(f"nodes not Ready after {timeout:.0f}s: {', '.join(sorted(pending))}")


def _probe_pod_logs(box: Sandbox, timeout: float = 120.0) -> None:
    """Run one pod end to end and read its log through the API server.

    kwokctl installs kwok's Logs CRD after kwok-controller starts, so the controller's watch
    of Logs objects may back off for a few seconds; `up` returns only once logs are served.
    """
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "gryvia-sandbox-probe", "namespace": "kube-system"},
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
            _kubectl(box, "create", "-f", "-", stdin=json.dumps(pod))
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
                    "gryvia-sandbox-probe",
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
        _kubectl(box, "delete", "pod", "-n", "kube-system", "gryvia-sandbox-probe", "--wait=false")


def down(name: str) -> bool:
    """Stop sandbox `name` and delete its folder: every process it started is gone after.

    Returns False if no such sandbox existed.
    """
    box = Sandbox(name)
    if not box.workdir.exists():
        return False
    pids = box.pids()
    runner = pids.pop(RUNNER, None)
    if runner and pid_alive(runner):
        os.kill(runner, signal.SIGTERM)
        _wait_gone([runner], 10)
    _kill_pod_groups(box)
    if binaries.bin_dir().joinpath("kwokctl").exists():
        _kwokctl(box, "delete", "cluster", check=False)
    for pid in pids.values():  # whatever kwokctl did not stop
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    _wait_gone(list(pids.values()), 10)
    import shutil

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
