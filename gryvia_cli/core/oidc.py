"""OIDC login, pure parts: PKCE, ID-token claims, the stored login, the ExecCredential and the
kubeconfig user that calls `gryvia auth token`.

Sources: RFC 7636 (PKCE, S256), RFC 8628 (device authorization grant), OpenID Connect Core
(ID token claims), and Kubernetes' client.authentication.k8s.io/v1 ExecCredential.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from gryvia_cli.errors import GryviaError

EXEC_API_VERSION = "client.authentication.k8s.io/v1"
REFRESH_MARGIN = timedelta(seconds=60)
"""An ID token this close to its expiry is refreshed before it is handed out."""

DEFAULT_SCOPES = ("openid", "email", "groups", "profile", "offline_access")
"""Scopes `gryvia login` asks for: `groups` for the groups claim, `offline_access` for a
refresh token."""


class OidcError(GryviaError):
    """An OIDC step failed (issuer unreachable, login refused, token malformed, no login stored);
    the message says which step and how to recover."""


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of `verifier` (RFC 7636 section 4.2): base64url(sha256), no
    padding. `verifier` must be 43-128 unreserved characters (ValueError otherwise)."""
    if not 43 <= len(verifier) <= 128:
        raise ValueError("a PKCE verifier has 43 to 128 characters")
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def jwt_claims(token: str) -> dict[str, Any]:
    """The claims (payload) of JWT `token`, not verified: the API server verifies it; the
    client only reads `exp`, `email` and `groups` from a token its issuer just sent.

    Raises OidcError when `token` is not a JWT with a JSON object payload.
    """
    parts = token.split(".")
    if len(parts) != 3:
        raise OidcError("the issuer's id_token is not a JWT (expected three dot-separated parts)")
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload))
    except (binascii.Error, ValueError) as exc:
        raise OidcError(f"the issuer's id_token payload is not JSON: {exc}") from exc
    if not isinstance(claims, dict):
        raise OidcError("the issuer's id_token payload is not a JSON object")
    return claims


def token_expiry(token: str) -> datetime:
    """When ID token `token` expires (its `exp` claim, UTC). Raises OidcError without `exp`."""
    exp = jwt_claims(token).get("exp")
    if not isinstance(exp, int | float):
        raise OidcError("the issuer's id_token has no numeric 'exp' claim")
    return datetime.fromtimestamp(exp, UTC)


@dataclass(frozen=True)
class StoredLogin:
    """What `gryvia login` keeps in the keyring for one issuer and client: the refresh token
    and the current ID token with its expiry (UTC)."""

    issuer: str
    client_id: str
    refresh_token: str
    id_token: str
    expiry: datetime

    def to_json(self) -> str:
        """Serialised for the keyring (one secret per issuer and client)."""
        return json.dumps(
            {
                "issuer": self.issuer,
                "clientId": self.client_id,
                "refreshToken": self.refresh_token,
                "idToken": self.id_token,
                "expiry": self.expiry.isoformat(),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> StoredLogin:
        """Parse `to_json`'s output. Raises OidcError when it is malformed."""
        try:
            data = json.loads(text)
            return cls(
                data["issuer"],
                data["clientId"],
                data["refreshToken"],
                data["idToken"],
                datetime.fromisoformat(data["expiry"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise OidcError(
                "the stored login is unreadable", hint="run 'gryvia login' again"
            ) from exc

    def fresh(self, now: datetime) -> bool:
        """True while the ID token stays valid for more than `REFRESH_MARGIN` after `now`."""
        return self.expiry - now > REFRESH_MARGIN


def keyring_key(issuer: str, client_id: str) -> str:
    """The keyring user name of a login: `<client id>@<issuer URL>`."""
    return f"{client_id}@{issuer}"


def exec_credential(token: str, expiry: datetime) -> dict[str, Any]:
    """The ExecCredential `gryvia auth token` prints: the bearer `token` and its RFC 3339
    `expirationTimestamp` (UTC, seconds), so kubectl and the client cache it until then."""
    stamp = expiry.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "kind": "ExecCredential",
        "apiVersion": EXEC_API_VERSION,
        "spec": {"interactive": False},
        "status": {"token": token, "expirationTimestamp": stamp},
    }


def exec_user(
    command: str, prefix_args: list[str], issuer: str, client_id: str, ca_file: str | None
) -> dict[str, Any]:
    """The kubeconfig `user` entry whose exec plugin is `gryvia auth token` for this issuer.

    `command` and `prefix_args` run gryvia (e.g. `/usr/bin/gryvia`, [] or `python`, ['-m',
    'gryvia_cli']). No token is written: the plugin reads the keyring on every call.
    """
    args = [*prefix_args, "auth", "token", "--issuer", issuer, "--client-id", client_id]
    if ca_file:
        args += ["--ca-file", ca_file]
    return {
        "exec": {
            "apiVersion": EXEC_API_VERSION,
            "command": command,
            "args": args,
            "interactiveMode": "Never",
            "provideClusterInfo": False,
            "installHint": "gryvia is needed to log in: pip install gryvia, then 'gryvia login'",
        }
    }


def device_poll_interval(reply: dict[str, Any], current: float) -> float:
    """Seconds to wait before the next device-token poll after error reply `reply` (RFC 8628
    section 3.5): `slow_down` adds 5 s, anything else keeps `current`."""
    return current + 5 if reply.get("error") == "slow_down" else current
