"""Loopback ports for the sandbox's processes: one free port picked by the kernel, a check that
a given port is taken, and the ports of every control-plane component picked at once."""

from __future__ import annotations

import socket

COMPONENT_PORTS = (
    "etcdPort",
    "etcdPeerPort",
    "kubeApiserverPort",
    "kubeControllerManagerPort",
    "kubeSchedulerPort",
    "kwokControllerPort",
)
"""The KwokctlConfiguration options naming a port of a component the binary runtime starts.
Left out, kwokctl counts down from 32766 in every process alike, so two sandboxes started at
once pick the same ports and the second waits out kwokctl's whole timeout (160 s) before it
fails and starts again."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, picked by the kernel (random in
    its ephemeral range, so two callers at once rarely get the same one)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_taken(port: int) -> bool:
    """True when something accepts connections on 127.0.0.1:`port`."""
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def component_ports(api_port: int | None) -> dict[str, int]:
    """A distinct free port for each of COMPONENT_PORTS, keyed by option name; the API
    server's is `api_port` when given."""
    ports: dict[str, int] = {}
    for option in COMPONENT_PORTS:
        port = free_port()
        while port in ports.values() or port == api_port:
            port = free_port()
        ports[option] = port
    if api_port:
        ports["kubeApiserverPort"] = api_port
    return ports
