"""The fault relay of tests/support: forwards, delays, holds and cuts real loopback TCP."""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
import time
from collections.abc import Iterator

import pytest

from tests.support.relay import Relay


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(4096):
            self.request.sendall(data)


@pytest.fixture
def echo() -> Iterator[tuple[str, int]]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[:2]
    server.shutdown()
    server.server_close()


def _roundtrip(sock: socket.socket, payload: bytes) -> bytes:
    sock.sendall(payload)
    got = b""
    while len(got) < len(payload):
        chunk = sock.recv(4096)
        if not chunk:
            break
        got += chunk
    return got


def test_forwards_bytes_both_ways(echo: tuple[str, int]) -> None:
    with Relay(echo) as relay, socket.create_connection(relay.address, timeout=5) as sock:
        assert _roundtrip(sock, b"hello") == b"hello"
        assert relay.accepted == 1


def test_latency_delays_each_direction(echo: tuple[str, int]) -> None:
    with Relay(echo) as relay, socket.create_connection(relay.address, timeout=5) as sock:
        relay.set_latency(0.3)
        started = time.monotonic()
        assert _roundtrip(sock, b"slow") == b"slow"
        assert time.monotonic() - started >= 0.6


def test_blackhole_holds_bytes_until_forwarding_resumes(echo: tuple[str, int]) -> None:
    with Relay(echo) as relay, socket.create_connection(relay.address, timeout=5) as sock:
        relay.blackhole()
        sock.sendall(b"held")
        sock.settimeout(0.5)
        with pytest.raises(TimeoutError):
            sock.recv(16)
        relay.forward()
        sock.settimeout(5)
        assert sock.recv(16) == b"held"


def test_cut_closes_open_connections(echo: tuple[str, int]) -> None:
    with Relay(echo) as relay, socket.create_connection(relay.address, timeout=5) as sock:
        assert _roundtrip(sock, b"x") == b"x"
        assert relay.cut() == 1
        with contextlib.suppress(ConnectionResetError):
            assert sock.recv(16) == b""
