"""The exporter's HTTP side: `/metrics` in dcgm-exporter's format, `/health` for probes."""

from __future__ import annotations

import logging
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol

from gryvia_operator.api.dcgm import GpuReading, render

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""Prometheus's text exposition format, as dcgm-exporter serves it."""

log = logging.getLogger(__name__)


class Source(Protocol):
    """Where readings come from: one `GpuReading` per GPU of the machine, read on each scrape."""

    def read(self) -> list[GpuReading]:
        """Return the GPUs' current values; raises OSError or RuntimeError when it cannot."""
        ...


def parse_address(text: str) -> tuple[str, int]:
    """(host, port) of `HOST:PORT` (`:9400`: every address); ValueError naming the fix."""
    host, _, port = text.rpartition(":")
    if not port.isdigit():
        raise ValueError(f"--address {text!r}: give HOST:PORT, e.g. :9400")
    return host or "0.0.0.0", int(port)


def serve(source: Source, host: str, port: int) -> None:
    """Serve `source` on `host:port` (`make_server`) until SIGTERM or SIGINT."""
    server = make_server(source, host, port)

    def stop(*_: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        server.server_close()


def make_server(source: Source, host: str, port: int) -> ThreadingHTTPServer:
    """An HTTP server (not yet serving) for `source` on `host:port` (port 0: any free one).

    GET /metrics reads the source once, under a lock (sources keep state between reads), and
    answers in dcgm-exporter's format; a failed read answers 503 with the reason, so the
    scraper records the target as down rather than its GPUs as idle. GET /health answers 200.
    Raises OSError when the address cannot be bound.
    """
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] == "/health":
                self._answer(200, "ok\n")
                return
            if self.path.split("?")[0] != "/metrics":
                self._answer(404, "not found: try /metrics\n")
                return
            try:
                with lock:
                    text = render(source.read())
            except (OSError, RuntimeError) as exc:
                self._answer(503, f"cannot read the GPUs: {exc}\n")
                return
            self._answer(200, text, CONTENT_TYPE)

        def _answer(self, code: int, body: str, kind: str = "text/plain") -> None:
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            log.debug(format, *args)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
