"""Requests whose reply is read whole, sent with the standard library's `http.client`.

The light client (`kube.transport.StaticApiClient.fetch`) sends gets, lists, creates and
patches here instead of through urllib3, whose import (with its TLS set-up) costs about as
much as a whole `gryvia list jobs` should; watches and log streams keep urllib3's streaming
response. What is kept of urllib3 as the official client configures it (`PoolManager(
retries=1, ...)`): connections are reused (keep-alive) and shared between threads through a
small pool; the TLS context verifies the server against the kubeconfig's CA (or nothing with
`insecure-skip-tls-verify`) and the host name, and presents the client certificate; the
connect timeout also bounds the TLS handshake; a request whose connection fails before an
answer is sent once more on a fresh connection (urllib3's `Retry(total=1)`: connection
errors for every method, errors after the request went out only for idempotent methods);
a gzip body is inflated; an idempotent request answered 413, 429 or 503 with a
`Retry-After` of whole seconds is sent once more after that wait (urllib3's
`respect_retry_after_header`). Failures raise `TransportError`, whose `reason` is the socket, ssl
or `http.client` exception (`kube.errors.translate_transport_error` words it).
"""

from __future__ import annotations

import http.client
import select
import ssl
import sys
import threading
import time
import zlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"})
"""Methods resent after a failure that happened once the request was out (urllib3's
`Retry.DEFAULT_ALLOWED_METHODS`)."""


class TransportError(Exception):
    """A request that got no complete answer; `reason` is the underlying exception (an
    OSError such as ConnectionRefusedError, TimeoutError or ssl.SSLError, or an
    `http.client.HTTPException` such as RemoteDisconnected or IncompleteRead)."""

    def __init__(self, reason: BaseException) -> None:
        super().__init__(str(reason))
        self.reason = reason


class Headers:
    """A reply's headers, case-insensitive, with urllib3's `HTTPHeaderDict` reading methods
    (`get`, `getlist`), which `kube.replies` uses."""

    def __init__(self, message: http.client.HTTPMessage) -> None:
        self._message = message

    def get(self, name: str, default: Any = None) -> Any:
        """The first value of header `name`, else `default`."""
        return self._message.get(name, default)

    def getlist(self, name: str) -> list[str]:
        """Every value of header `name`, in order ([] when absent)."""
        return list(self._message.get_all(name) or [])


class LightResponse:
    """A reply read whole: `status`, `reason`, `headers` (`Headers`) and `data` (the body,
    inflated); `read()` returns `data`, as the official client's `RESTResponse` does."""

    def __init__(self, status: int, reason: str, headers: Headers, data: bytes) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.data = data

    def read(self) -> bytes:
        """The body (already read)."""
        return self.data


class ConnectionPool:
    """Keep-alive connections to one server (`https://host:port` or `http://...`), handed
    to one request at a time; at most `maxsize` idle ones are kept.

    `ca_file`, `cert_file` and `key_file` are PEM file paths (None: the system CAs / no
    client certificate); `verify=False` checks neither the certificate nor the host name.
    """

    def __init__(
        self,
        server: str,
        *,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        verify: bool = True,
        maxsize: int = 10,
    ) -> None:
        parts = urlsplit(server)
        self.https = parts.scheme == "https"
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if self.https else 80)
        self.prefix = parts.path.rstrip("/")
        self.ca_file, self.cert_file, self.key_file = ca_file, cert_file, key_file
        self.verify = verify
        self.maxsize = maxsize
        self._context: ssl.SSLContext | None = None
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def tls_context(self) -> ssl.SSLContext:
        """The TLS context of every connection, built on first use. Raises ssl.SSLError or
        OSError for unreadable certificate files."""
        with self._lock:
            if self._context is None:
                context = ssl.create_default_context(cafile=self.ca_file)
                if not self.verify:
                    context.check_hostname = False
                    context.verify_mode = ssl.CERT_NONE
                if self.cert_file:
                    context.load_cert_chain(self.cert_file, self.key_file)
                self._context = context
            return self._context

    def _take(self, fresh: bool) -> http.client.HTTPConnection:
        while not fresh:
            with self._lock:
                if not self._idle:
                    break
                conn = self._idle.pop()
            if not _dropped(conn):
                return conn
            conn.close()
        if self.https:
            return http.client.HTTPSConnection(self.host, self.port, context=self.tls_context())
        return http.client.HTTPConnection(self.host, self.port)

    def _give(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < self.maxsize:
                self._idle.append(conn)
                return
        conn.close()

    def request(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        timeout: tuple[float, float | None] | None = None,
    ) -> LightResponse:
        """Send `method target` (path and query, under the server's own path) and read the
        whole reply. `timeout` is (connect and handshake, each read) in seconds; None: no
        bound. Raises TransportError (see the module docstring for the one retry)."""
        connect_timeout, read_timeout = timeout if timeout is not None else (None, None)
        for attempt in (0, 1):
            conn = self._take(fresh=attempt > 0)
            connected = conn.sock is not None
            try:
                if not connected:
                    conn.timeout = connect_timeout
                    conn.connect()
                    connected = True
                if conn.sock is not None:
                    conn.sock.settimeout(read_timeout)
                conn.request(method, self.prefix + target, body=body, headers=dict(headers))
                reply = conn.getresponse()
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                if attempt == 0 and (not connected or method in IDEMPOTENT):
                    continue
                raise TransportError(exc) from None
            if "logging" in sys.modules:  # `-v` configured logging; never imported for this
                _log(method, target, reply.status, attempt)
            answer = self._finish(conn, reply)
            wait = _retry_after(answer) if attempt == 0 and method in IDEMPOTENT else None
            if wait is None:
                return answer
            time.sleep(wait)  # the server said when to ask again
        return answer

    def _finish(
        self, conn: http.client.HTTPConnection, reply: http.client.HTTPResponse
    ) -> LightResponse:
        try:
            data = reply.read()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise TransportError(exc) from None
        if reply.will_close:
            conn.close()
        else:
            self._give(conn)
        if data and (reply.getheader("Content-Encoding") or "").lower() == "gzip":
            try:
                data = zlib.decompress(data, 16 + zlib.MAX_WBITS)
            except zlib.error as exc:
                raise TransportError(exc) from None
        return LightResponse(reply.status, reply.reason, Headers(reply.msg), data)


RETRY_AFTER_STATUSES = frozenset({413, 429, 503})
"""Answers urllib3's `Retry` resends once after their `Retry-After` (`RETRY_AFTER_STATUS_CODES`,
`respect_retry_after_header`): a kube-apiserver whose storage is (re)initializing answers 503
with `Retry-After: 1` for a moment after a CRD is created."""


def _retry_after(answer: LightResponse) -> float | None:
    """Seconds to wait before sending an idempotent request again, when `answer` is one that
    says so with a `Retry-After` of whole seconds (at most 10 here); None: use the answer."""
    if answer.status not in RETRY_AFTER_STATUSES:
        return None
    value = str(answer.headers.get("Retry-After") or "").strip()
    return min(float(value), 10.0) if value.isdigit() else None


def _log(method: str, target: str, status: int, attempt: int) -> None:
    """A DEBUG line per request (shown with `-v`), as urllib3 writes one."""
    import logging

    retried = " (on a fresh connection)" if attempt else ""
    logging.getLogger(__name__).debug('"%s %s" %s%s', method, target, status, retried)


def _dropped(conn: http.client.HTTPConnection) -> bool:
    """True when an idle connection was closed by the server (its socket reads at once:
    EOF), as urllib3's `is_connection_dropped` checks before reusing one."""
    sock = conn.sock
    if sock is None:
        return True
    try:
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True
