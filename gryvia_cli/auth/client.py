"""The OIDC client of `gryvia login` and `gryvia auth token`, over `httpx`: discovery, the
device authorization grant (RFC 8628), authorization code with PKCE on a loopback redirect
(RFC 7636, RFC 8252 section 7.3), and the refresh-token grant.
"""

from __future__ import annotations

import secrets
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import httpx

from gryvia_cli.core.oidc import (
    DEFAULT_SCOPES,
    OidcError,
    StoredLogin,
    device_poll_interval,
    pkce_challenge,
    token_expiry,
)

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


@dataclass(frozen=True)
class Issuer:
    """An OIDC issuer URL, the client id registered there, and an optional CA file (PEM) that
    verifies its TLS certificate (None: the system's trust store)."""

    url: str
    client_id: str
    ca_file: str | None = None

    def http(self) -> httpx.Client:
        """An httpx client verifying the issuer with `ca_file`, 15-second timeouts."""
        trust = ssl.create_default_context(cafile=self.ca_file) if self.ca_file else True
        return httpx.Client(verify=trust, timeout=15.0)

    def discover(self) -> dict[str, Any]:
        """The issuer's discovery document (`/.well-known/openid-configuration`).

        Raises OidcError when it is unreachable, not JSON, or names another issuer.
        """
        url = self.url.rstrip("/") + "/.well-known/openid-configuration"
        doc = _json_reply(lambda c: c.get(url), self, f"reading {url}")
        if doc.get("issuer") != self.url:
            raise OidcError(
                f"{url} names issuer {doc.get('issuer')!r}, not {self.url!r}",
                hint="pass --issuer exactly as the issuer writes it",
            )
        return doc


@dataclass(frozen=True)
class DevicePrompt:
    """What the user must do for a device login (RFC 8628 section 3.2), and how to poll."""

    device_code: str
    user_code: str
    verification_uri: str
    verification_uri_complete: str
    expires_in: float
    interval: float


def _json_reply(
    send: Callable[[httpx.Client], httpx.Response], issuer: Issuer, step: str
) -> dict[str, Any]:
    try:
        with issuer.http() as http:
            reply = send(http)
    except httpx.HTTPError as exc:
        raise OidcError(
            f"{step} failed: {exc}",
            hint="check --issuer, --ca-file and that the issuer is reachable",
        ) from None
    try:
        data = reply.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise OidcError(f"{step}: the issuer answered HTTP {reply.status_code}, not JSON")
    data["_status"] = reply.status_code
    return data


def _refused(step: str, data: dict[str, Any]) -> OidcError:
    detail = data.get("error_description") or data.get("error") or f"HTTP {data['_status']}"
    return OidcError(f"{step}: the issuer refused: {detail}")


def start_device(
    issuer: Issuer, discovery: dict[str, Any], scopes: tuple[str, ...] = DEFAULT_SCOPES
) -> DevicePrompt:
    """Ask for a device code at the discovery's `device_authorization_endpoint`.

    Raises OidcError when the issuer has none or refuses.
    """
    endpoint = discovery.get("device_authorization_endpoint")
    if not endpoint:
        raise OidcError(f"issuer {issuer.url} offers no device authorization endpoint")
    form = {"client_id": issuer.client_id, "scope": " ".join(scopes)}
    data = _json_reply(lambda c: c.post(endpoint, data=form), issuer, "device authorization")
    if data["_status"] != 200 or "device_code" not in data:
        raise _refused("device authorization", data)
    uri = data.get("verification_uri") or data.get("verification_url") or ""
    return DevicePrompt(
        device_code=data["device_code"],
        user_code=data["user_code"],
        verification_uri=uri,
        verification_uri_complete=data.get("verification_uri_complete") or uri,
        expires_in=float(data.get("expires_in") or 300),
        interval=float(data.get("interval") or 5),
    )


