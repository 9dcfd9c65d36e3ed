"""A job hook receiver for integration tests: an HTTP server on a host address that records
every POST, checks signatures, and can answer 503 or redirect."""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from gryvia_operator.api.signature import verify

if TYPE_CHECKING:
    from tests.conftest import SandboxHandle

SECRET = b"hook-test-secret"
"""The signing key of the hooks' Secret in the tests."""
ALLOWED = "127.0.0.2"
"""Receivers listen here; the operator runs with `--job-hook-allowed-cidr 127.0.0.2/32`."""


@dataclass
class Receiver:
    """Records every POST with the status it answered; answers 503 to the first `down`
    requests of each delivery id (or to all while `up` is False), then 204."""

    down: int = 0
    up: bool = True
    location: str = ""
    posts: list[tuple[dict[str, str], bytes, int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def answer(self, headers: dict[str, str], body: bytes) -> int:
        with self.lock:
            key = headers.get("x-gryvia-delivery", "")
            earlier = sum(1 for h, _, _ in self.posts if h.get("x-gryvia-delivery") == key)
            code = 307 if self.location else 204
            if not self.up or earlier < self.down:
                code = 503
            self.posts.append((headers, body, code))
            return code

    def received(self) -> list[tuple[dict[str, str], bytes, int]]:
        with self.lock:
            return list(self.posts)

    def accepted(self) -> list[dict[str, Any]]:
        """Bodies answered 2xx, each checked against its signature and headers."""
        out = []
        for headers, body, code in self.received():
            if code >= 300:
                continue
            stamp = headers["x-gryvia-timestamp"]
            assert verify(SECRET, stamp, body, headers["x-gryvia-signature"]), headers
            payload = json.loads(body)
            assert headers["user-agent"] == "gryvia-job-hook"
            assert headers["x-gryvia-delivery"] == payload["delivery"]
            assert headers["x-gryvia-event"] == payload["event"]
            out.append(payload)
        return out


def serve(box: Receiver, host: str) -> ThreadingHTTPServer:
    """Serve `box` on `host` (a free port, a daemon thread); sets `box.url`."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            code = box.answer({k.lower(): v for k, v in self.headers.items()}, body)
            self.send_response(code)
            if code == 307:
                self.send_header("Location", box.location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: Any) -> None:
            return

    server = ThreadingHTTPServer((host, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    box.url = f"http://{host}:{server.server_address[1]}/hooks"
    return server


def signed_hook(name: str, url: str, events: list[str]) -> list[dict[str, Any]]:
    """A Secret `hook-key` holding SECRET and a GryviaJobHook `name` signed with it, on
    `events` of every job of the namespace (5 attempts 1 s apart), to apply together."""
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "hook-key"},
        "data": {"secret": base64.b64encode(SECRET).decode()},
    }
    hook = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaJobHook",
        "metadata": {"name": name},
        "spec": {
            "events": events,
            "webhook": {"url": url, "secretRef": {"name": "hook-key"}, "timeoutSeconds": 5},
            "retry": {"attempts": 5, "backoffSeconds": 1},
        },
    }
    return [secret, hook]


def hook_status(sandbox: SandboxHandle, ns: str, name: str) -> dict[str, Any]:
    """The GryviaJobHook `ns/name`'s status."""
    found = sandbox.kubectl_json("get", "gryviajobhook", "-n", ns, name)
    return dict(found.get("status") or {})
