"""`gryvia port-forward` waits for the pod's port to listen (issue #37: a connection made right
after the pod started failed with the pod side's "connection refused")."""

from __future__ import annotations

import socket
import threading
from typing import Any

import kubernetes.stream
import pytest

from gryvia_cli.core.podexec import LISTEN_WAIT_S, forward_retry_delay
from gryvia_cli.errors import GryviaError
from gryvia_cli.kube.remote import RemoteAccess

REFUSED = (
    "error forwarding port 8000 to pod abc, uid : failed to execute portforward in network "
    "namespace: failed to connect to localhost:8000 inside namespace: dial tcp4 "
    "127.0.0.1:8000: connect: connection refused"
)


def test_only_a_refused_port_is_retried_with_back_off_until_the_limit() -> None:
    delays = [forward_retry_delay(REFUSED, answered=False, waited_s=0, attempt=n) for n in range(6)]
    assert delays == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    assert forward_retry_delay(
        REFUSED, answered=False, waited_s=LISTEN_WAIT_S - 0.05, attempt=9
    ) == pytest.approx(0.05)
    assert forward_retry_delay(REFUSED, answered=False, waited_s=LISTEN_WAIT_S, attempt=9) is None
    # the pod answered: what the client sent cannot be replayed
    assert forward_retry_delay(REFUSED, answered=True, waited_s=0, attempt=0) is None
    assert forward_retry_delay("pod not found", answered=False, waited_s=0, attempt=0) is None
    kwok = 'forward not found for port 8000 in pod "ns/p"'  # the sandbox: nothing listens yet
    assert forward_retry_delay(kwok, answered=False, waited_s=0, attempt=0) == 0.1


class _FakeForward:
    """One port-forward stream whose pod side is `serve(pod_end)` in a thread."""

    def __init__(self, serve: Any) -> None:
        mine, self.pod_end = socket.socketpair()
        self.sock = mine
        self.err: str | None = None
        threading.Thread(target=serve, args=(self,), daemon=True).start()

    def socket(self, port: int) -> socket.socket:
        return self.sock

    def error(self, port: int) -> str | None:
        return self.err

    def close(self) -> None:
        self.sock.close()


def _refuse(pf: _FakeForward) -> None:
    pf.err = REFUSED
    pf.pod_end.close()


def _echo(pf: _FakeForward) -> None:
    got = b""
    while not got.endswith(b"\n"):
        got += pf.pod_end.recv(1024)
    pf.pod_end.sendall(b"pod got " + got)
    pf.pod_end.close()


def _remote(monkeypatch: pytest.MonkeyPatch, servers: list[Any]) -> RemoteAccess:
    def portforward(*args: Any, **kwargs: Any) -> _FakeForward:
        return _FakeForward(servers.pop(0))

    monkeypatch.setattr(kubernetes.stream, "portforward", portforward)
    remote = RemoteAccess.__new__(RemoteAccess)
    remote.core = type("Core", (), {"connect_get_namespaced_pod_portforward": None})()
    return remote


def test_a_connection_waits_for_the_listener_and_replays_what_the_client_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    remote = _remote(monkeypatch, [_refuse, _refuse, _echo])
    client, conn = socket.socketpair()
    client.sendall(b"GET /\n")  # sent before the pod listens
    waits: list[str] = []
    done = threading.Thread(
        target=remote.forward,
        args=("ns", "pod", 8000, conn),
        kwargs={"on_wait": lambda: waits.append("wait")},
    )
    done.start()
    client.settimeout(5)
    answer = b""
    while chunk := client.recv(1024):
        answer += chunk
    client.close()
    done.join(5)
    assert answer == b"pod got GET /\n"
    assert len(waits) == 2


def test_other_errors_end_the_connection_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(pf: _FakeForward) -> None:
        pf.err = "pods pod not found"
        pf.pod_end.close()

    remote = _remote(monkeypatch, [fail])
    client, conn = socket.socketpair()
    with pytest.raises(GryviaError, match="pods pod not found"):
        remote.forward("ns", "pod", 8000, conn)
    client.settimeout(5)
    assert client.recv(10) == b""  # the client sees the end (the reading thread let go)
    client.close()
