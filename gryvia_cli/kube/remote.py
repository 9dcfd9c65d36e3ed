"""Exec and port-forward into pods: the official client's WebSocket streams (the API server's
`pods/exec` and `pods/portforward` subresources, the channel protocol kubectl speaks).

`RemoteAccess` opens the streams; nothing here reads a terminal or a local socket (the
caller passes callables and sockets in). Errors become GryviaErrors.
"""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from gryvia_cli.errors import GryviaError
from gryvia_cli.kube.config import ContextInfo

STDIN, STDOUT, STDERR, STATUS, RESIZE = 0, 1, 2, 3, 4
"""The channels of the exec stream."""
CHUNK = 32 * 1024


class RemoteAccess:
    """Exec and port-forward streams to one cluster context."""

    def __init__(self, kubeconfig: Path | None, context: ContextInfo) -> None:
        """Load the context's credentials into the official client (not connected yet).
        Raises KubeconfigError."""
        from kubernetes import client

        from gryvia_cli.kube.config import load_client_configuration

        cfg = load_client_configuration(kubeconfig, None if context.in_cluster else context.name)
        api = client.ApiClient(cfg)
        api.user_agent = "gryvia-cli"
        self.core = client.CoreV1Api(api)

    def _open(self, what: str, call: Callable[[], Any]) -> Any:
        from kubernetes.client.exceptions import ApiException
        from websocket import WebSocketException

        try:
            return call()
        except ApiException as exc:
            raise GryviaError(f"{what}: {exc.status} {_reason(exc)}") from None
        except (WebSocketException, OSError) as exc:
            raise GryviaError(f"{what}: {exc}") from None

    def exec(
        self,
        namespace: str,
        pod: str,
        container: str,
        command: Sequence[str],
        *,
        tty: bool,
        stdin: Callable[[], bytes] | None,
        stdout: BinaryIO,
        stderr: BinaryIO,
        size: Callable[[], tuple[int, int] | None] | None = None,
    ) -> dict[str, Any] | None:
        """Run `command` in `container` of `namespace/pod` and return the Status it ended
        with (None when the stream closed without one).

        `stdin`, when given, is called from a thread of its own for the next input (b"" at
        end of input, which closes the remote stdin). Output is written to `stdout` and
        `stderr` as it arrives (with `tty`, one stream: stdout). `size` gives the terminal's
        (columns, rows), sent at start and whenever it changes. Raises GryviaError when the
        stream cannot be opened.
        """
        from kubernetes.stream import stream
        from websocket import WebSocketException

        ws = self._open(
            f"exec in pod {namespace}/{pod}",
            lambda: stream(
                self.core.connect_get_namespaced_pod_exec,
                pod,
                namespace,
                container=container,
                command=list(command),
                stdin=stdin is not None,
                stdout=True,
                stderr=not tty,
                tty=tty,
                _preload_content=False,
                binary=True,
            ),
        )
        last_size: tuple[int, int] | None = None
        typed: queue.Queue[bytes] = queue.Queue()
        if stdin is not None:
            threading.Thread(target=_read_input, args=(stdin, typed), daemon=True).start()
        # One thread reads and writes the stream: an SSL socket must not be written by one
        # thread while another reads it.
        try:
            while ws.is_open():
                if size is not None and (now := size()) and now != last_size:
                    last_size = now
                    ws.write_channel(RESIZE, json.dumps({"Width": now[0], "Height": now[1]}))
                _send_input(ws, typed)
                ws.update(timeout=0.05)
                _deliver(ws, stdout, stderr)
        except (WebSocketException, OSError):
            # The server went away. It may have sent the last output and the exit status
            # first: the client buffers the frames it read before the socket's end raised.
            _deliver(ws, stdout, stderr)
        finally:
            ws.close()
        raw = ws.read_channel(STATUS)
        return json.loads(raw) if raw else None

    def forward(self, namespace: str, pod: str, port: int, conn: socket.socket) -> None:
        """Carry one local connection `conn` to `port` of `namespace/pod` until either side
        closes; closes `conn`. Raises GryviaError when the stream cannot be opened or the
        server reported an error for it (the connection is closed then too)."""
        from kubernetes.stream import portforward

        pf = self._open(
            f"port-forward to pod {namespace}/{pod} port {port}",
            lambda: portforward(
                self.core.connect_get_namespaced_pod_portforward,
                pod,
                namespace,
                ports=str(port),
            ),
        )
        remote = pf.socket(port)
        remote.setblocking(True)
        try:
            done = threading.Event()
            threading.Thread(target=_pipe, args=(conn, remote, done), daemon=True).start()
            _pipe(remote, conn, done)
            done.wait(1.0)
        finally:
            for sock in (conn, remote):
                sock.close()
            pf.close()
        if error := pf.error(port):  # e.g. nothing listens on that port in the pod
            raise GryviaError(str(error).strip())


def _read_input(read: Callable[[], bytes], typed: queue.Queue[bytes]) -> None:
    """Queue what `read` returns until its end (b"", queued too)."""
    while True:
        try:
            data = read()
        except (OSError, ValueError):
            data = b""
        typed.put(data)
        if not data:
            return


def _deliver(ws: Any, stdout: BinaryIO, stderr: BinaryIO) -> None:
    """Write the output the stream has buffered to `stdout` and `stderr`."""
    for channel, sink in ((STDOUT, stdout), (STDERR, stderr)):
        if data := ws.read_channel(channel):
            sink.write(data)
            sink.flush()


def _send_input(ws: Any, typed: queue.Queue[bytes]) -> None:
    """Send the queued input to the remote stdin; at its end (b""), close the remote stdin."""
    while True:
        try:
            data = typed.get_nowait()
        except queue.Empty:
            return
        if data:
            ws.write_stdin(data)
        else:
            ws.close_channel(STDIN)


def _pipe(src: socket.socket, dst: socket.socket, done: threading.Event) -> None:
    """Copy from `src` to `dst` until `src` ends; then end `dst`'s sending side."""
    try:
        while data := src.recv(CHUNK):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
        done.set()


def _reason(exc: Any) -> str:
    try:
        return str(json.loads(exc.body).get("message") or exc.reason)
    except (TypeError, ValueError, AttributeError):
        return str(exc.reason)