def poll_device(
    issuer: Issuer,
    discovery: dict[str, Any],
    prompt: DevicePrompt,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Poll the token endpoint until the user approves `prompt`; return the token reply.

    Raises OidcError when the user denies, the code expires or the issuer refuses.
    """
    form = {"grant_type": DEVICE_GRANT, "device_code": prompt.device_code}
    form["client_id"] = issuer.client_id
    deadline = clock() + prompt.expires_in
    interval = prompt.interval
    while clock() < deadline:
        sleep(interval)
        data = _json_reply(
            lambda c: c.post(discovery["token_endpoint"], data=form), issuer, "device login"
        )
        if data["_status"] == 200 and "id_token" in data:
            return data
        if data.get("error") not in ("authorization_pending", "slow_down"):
            raise _refused("device login", data)
        interval = device_poll_interval(data, interval)
    raise OidcError("device login: the code expired before it was approved", hint="log in again")


class _Callback(BaseHTTPRequestHandler):
    """Receives the loopback redirect of the authorization-code flow."""

    result: dict[str, str]
    done: threading.Event

    def do_GET(self) -> None:
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
        if "code" not in query and "error" not in query:
            self.send_response(404)
            self.end_headers()
            return
        type(self).result.update(query)
        ok = "code" in query
        self.send_response(200 if ok else 400)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.end_headers()
        self.wfile.write(
            b"Logged in to Gryvia: you can close this tab."
            if ok
            else b"Login failed: see the terminal."
        )
        type(self).done.set()

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the terminal shows the outcome."""


def pkce_login(
    issuer: Issuer,
    discovery: dict[str, Any],
    show: Callable[[str], None],
    *,
    scopes: tuple[str, ...] = DEFAULT_SCOPES,
    ports: tuple[int, ...] = (8000, 18000),
    timeout: float = 300.0,
) -> dict[str, Any]:
    """Authorization code with PKCE: serve a redirect `http://127.0.0.1:PORT/callback` on the
    first free port of `ports` (0: any; issuers that match redirect URIs exactly, as Dex does,
    list 8000 and 18000 like kubelogin), call `show(url)` with the authorization URL to open,
    exchange the code; return the token reply.

    Raises OidcError when no port is free, on a denied login, a state mismatch, a refused
    exchange or after `timeout` seconds without a redirect.
    """
    verifier = secrets.token_urlsafe(48)
    state = secrets.token_urlsafe(16)
    handler: type[_Callback] = type(
        "Callback", (_Callback,), {"result": {}, "done": threading.Event()}
    )
    server = _bind(handler, ports)
    redirect = f"http://127.0.0.1:{server.server_address[1]}/callback"
    query = {
        "response_type": "code",
        "client_id": issuer.client_id,
        "redirect_uri": redirect,
        "scope": " ".join(scopes),
        "state": state,
        "code_challenge": pkce_challenge(verifier),
        "code_challenge_method": "S256",
    }
    url = discovery["authorization_endpoint"] + "?" + urllib.parse.urlencode(query)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        show(url)
        if not handler.done.wait(timeout):
            raise OidcError(f"no login arrived at {redirect} within {timeout:.0f}s")
    finally:
        server.shutdown()
        server.server_close()
    result = handler.result
    if "error" in result:
        raise OidcError(f"login refused: {result.get('error_description') or result['error']}")
    if result.get("state") != state:
        raise OidcError("login refused: the redirect's state does not match this login")
    form = {
        "grant_type": "authorization_code",
        "code": result["code"],
        "redirect_uri": redirect,
        "client_id": issuer.client_id,
        "code_verifier": verifier,
    }
    data = _json_reply(
        lambda c: c.post(discovery["token_endpoint"], data=form), issuer, "code exchange"
    )
    if data["_status"] != 200 or "id_token" not in data:
        raise _refused("code exchange", data)
    return data


def _bind(handler: type[_Callback], ports: tuple[int, ...]) -> HTTPServer:
    for port in ports:
        try:
            return HTTPServer(("127.0.0.1", port), handler)
        except OSError:
            continue
    raise OidcError(
        f"no loopback port for the login redirect is free (tried {', '.join(map(str, ports))})",
        hint="free one, or pass --callback-port PORT (0: any, if the issuer allows it)",
    )


def refresh(issuer: Issuer, discovery: dict[str, Any], refresh_token: str) -> dict[str, Any]:
    """Redeem `refresh_token` at the token endpoint; return the token reply.

    Raises OidcError when the issuer refuses (revoked or expired: log in again).
    """
    form = {
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "client_id": issuer.client_id,
    }
    data = _json_reply(lambda c: c.post(discovery["token_endpoint"], data=form), issuer, "refresh")
    if data["_status"] != 200 or "id_token" not in data:
        err = _refused("refreshing the ID token", data)
        err.hint = f"log in again: gryvia login --issuer {issuer.url}"
        raise err
    return data


def stored_login(issuer: Issuer, reply: dict[str, Any], previous_refresh: str = "") -> StoredLogin:
    """The keyring record of token reply `reply` (a new refresh token replaces the previous
    one; an issuer that does not rotate keeps `previous_refresh`).

    Raises OidcError when the reply has no refresh token at all (no `offline_access`).
    """
    refresh_token = reply.get("refresh_token") or previous_refresh
    if not refresh_token:
        raise OidcError(
            f"issuer {issuer.url} sent no refresh token",
            hint="the client needs the offline_access scope and the refresh_token grant",
        )
    id_token = reply["id_token"]
    return StoredLogin(
        issuer.url, issuer.client_id, refresh_token, id_token, token_expiry(id_token)
    )
