"""An exec stream whose server sends the last output and the exit status and then drops the
connection without a close frame (an API server under load does): the client still delivers
both. Before, the socket's end raised inside the read loop and both were lost ("the
connection closed before the command's exit status arrived")."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import socket
import threading

from kubernetes import client
from websocket import ABNF

from gryvia_cli.kube.remote import STATUS, STDOUT, RemoteAccess

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455, section 1.3


def _serve_once(listener: socket.socket, frames: list[bytes]) -> None:
    """Accept one WebSocket upgrade, send `frames` (each: channel byte + data) and shut the
    TCP connection without a close frame."""
    conn, _ = listener.accept()
    with conn:
        request = b""
        while b"\r\n\r\n" not in request:
            request += conn.recv(4096)
        headers = dict(
            line.split(": ", 1) for line in request.decode().split("\r\n")[1:] if ": " in line
        )
        key = headers["Sec-WebSocket-Key"]
        accept = base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()
        conn.sendall(
            (
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n"
                "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n"
            ).encode()
        )
        # all at once, then the end: they arrive together, as on a loaded machine
        conn.sendall(b"".join(ABNF(1, 0, 0, 0, ABNF.OPCODE_BINARY, 0, f).format() for f in frames))
        conn.shutdown(socket.SHUT_RDWR)


def test_the_output_and_status_sent_before_the_connection_drops_are_delivered() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    status = {"status": "Success", "metadata": {}}
    frames = [bytes([STDOUT]) + b"fed\n", bytes([STATUS]) + json.dumps(status).encode()]
    server = threading.Thread(target=_serve_once, args=(listener, frames), daemon=True)
    server.start()
    remote = RemoteAccess.__new__(RemoteAccess)
    host = f"http://127.0.0.1:{listener.getsockname()[1]}"
    remote.core = client.CoreV1Api(client.ApiClient(client.Configuration(host=host)))
    out, err = io.BytesIO(), io.BytesIO()

    ended = remote.exec(
        "ns", "pod", "main", ["head", "-n", "1"], tty=False, stdin=None, stdout=out, stderr=err
    )

    server.join(5)
    listener.close()
    assert ended == status
    assert (out.getvalue(), err.getvalue()) == (b"fed\n", b"")
