"""kwok `Exec` and `PortForward` objects of sandbox pods, for `kubectl exec`/`port-forward`.

kwok-controller serves the kubelet's exec and port-forward endpoints for the simulated nodes;
for each pod it looks up the `Exec` object of the pod's name (how to run a command: working
directory and environment, per container) and the `PortForward` object (which address and
port a forwarded port reaches). The pod runner creates both, owned by the pod so the garbage
collector removes them with it. Pure builders and parsers; the runner does the I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gryvia_cli.sandbox.podstatus import KWOK_GROUP, KWOK_VERSION

TCP_LISTEN = "0A"
"""The `st` column of a listening socket in /proc/net/tcp and tcp6."""


def _object(
    kind: str, pod_uid: str, namespace: str, name: str, spec: dict[str, Any]
) -> dict[str, Any]:
    return {
        "apiVersion": f"{KWOK_GROUP}/{KWOK_VERSION}",
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": namespace,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": pod_uid}],
        },
        "spec": spec,
    }


def build_exec_object(
    pod_uid: str, namespace: str, name: str, targets: Mapping[str, tuple[str, Mapping[str, str]]]
) -> dict[str, Any]:
    """Return the kwok `Exec` object of pod `namespace/name` (uid `pod_uid`, its owner).

    `targets` maps a container name to (working directory, environment) as the runner
    started that container: `kubectl exec -c NAME` then runs its command there with that
    environment (added after kwok-controller's own, so the container's values win).
    """
    execs = [
        {
            "containers": [container],
            "local": {
                "workDir": workdir,
                "envs": [{"name": k, "value": v} for k, v in sorted(env.items())],
            },
        }
        for container, (workdir, env) in sorted(targets.items())
    ]
    return _object("Exec", pod_uid, namespace, name, {"execs": execs})


def build_port_forward_object(
    pod_uid: str, namespace: str, name: str, address: str, ports: Iterable[int]
) -> dict[str, Any]:
    """Return the kwok `PortForward` object of pod `namespace/name`: each port of `ports`
    forwards to the same port of `address` (the pod's own address). kwok refuses a port not
    listed ("forward not found for port N")."""
    forwards = [{"ports": [p], "target": {"address": address, "port": p}} for p in sorted(ports)]
    return _object("PortForward", pod_uid, namespace, name, {"forwards": forwards})


def declared_ports(pod: Mapping[str, Any]) -> frozenset[int]:
    """Return the TCP `containerPort`s the pod's containers declare (init containers too)."""
    spec = pod.get("spec") or {}
    out = set()
    for ctr in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        for port in ctr.get("ports") or []:
            if str(port.get("protocol") or "TCP") == "TCP" and port.get("containerPort"):
                out.add(int(port["containerPort"]))
    return frozenset(out)


def listening_ports(proc_net_tcp: str) -> frozenset[int]:
    """Return the ports of the listening sockets in the text of a /proc/<pid>/net/tcp (or
    tcp6) file: rows `sl local_address rem_address st ...`, addresses `HEXIP:HEXPORT`."""
    out = set()
    for line in proc_net_tcp.splitlines()[1:]:
        cols = line.split()
        if len(cols) > 3 and cols[3] == TCP_LISTEN and ":" in cols[1]:
            out.add(int(cols[1].rsplit(":", 1)[1], 16))
    return frozenset(out)
