"""Serving a local port until Ctrl-C, one thread per connection: what `gryvia port-forward`
and `gryvia serve port-forward` share."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable

from gryvia_cli.output import info, warn

JOIN_SECONDS = 2.0
"""How long the open connections' threads get to finish after Ctrl-C."""


def forward_until_interrupted(
    listener: socket.socket, carry: Callable[[socket.socket], None], what: str
) -> None:
    """Accept connections on `listener` (closed at the end) and run `carry(conn)` for each on
    its own thread, until Ctrl-C; a failure of one connection is a warning naming `what` and
    ends only that connection. On Ctrl-C the open connections are shut down and their
    threads joined (up to JOIN_SECONDS) before returning: a daemon thread still writing to
    stderr at interpreter shutdown aborts the process (SIGABRT, "could not acquire lock for
    <stderr> at interpreter shutdown")."""
    stopping = threading.Event()
    carriers: list[tuple[threading.Thread, socket.socket]] = []

    def run(conn: socket.socket) -> None:
        try:
            carry(conn)
        except Exception as exc:  # one connection's failure ends only that connection
            if not stopping.is_set():
                warn(f"connection to {what}: {exc}")
            conn.close()

    try:
        with listener:
            while True:
                conn, _ = listener.accept()
                thread = threading.Thread(target=run, args=(conn,), daemon=True)
                carriers[:] = [(t, c) for t, c in carriers if t.is_alive()]
                carriers.append((thread, conn))
                thread.start()
    except KeyboardInterrupt:
        stopping.set()
        for _, conn in carriers:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()
        deadline = time.monotonic() + JOIN_SECONDS
        for thread, _ in carriers:
            thread.join(max(0.0, deadline - time.monotonic()))
        info("stopped forwarding")
