"""The sandbox's OIDC issuer (`gryvia sandbox up --oidc`): Dex on a loopback port, trusted by
the sandbox's kube-apiserver.

Dex (its server package with a small main, `tools/k8s/dex/main.go`, built by
`tools/k8s/build-dex.sh`) serves HTTPS on 127.0.0.1 with a certificate minted here by a CA of
its own, keeps everything in memory, and knows the static demo users of `USERS`. The
API server trusts it through a structured authentication configuration (`--authentication-config`,
apiserver.config.k8s.io/v1): usernames come from the `email` claim and groups from the `groups`
claim, both prefixed `oidc:`. Dex's files and pid live in `<sandbox home>/oidc/<name>/`, outside
kwokctl's folder, because Dex starts before the API server does.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import ssl
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from gryvia_cli.sandbox import binaries
from gryvia_cli.sandbox.certs import loopback_certificates
from gryvia_cli.sandbox.ports import free_port
from gryvia_cli.sandbox.sandboxes import SandboxError, home, pid_alive, start_logged

CLIENT_ID = "gryvia"
"""Dex's one static client: public (no secret), as for a CLI."""

PKCE_PORTS = (8000, 18000)
"""Loopback ports of the PKCE redirect (`gryvia login --flow pkce` tries them in order, as
kubelogin does). Dex matches a public client's redirect URIs exactly once it lists any, and at
the pinned version it must list the device flow's absolute callback URI (a public client
without redirect URIs is refused `Unregistered redirect_uri` at that step), so the loopback
redirects are listed with fixed ports."""

CLAIM_PREFIX = "oidc:"
"""Prefix the API server puts before OIDC usernames and groups (`oidc:alice@example.com`)."""


@dataclass(frozen=True)
class DemoUser:
    """A static Dex user: e-mail (the username claim), demo password, its bcrypt hash, groups."""

    email: str
    password: str
    bcrypt_hash: str
    groups: tuple[str, ...]
    user_id: str


USERS = (
    # Hashes precomputed (cost 10) for the fixed demo passwords, so the sandbox needs no bcrypt
    # dependency; they are demo credentials of a loopback-only issuer, documented in docs/oidc.md.
    DemoUser(
        "alice@example.com",
        "alice-password",
        "$2a$10$/SI.ZdfUAw.3ZU5j91pO6eCxnWjpA8zKbbU7kbMzYLxp/1puBH2u2",
        ("vision",),
        "2d7ba0b1-8a0b-4c57-9d57-2b0a1c1e0a11",
    ),
    DemoUser(
        "bob@example.com",
        "bob-password",
        "$2a$10$JGAJNLhI.BS0lU7bnmqB7eaeCKC1g.GRWFSTuqbPNjD/8p8GgfCKG",
        ("nlp",),
        "6b0f3c3e-61a4-4d0e-8f55-0e3c2d7b9b22",
    ),
    DemoUser(
        "admin@example.com",
        "admin-password",
        "$2a$10$NgraKLDi/ASZU/3NM8W77uW6A5i10HMBRHT9rQVVxthrLjEmVj.Yq",
        ("gryvia-admins",),
        "9c1d2e4f-7a3b-4b8e-a1c2-3d4e5f6a7b33",
    ),
)


@dataclass(frozen=True)
class OidcIssuer:
    """A running sandbox issuer: its URL, client id and the CA file that verifies it."""

    sandbox: str
    issuer: str
    client_id: str
    ca_file: Path

    def login_command(self) -> str:
        """The `gryvia login` line for this issuer."""
        return (
            f"gryvia login --issuer {self.issuer} --client-id {self.client_id} "
            f"--ca-file {self.ca_file}"
        )


def folder(name: str) -> Path:
    """Where sandbox `name` keeps Dex's configuration, certificates, log and pid."""
    return home() / "oidc" / name


def dex_config(issuer: str, port: int, cert: Path, key: Path) -> dict[str, Any]:
    """The configuration of the sandbox's Dex (`tools/k8s/dex/main.go`, JSON): HTTPS on
    127.0.0.1:`port` only (no telemetry or gRPC listener), memory storage, the password
    database with `USERS`, the public client `CLIENT_ID`, no approval screen, one-hour ID
    tokens, device and authorization-code grants with refresh tokens."""
    return {
        "issuer": issuer,
        "listen": f"127.0.0.1:{port}",
        "tlsCert": str(cert),
        "tlsKey": str(key),
        "idTokens": "1h",
        "deviceRequests": "5m",
        "skipApprovalScreen": True,
        "responseTypes": ["code"],
        "grantTypes": [
            "authorization_code",
            "refresh_token",
            "urn:ietf:params:oauth:grant-type:device_code",
        ],
        "clients": [
            {
                "id": CLIENT_ID,
                "name": "Gryvia",
                "public": True,
                "redirectURIs": [
                    urlsplit(issuer).path + "/device/callback",
                    *(f"http://127.0.0.1:{port}/callback" for port in PKCE_PORTS),
                ],
            }
        ],
        "passwords": [
            {
                "email": u.email,
                "hash": u.bcrypt_hash,
                "username": u.email.split("@")[0],
                "userID": u.user_id,
                "groups": list(u.groups),
            }
            for u in USERS
        ],
    }


