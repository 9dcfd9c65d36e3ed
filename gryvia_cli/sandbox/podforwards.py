"""Keeping each sandbox pod's kwok `Exec` and `PortForward` objects current.

`kubectl exec` runs in a container's working directory with its environment as the runner
started it (`publish_exec`). `kubectl port-forward POD N` reaches port N of the pod's own
address when N is a declared `containerPort` or a port something in the pod's network
namespace listens on: `forward_loop` reads the listening sockets of each pod's namespace
(/proc/<pid>/net/tcp and tcp6 of one of its processes) every second and updates the pod's
`PortForward` object when they change. Pods in the host's network (no pod network) forward
their declared ports only: the host's sockets are not theirs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from gryvia_cli.sandbox import podtools
from gryvia_cli.sandbox.podapi import PodApi
from gryvia_cli.sandbox.processes import PodRun

POLL_SECONDS = 1.0


def publish(api: PodApi, run: PodRun, pod: Mapping[str, Any]) -> None:
    """Create (or replace) the pod's `Exec` object from `run.exec_targets` and its
    `PortForward` object (its declared ports, and what it listens on already); from then on
    `forward_loop` keeps the latter current."""
    body = podtools.build_exec_object(run.uid, run.namespace, run.name, run.exec_targets)
    api.put_kwok_object("execs", body)
    run.declared_ports = podtools.declared_ports(pod)
    refresh_forwards(api, [run])


def current_ports(run: PodRun) -> frozenset[int]:
    """The pod's declared ports, and (in its own network namespace) the ports listened on
    there now."""
    ports = set(run.declared_ports)
    if not run.netns:
        return frozenset(ports)
    for ctr in list(run.containers.values()):
        if ctr.proc is None or not ctr.alive():
            continue
        for table in ("tcp", "tcp6"):
            try:
                text = Path(f"/proc/{ctr.proc.pid}/net/{table}").read_text()
            except OSError:  # the process just ended
                continue
            ports |= podtools.listening_ports(text)
        break  # one process shows the whole namespace
    return frozenset(ports)


def refresh_forwards(api: PodApi, runs: Iterable[PodRun]) -> None:
    """Write the `PortForward` object of each run whose ports changed since last time."""
    for run in runs:
        if run.stopping.is_set():
            continue
        ports = current_ports(run)
        if ports == run.forwarded:
            continue
        body = podtools.build_port_forward_object(run.uid, run.namespace, run.name, run.ip, ports)
        if run.forwarded is None:
            api.put_kwok_object("portforwards", body)
        else:
            api.patch_kwok_spec("portforwards", body)
        run.forwarded = ports


def forward_loop(api: PodApi, runs: Callable[[], list[PodRun]], stop: threading.Event) -> None:
    """Refresh the forwards of every published pod each POLL_SECONDS until `stop` is set."""
    while not stop.wait(POLL_SECONDS):
        refresh_forwards(api, [run for run in runs() if run.forwarded is not None])
