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
import time
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

    def forward(
        self,
        namespace: str,
        pod: str,
        port: int,
        conn: socket.socket,
        *,
        on_wait: Callable[[], None] | None = None,
    ) -> None:
        """Carry one local connection `conn` to `port` of `namespace/pod` until either side
        closes; closes `conn`. While nothing listens on the pod's port yet (the pod side
        refuses), the stream is opened again for up to LISTEN_WAIT_S (`on_wait` is called
        before each retry) and what the client sent is replayed. Raises GryviaError when the
        stream cannot be opened or the server reported an error for it (the connection is
        closed then too)."""
        from gryvia_cli.core.podexec import forward_retry_delay

        upstream = _Upstream(conn)
        threading.Thread(target=upstream.run, daemon=True).start()
        started, attempt = time.monotonic(), 0
        try:
            while True:
                error, answered = self._forward_once(namespace, pod, port, conn, upstream)
                if not error:
                    return
                delay = forward_retry_delay(
                    error, answered=answered, waited_s=time.monotonic() - started, attempt=attempt
                )
                if delay is None:
                    raise GryviaError(error.strip())
                if on_wait is not None:
                    on_wait()
                time.sleep(delay)
                attempt += 1
        finally:
            with contextlib.suppress(OSError):  # wakes the upstream thread's recv, sends FIN
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    def _forward_once(
        self, namespace: str, pod: str, port: int, conn: socket.socket, upstream: _Upstream
    ) -> tuple[str, bool]:
        """One stream for `conn`: (the server's error for it or "", whether it cannot be
        replayed: the pod sent something, or the client more than _Upstream keeps)."""
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
        answered = False
        try:
            upstream.attach(remote)
            try:
                while data := remote.recv(CHUNK):
                    if not answered:
                        answered = True
                        upstream.answered()
                    conn.sendall(data)
            except OSError:
                pass
            error = str(pf.error(port) or "")  # e.g. nothing listens on that port in the pod
            if not error:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_WR)
                upstream.done.wait(1.0)
        finally:
            upstream.detach(remote)
            remote.close()
            pf.close()
        return error, answered or not upstream.keep


class _Upstream:
    """Copies a local connection to the stream it is attached to (one thread for the
    connection's whole life, across retried streams); keeps what it sent until the pod
    answers, so a new stream can be given it again."""

    KEEP_LIMIT = 1024 * 1024

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.remote: Any = None
        self.sent = bytearray()
        self.keep = True
        self.ended = False
        self.done = threading.Event()

    def run(self) -> None:
        """Read the local connection until its end, sending to the attached stream."""
        try:
            while data := self.conn.recv(CHUNK):
                with self.lock:
                    if self.keep:
                        self.sent += data
                        self.keep = len(self.sent) <= self.KEEP_LIMIT
                    if self.remote is not None:
                        with contextlib.suppress(OSError):
                            self.remote.sendall(data)
        except OSError:
            pass
        with self.lock:
            self.ended = True
            if self.remote is not None:
                with contextlib.suppress(OSError):
                    self.remote.shutdown(socket.SHUT_WR)
        self.done.set()

    def attach(self, remote: Any) -> None:
        """Send to `remote` from now on, after what was sent so far (a replay)."""
        with self.lock:
            self.remote = remote
            with contextlib.suppress(OSError):
                if self.sent:
                    remote.sendall(bytes(self.sent))
                if self.ended:
                    remote.shutdown(socket.SHUT_WR)

    def answered(self) -> None:
        """The pod answered: nothing will be replayed, stop keeping."""
        with self.lock:
            self.keep = False
            self.sent.clear()

    def detach(self, remote: Any) -> None:
        """Stop sending to `remote`."""
        with self.lock:
            if self.remote is remote:
                self.remote = None


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


def _reason(exc: Any) -> str:
    try:
        return str(json.loads(exc.body).get("message") or exc.reason)
    except (TypeError, ValueError, AttributeError):
        return str(exc.reason)
