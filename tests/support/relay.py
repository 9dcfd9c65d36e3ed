"""A TCP relay on loopback for fault tests: clients talk to the relay, the relay to the target.

Between them it can add latency, stop forwarding without closing anything (a blackhole: the
sockets stay open, bytes wait), or cut every open connection (both sides see a reset/EOF).
Tests point a kubeconfig at `relay.address` (`relayed_kubeconfig`) and switch modes while a
command runs:

    with Relay(("127.0.0.1", 6443)) as relay:
        kubeconfig = relayed_kubeconfig(original, tmp_path / "relayed", relay)
        relay.blackhole()        # bytes wait in the relay; new connections are accepted, idle
        ...
        relay.forward()          # everything held is delivered, in order
        relay.cut()              # every open connection is closed now
        relay.set_latency(5.0)   # each chunk is delayed 5 s (one way)

TLS passes through untouched (the relay never reads the bytes), so the API server's
certificate, client certificates and tokens work as they do without it. Loopback only.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import yaml

CHUNK = 65536


class Relay:
    """A threaded TCP relay from 127.0.0.1:<free port> to `target` (host, port).

    Modes: forward (default), blackhole, with an optional one-way latency in seconds applied
    to each chunk in both directions. `cut()` closes the connections open now. Counters:
    `accepted` (connections taken), `cuts` (connections closed by cut()).
    """

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._server = socket.create_server(("127.0.0.1", 0))
        self.address: tuple[str, int] = self._server.getsockname()[:2]
        self._lock = threading.Lock()
        self._flowing = threading.Event()
        self._flowing.set()
        self._latency = 0.0
        self._closed = threading.Event()
        self._pipes: set[_Pipe] = set()
        self.accepted = 0
        self.cuts = 0
        self._thread = threading.Thread(target=self._accept, name="relay-accept", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """`https://127.0.0.1:<port>`: the server URL to write into a kubeconfig."""
        return f"https://{self.address[0]}:{self.address[1]}"

    def forward(self) -> None:
        """Forward bytes again (after `blackhole()`); held bytes go first, in order."""
        self._flowing.set()

    def blackhole(self) -> None:
        """Stop forwarding without closing any socket: reads on both ends simply wait."""
        self._flowing.clear()

    def set_latency(self, seconds: float) -> None:
        """Delay every chunk by `seconds` (one way; a request/response round trip gets 2x)."""
        with self._lock:
            self._latency = max(0.0, seconds)

    def cut(self) -> int:
        """Close every open connection now; returns how many were closed."""
        with self._lock:
            pipes = list(self._pipes)
        for pipe in pipes:
            pipe.close()
        self.cuts += len(pipes)
        return len(pipes)

    def close(self) -> None:
        """Stop accepting and close every connection."""
        self._closed.set()
        self._flowing.set()
        with contextlib.suppress(OSError):
            self._server.close()
        self.cut()

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _latency_now(self) -> float:
        with self._lock:
            return self._latency

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            pipe = _Pipe(self, client, upstream)
            with self._lock:
                self._pipes.add(pipe)
                self.accepted += 1
            pipe.start()

    def _forget(self, pipe: _Pipe) -> None:
        with self._lock:
            self._pipes.discard(pipe)


class _Pipe:
    """One relayed connection: two pump threads, one per direction."""

    def __init__(self, relay: Relay, client: socket.socket, upstream: socket.socket) -> None:
        self.relay = relay
        self.sockets = (client, upstream)
        self._closed = threading.Event()

    def start(self) -> None:
        client, upstream = self.sockets
        for src, dst in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()
        self.relay._forget(self)

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        held: deque[tuple[float, bytes]] = deque()
        try:
            while not self._closed.is_set():
                readable, _, _ = select.select([src], [], [], 0.05)
                if readable:
                    data = src.recv(CHUNK)
                    if not data:
                        break
                    held.append((time.monotonic() + self.relay._latency_now(), data))
                while held and self.relay._flowing.is_set() and held[0][0] <= time.monotonic():
                    dst.sendall(held.popleft()[1])
        except OSError:
            pass
        finally:
            # Deliver what is already due before closing (a half-close still sends its tail).
            with contextlib.suppress(OSError):
                while held and self.relay._flowing.is_set() and not self._closed.is_set():
                    due, data = held.popleft()
                    time.sleep(max(0.0, due - time.monotonic()))
                    dst.sendall(data)
            self.close()


def relayed_kubeconfig(kubeconfig: Path, out: Path, relay: Relay) -> Path:
    """Write a copy of `kubeconfig` to `out` whose every cluster server is `relay.url`.

    The certificate's host check still passes: the relay listens on 127.0.0.1, the address the
    sandbox's API server certificate names.
    """
    config: dict[str, Any] = yaml.safe_load(kubeconfig.read_text())
    for entry in config.get("clusters") or []:
        entry["cluster"]["server"] = relay.url
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(config))
    return out


def server_address(kubeconfig: Path) -> tuple[str, int]:
    """The (host, port) of the current context's cluster server in `kubeconfig`."""
    config: dict[str, Any] = yaml.safe_load(kubeconfig.read_text())
    current = config.get("current-context")
    contexts = {c["name"]: c["context"] for c in config.get("contexts") or []}
    cluster_name = contexts[current]["cluster"] if current in contexts else None
    for entry in config.get("clusters") or []:
        if cluster_name is None or entry["name"] == cluster_name:
            server = str(entry["cluster"]["server"])
            hostport = server.split("://", 1)[-1].rstrip("/")
            host, _, port = hostport.rpartition(":")
            return host.strip("[]"), int(port)
    raise ValueError(f"{kubeconfig}: no cluster server for context {current!r}")
