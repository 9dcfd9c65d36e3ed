"""Container processes of the sandbox's pod runner: start one, reap it, kill a pod's.

A container runs as its own process group (so a kill reaches its children), with stdout and
stderr pumped into a CRI log file, and a marker file `<state>/procs/<pid>` while it lives so
`sandbox down` can kill what a crashed runner left.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gryvia_cli.sandbox.crilog import CriLogWriter
from gryvia_cli.sandbox.gpusim import marker_record
from gryvia_cli.sandbox.podstatus import ContainerRecord, now

#: Runs inside the new mount+UTS namespace: bind the hosts file ($0), set the host name ($1).
HOSTS_SHIM = 'mount --bind "$0" /etc/hosts && hostname "$1" && shift && exec "$@"'


def can_use_namespaces() -> bool:
    """True when mount and UTS namespaces work here (root with `unshare`): pods then see the
    cluster hosts file as /etc/hosts and their own host name."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "--mount", "--uts", "--propagation", "private", "true"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


def namespaced_argv(argv: Sequence[str], hosts_file: Path, hostname: str) -> list[str]:
    """Return `argv` wrapped to run in new mount and UTS namespaces, with `hosts_file`
    bind-mounted over /etc/hosts and host name `hostname`."""
    return [
        "unshare",
        "--mount",
        "--uts",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        HOSTS_SHIM,
        str(hosts_file),
        hostname,
        *argv,
    ]


@dataclass
class Container(ContainerRecord):
    """One running (or finished) container process."""

    proc: subprocess.Popen[bytes] | None = None

    def alive(self) -> bool:
        """True while the process runs and has not been reaped."""
        return self.proc is not None and self.exit_code is None and self.proc.poll() is None


@dataclass
class PodRun:
    """The runner's record of one pod it has started."""

    uid: str
    namespace: str
    name: str
    ip: str
    folder: Path
    netns: str = ""  # the pod's network namespace; empty: the host's network
    node: str = ""  # spec.nodeName
    containers: dict[str, Container] = field(default_factory=dict)
    # For kwok's Exec object: container name -> (working directory, environment) as started.
    exec_targets: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    declared_ports: frozenset[int] = frozenset()
    forwarded: frozenset[int] | None = None  # the ports its PortForward object lists
    unready: set[str] = field(default_factory=set)  # running, readiness probe not passed yet
    stopping: threading.Event = field(default_factory=threading.Event)
    exited: threading.Event = field(default_factory=threading.Event)  # a container ended

    def alive(self) -> set[str]:
        """Names of the containers whose process runs now."""
        return {name for name, ctr in self.containers.items() if ctr.alive()}


def _fail(ctr: Container, writer: CriLogWriter, code: int, log: str, message: str) -> int:
    writer.write("stderr", log.encode())
    writer.close()
    ctr.exit_code, ctr.finished_at, ctr.message = code, now(), message
    return code


def start_container(
    run: PodRun,
    ctr: Container,
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    markers: Path,
    wait: bool,
    gpus: int = 0,
) -> int:
    """Start `argv` as container `ctr` of `run`, logging to `<run.folder>/logs/<name>.log`.

    With `wait`, return its exit code (128+N when killed by signal N, 127 when it cannot be
    executed); else return 0 at once and set `ctr.exit_code` and `run.exited` when it ends.
    `gpus` is the container's `nvidia.com/gpu`, written into its process marker.
    """
    writer = CriLogWriter(run.folder / "logs" / f"{ctr.name}.log")
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return _fail(ctr, writer, 127, f"exec {argv[0]}: {exc.strerror}", str(exc))
    ctr.proc = proc
    marker = markers / str(proc.pid)  # lets `sandbox down` kill what is left
    marker.parent.mkdir(exist_ok=True)
    # and tells the node's GPU exporter which pod's process group holds GPUs
    marker.write_text(marker_record(run.namespace, run.name, ctr.name, run.node, gpus))
    assert proc.stdout is not None and proc.stderr is not None
    pumps = [writer.pump(proc.stdout, "stdout"), writer.pump(proc.stderr, "stderr")]

    def reap() -> int:
        code = proc.wait()
        marker.unlink(missing_ok=True)
        for pump in pumps:
            pump.join(timeout=5)
        writer.close()
        ctr.exit_code = code if code >= 0 else 128 - code  # killed by signal N: 128+N
        ctr.finished_at = now()
        run.exited.set()
        return ctr.exit_code

    if wait:
        return reap()
    threading.Thread(target=reap, daemon=True).start()
    return 0


def fail_container(ctr: Container, log_file: Path, code: int, message: str) -> int:
    """Record that container `ctr` could not start (`message` goes to its log); return `code`."""
    return _fail(ctr, CriLogWriter(log_file), code, message, message)


def kill_run(run: PodRun, grace: float) -> None:
    """SIGTERM every live container process group of `run`, SIGKILL those left after `grace`
    seconds."""
    procs = [c.proc for c in run.containers.values() if c.proc and c.proc.poll() is None]
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
