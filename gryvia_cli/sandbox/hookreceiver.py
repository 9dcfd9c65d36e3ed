"""The demo's job-hook receiver: a local HTTP server on 127.0.0.3 that answers 204 to every
POST and logs one line per event (`<event> <namespace>/<name> <delivery>`).

`start(box)` runs it as a process of the sandbox (pid file `pids/hook-receiver.pid`, log
`logs/hook-receiver.log`), so `gryvia sandbox down` stops it with everything else. The
parent binds the socket on a free port and hands it to the child, so two sandboxes never race
for a port. The sandbox's operator allows exactly this address for hooks
(`--job-hook-allowed-cidr`, see `platform.start_operator`); other loopback addresses stay
refused by its SSRF guard.
"""

from __future__ import annotations

import json
import socket
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from gryvia_cli.sandbox import cluster

HOST = "127.0.0.3"
ALLOWED_CIDR = f"{HOST}/32"
"""The hook target range the sandbox's operator allows: the receiver's address alone."""
RECEIVER = "hook-receiver"


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            event = json.loads(body)
        except ValueError:
            event = {}
        line = "{} {}/{} {}".format(
            self.headers.get("X-Gryvia-Event", "-"),
            event.get("namespace", "-"),
            event.get("name", "-"),
            self.headers.get("X-Gryvia-Delivery", "-"),
        )
        print(line, flush=True)
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the event lines are the log."""


def url(box: cluster.Sandbox) -> str | None:
    """The running receiver's URL for `box` (`http://127.0.0.3:<port>/gryvia`), else None."""
    pid = box.pids().get(RECEIVER)
    where = box.workdir / f"{RECEIVER}.url"
    if pid is None or not cluster.pid_alive(pid) or not where.exists():
        return None
    return where.read_text().strip()


def start(box: cluster.Sandbox) -> str:
    """Start the receiver for `box` unless it runs; return its URL."""
    running = url(box)
    if running:
        return running
    sock = socket.create_server((HOST, 0))
    port = sock.getsockname()[1]
    argv = [sys.executable, "-m", "gryvia_cli.sandbox.hookreceiver", str(sock.fileno())]
    box.start(RECEIVER, argv, pass_fds=(sock.fileno(),))
    sock.close()
    address = f"http://{HOST}:{port}/gryvia"
    (box.workdir / f"{RECEIVER}.url").write_text(address)
    return address


def serve(fd: int) -> None:
    """Serve POSTs on the listening socket `fd` until killed."""
    server = HTTPServer((HOST, 0), _Handler, bind_and_activate=False)
    server.socket.close()
    server.socket = socket.socket(fileno=fd)
    server.serve_forever()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
