"""The light client's `http.client` transport (`kube.lighthttp`), its mechanics only: TLS
against a CA with a client certificate, keep-alive, gzip, the one retry, timeouts and how
their errors read. The server is a tiny stdlib HTTPS server started here (no Kubernetes:
every CLI integration test sends its requests through this transport to the sandbox's API
server)."""

from __future__ import annotations

import datetime
import gzip
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from gryvia_cli.errors import ClusterUnreachableError
from gryvia_cli.kube.errors import ConnectionLostError, TimedOutError, translate_transport_error
from gryvia_cli.kube.lighthttp import ConnectionPool, TransportError
from tests.support.ports import free_port


def _issue(
    tmp: Path, name: str, issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A P-256 certificate for `name` (CA when `issuer` is None; else with SAN 127.0.0.1),
    written as tmp/name.crt and tmp/name.key."""
    import ipaddress

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer[0].subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), True)
    )
    if issuer:
        san = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
        builder = builder.add_extension(san, False)
    cert = builder.sign(issuer[1] if issuer else key, hashes.SHA256())
    (tmp / f"{name}.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp / f"{name}.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert, key


@dataclass
class Server:
    """What the test server saw and how it behaves next."""

    url: str
    pki: Path
    peers: list[tuple[str, int]] = field(default_factory=list)
    clients: list[str] = field(default_factory=list)
    drop_next: int = 0
    """Close the connection without answering this many more requests."""
    busy_next: int = 0
    """Answer this many more requests 503 with `Retry-After: 0` (storage initializing)."""
    delay: threading.Event = field(default_factory=threading.Event)
    """Set: hold each answer until the test ends (a server that stopped answering)."""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    ca = _issue(tmp_path, "ca", None)
    _issue(tmp_path, "server", ca)
    _issue(tmp_path, "client", ca)
    _issue(tmp_path, "other-ca", None)
    port = free_port()
    state = Server(f"https://127.0.0.1:{port}", tmp_path)
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _answer(self) -> None:
            state.peers.append(self.client_address)
            cert = self.connection.getpeercert()  # type: ignore[attr-defined]
            state.clients.append(dict(x[0] for x in cert["subject"])["commonName"])
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            if state.drop_next:
                state.drop_next -= 1
                self.close_connection = True
                return
            if state.delay.is_set():
                release.wait(30)
            if state.busy_next:
                state.busy_next -= 1
                busy = b"storage is (re)initializing"
                self.send_response(503)
                self.send_header("Retry-After", "0")
                self.send_header("Content-Length", str(len(busy)))
                self.end_headers()
                self.wfile.write(busy)
                return
            body = f"{self.command} {self.path}".encode()
            zipped = "gzip" in (self.headers.get("Accept-Encoding") or "")
            body = gzip.compress(body) if zipped else body
            self.send_response(200)
            if zipped:
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Warning", '299 - "first"')
            self.send_header("Warning", '299 - "second"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=tmp_path / "ca.crt")
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_cert_chain(tmp_path / "server.crt", tmp_path / "server.key")
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield state
    release.set()
    httpd.shutdown()
    httpd.server_close()


def pool(server: Server, ca: str = "ca") -> ConnectionPool:
    pki = server.pki
    return ConnectionPool(
        server.url,
        ca_file=str(pki / f"{ca}.crt"),
        cert_file=str(pki / "client.crt"),
        key_file=str(pki / "client.key"),
    )


def test_a_verified_server_sees_the_client_certificate_and_one_kept_connection(
    server: Server,
) -> None:
    client = pool(server)
    first = client.request("GET", "/api/v1/pods?limit=5", {"Accept": "application/json"})
    assert (first.status, first.read()) == (200, b"GET /api/v1/pods?limit=5")
    assert first.headers.getlist("Warning") == ['299 - "first"', '299 - "second"']
    assert first.headers.get("warning") == '299 - "first"'
    zipped = client.request("POST", "/x", {"Accept-Encoding": "gzip"}, b"{}", (5.0, 5.0))
    assert zipped.data == b"POST /x"  # inflated
    assert server.clients == ["client", "client"]
    assert server.peers[0] == server.peers[1]  # keep-alive: the same connection


def test_a_connection_closed_unanswered_is_retried_once_for_reads_only(server: Server) -> None:
    client = pool(server)
    client.request("GET", "/warm", {})
    server.drop_next = 1
    assert client.request("GET", "/again", {}).data == b"GET /again"
    assert server.peers[-1] != server.peers[0]  # the retry came on a fresh connection
    server.drop_next = 2
    with pytest.raises(TransportError):
        client.request("GET", "/twice", {})
    server.drop_next = 1
    with pytest.raises(TransportError):  # a create may have happened: never sent twice
        client.request("POST", "/create", {}, b"{}")


def test_a_503_with_retry_after_is_asked_again_once_for_reads_only(server: Server) -> None:
    client = pool(server)
    server.busy_next = 1
    assert client.request("GET", "/apis/x", {}).data == b"GET /apis/x"
    server.busy_next = 2
    assert client.request("GET", "/apis/x", {}).status == 503  # once, as urllib3
    server.busy_next = 1
    assert client.request("POST", "/apis/x", {}, b"{}").status == 503  # never sent twice
    assert server.busy_next == 0


def test_an_untrusted_server_is_a_tls_error_not_a_lost_connection(server: Server) -> None:
    with pytest.raises(TransportError) as caught:
        pool(server, ca="other-ca").request("GET", "/", {})
    error = translate_transport_error(caught.value, server.url)
    assert type(error) is ClusterUnreachableError
    assert error.message == f"TLS verification of {server.url} failed"
    insecure = ConnectionPool(
        server.url,
        verify=False,
        cert_file=str(server.pki / "client.crt"),
        key_file=str(server.pki / "client.key"),
    )
    assert insecure.request("GET", "/", {}).status == 200


def test_refused_and_timed_out_read_as_lost_connections(server: Server) -> None:
    refused = ConnectionPool(f"https://127.0.0.1:{free_port()}", verify=False)
    with pytest.raises(TransportError) as caught:
        refused.request("GET", "/", {}, timeout=(2.0, 2.0))
    error = translate_transport_error(caught.value, "https://127.0.0.1")
    assert isinstance(error, ConnectionLostError) and not isinstance(error, TimedOutError)
    assert "Connection refused" in error.causes[0]
    server.delay.set()
    with pytest.raises(TransportError) as slow:
        pool(server).request("GET", "/", {}, timeout=(2.0, 0.3))
    assert isinstance(translate_transport_error(slow.value, server.url), TimedOutError)