def authentication_config(issuer: str, ca_pem: str) -> dict[str, Any]:
    """kube-apiserver's AuthenticationConfiguration trusting `issuer` (audience `CLIENT_ID`,
    CA `ca_pem`), username from `email` and groups from `groups`, both prefixed `CLAIM_PREFIX`."""
    return {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "AuthenticationConfiguration",
        "jwt": [
            {
                "issuer": {
                    "url": issuer,
                    "audiences": [CLIENT_ID],
                    "certificateAuthority": ca_pem,
                },
                "claimMappings": {
                    "username": {"claim": "email", "prefix": CLAIM_PREFIX},
                    "groups": {"claim": "groups", "prefix": CLAIM_PREFIX},
                },
            }
        ],
    }


def apiserver_patch(auth_config: Path) -> dict[str, Any]:
    """kwokctl's `componentsPatches` entry giving kube-apiserver `--authentication-config`."""
    return {
        "name": "kube-apiserver",
        "extraArgs": [{"key": "authentication-config", "value": str(auth_config)}],
    }


def _mint(folder_: Path) -> tuple[Path, Path, Path]:
    """Write a CA and a 127.0.0.1 serving certificate (ECDSA P-256, valid 30 days) signed by
    it; return (ca, cert, key) paths. The key file gets mode 0600."""
    made = loopback_certificates(
        "gryvia-sandbox-oidc-ca", "127.0.0.1", dt.datetime.now(dt.UTC), days=30
    )
    paths = (folder_ / "ca.crt", folder_ / "tls.crt", folder_ / "tls.key")
    for path, pem in zip(paths, made, strict=True):
        path.write_bytes(pem)
    paths[2].chmod(0o600)
    return paths


def start(name: str, *, timeout: float = 30.0) -> tuple[OidcIssuer, dict[str, Any]]:
    """Start Dex for sandbox `name`; return the issuer and the kwokctl components patch that
    makes the API server trust it.

    Waits until the issuer's discovery document is served. Raises BinariesMissingError when
    Dex is not built, SandboxError when it does not serve within `timeout` seconds (the tail
    of its log says why); the caller stops it (`stop`) on any failure.
    """
    dex = binaries.path_of("dex")
    stop(name)
    where = folder(name)
    where.mkdir(parents=True)
    ca, cert, key = _mint(where)
    port = free_port()
    issuer = f"https://127.0.0.1:{port}/dex"
    (where / "dex.json").write_text(json.dumps(dex_config(issuer, port, cert, key), indent=2))
    auth = where / "authentication-config.yaml"
    auth.write_text(yaml.safe_dump(authentication_config(issuer, ca.read_text()), sort_keys=False))
    argv = [str(dex), "serve", str(where / "dex.json")]
    proc = start_logged(argv, where / "dex.log", where / "dex.pid")
    found = OidcIssuer(name, issuer, CLIENT_ID, ca)
    _wait_served(found, proc, where / "dex.log", timeout)
    (where / "issuer.json").write_text(
        json.dumps({"issuer": issuer, "clientId": CLIENT_ID, "caFile": str(ca)}, indent=2)
    )
    return found, apiserver_patch(auth)


def _wait_served(
    found: OidcIssuer, proc: subprocess.Popen[bytes], log: Path, timeout: float
) -> None:
    import httpx

    url = found.issuer + "/.well-known/openid-configuration"
    trust = ssl.create_default_context(cafile=str(found.ca_file))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, verify=trust, timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    tail = "\n".join(log.read_text(errors="replace").strip().splitlines()[-5:])
    raise SandboxError(f"Dex did not serve {url} within {timeout:.0f}s:\n{tail}")


def load(name: str) -> OidcIssuer | None:
    """The issuer of sandbox `name`, or None when it was started without `--oidc`."""
    try:
        data = json.loads((folder(name) / "issuer.json").read_text())
    except (OSError, ValueError):
        return None
    return OidcIssuer(name, data["issuer"], data["clientId"], Path(data["caFile"]))


def stop(name: str) -> None:
    """Stop sandbox `name`'s Dex (SIGTERM, SIGKILL after 5 s) and delete its folder."""
    where = folder(name)
    pid_file = where / "dex.pid"
    with contextlib.suppress(OSError, ValueError):
        pid = int(pid_file.read_text().strip())
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
    shutil.rmtree(where, ignore_errors=True)
