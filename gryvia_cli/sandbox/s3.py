"""A real S3-compatible server in a sandbox (`gryvia sandbox up --s3`): a dataset source.

The server is SeaweedFS (`weed mini`: master, volume server, filer and S3 gateway in one
process; built from the Go module proxy by `make s3-bin`), listening on 127.0.0.1, every
port picked free (the S3 gateway's among them), WebDAV, the admin UI, the Iceberg and Lance
endpoints and telemetry off, data in `<workdir>/s3/data/`. With a pod network it also
listens on the bridge's gateway address, which pods reach (they cannot reach the host's
loopback): `S3Credentials.pod_endpoint`. Requests are signed (AWS SigV4)
with one admin key pair generated at start (SeaweedFS takes `AWS_ACCESS_KEY_ID` and
`AWS_SECRET_ACCESS_KEY` from its environment as an admin identity). The endpoint and keys are
kept in `<workdir>/s3/credentials.json` (mode 0600) and, as shell lines a user can `source`,
`<workdir>/s3/env`; `load` reads them back. A client configured by environment alone:
`client_env` (AWS SDKs and boto3), `rclone_env` (rclone's `RCLONE_CONFIG_<REMOTE>_*`).

`mini_argv`, `client_env` and `rclone_env` are pure; `start` does the I/O.
"""

from __future__ import annotations

import json
import os
import secrets
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from gryvia_cli.sandbox import binaries, podnet
from gryvia_cli.sandbox.ports import free_port
from gryvia_cli.sandbox.sandboxes import Progress, Sandbox, SandboxError

S3 = "s3"
"""The sandbox component's name (its pid and log) and its folder under the workdir."""
EXECUTABLE = "weed"
REGION = "us-east-1"
"""The region clients sign for (SeaweedFS accepts any; SDKs need one)."""
MINI_PORTS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
    "webdav.port",
    "admin.port",
    "admin.port.grpc",
)
"""The `weed mini` flags naming a port; each gets a free one (its defaults are fixed numbers,
which two sandboxes at once would share)."""


@dataclass(frozen=True)
class S3Credentials:
    """Where the sandbox's S3 server listens and the key pair that signs requests to it.

    `endpoint`: `http://127.0.0.1:PORT`; `region`: the region to sign for."""

    endpoint: str
    access_key_id: str
    secret_access_key: str
    region: str = REGION
    pod_endpoint: str = ""
    """The endpoint pods reach from their network namespaces (`http://<bridge gateway>:PORT`;
    pods cannot reach the host's loopback); `endpoint` when the sandbox has no pod network."""


def binary() -> Path:
    """Where `weed` is built (it may not be there yet)."""
    return binaries.bin_dir() / EXECUTABLE


def missing() -> str:
    """Why the S3 server cannot run here ('' when it can)."""
    if not os.access(binary(), os.X_OK):
        return "SeaweedFS (weed) is not built: run 'make s3-bin' (several minutes, once)"
    return ""


def folder(box: Sandbox) -> Path:
    """The S3 server's folder in `box`: `data/`, `credentials.json`, `env`."""
    return box.workdir / S3


def mini_argv(exe: str, data: Path, ports: dict[str, int], address: str = "127.0.0.1") -> list[str]:
    """`weed mini` with data in `data` and `ports` (flag of `MINI_PORTS` -> port); WebDAV,
    admin UI, Iceberg, Lance, the admin legacy port and telemetry off. Unix sockets (filer,
    S3) go in `data`, not /tmp. It listens on 127.0.0.1; with `address` another address of
    this host (the pod bridge's gateway), on `address` and, as `weed mini` does when `-ip` is
    not loopback and `-ip.bind` is empty, on 127.0.0.1 too."""
    loopback = address == "127.0.0.1"
    return [
        exe,
        "mini",
        f"-dir={data}",
        f"-ip={address}",
        "-ip.bind=127.0.0.1" if loopback else "-ip.bind=",
        "-webdav=false",
        "-admin.ui=false",
        "-admin.port.legacy=0",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        "-master.telemetry=false",
        f"-filer.localSocket={data / 'filer.sock'}",
        f"-s3.localSocket={data / 's3.sock'}",
        *(f"-{flag}={ports[flag]}" for flag in MINI_PORTS),
    ]


def client_env(creds: S3Credentials) -> dict[str, str]:
    """The environment an AWS SDK (boto3, the AWS CLI) reads to reach the server."""
    return {
        "AWS_ACCESS_KEY_ID": creds.access_key_id,
        "AWS_SECRET_ACCESS_KEY": creds.secret_access_key,
        "AWS_ENDPOINT_URL": creds.endpoint,
        "AWS_REGION": creds.region,
    }


def rclone_env(creds: S3Credentials, remote: str = "sandbox") -> dict[str, str]:
    """rclone's configuration of remote `remote` (`remote:bucket/key` paths) by environment
    alone (`RCLONE_CONFIG_<REMOTE>_<OPTION>`, rclone's documented form; no config file), path
    style addressing as SeaweedFS serves it."""
    prefix = f"RCLONE_CONFIG_{remote.upper().replace('-', '_')}_"
    return {
        prefix + "TYPE": "s3",
        prefix + "PROVIDER": "SeaweedFS",
        prefix + "ACCESS_KEY_ID": creds.access_key_id,
        prefix + "SECRET_ACCESS_KEY": creds.secret_access_key,
        prefix + "ENDPOINT": creds.endpoint,
        prefix + "REGION": creds.region,
        prefix + "FORCE_PATH_STYLE": "true",
    }


def load(box: Sandbox) -> S3Credentials | None:
    """The running S3 server's endpoint and keys in `box` (None when it has none running)."""
    if not box.alive().get(S3):
        return None
    try:
        return S3Credentials(**json.loads((folder(box) / "credentials.json").read_text()))
    except (OSError, ValueError, TypeError):
        return None


def _write_credentials(box: Sandbox, creds: S3Credentials) -> None:
    base = folder(box)
    for name, text in (
        ("credentials.json", json.dumps(asdict(creds), indent=2) + "\n"),
        ("env", "".join(f"export {k}={v}\n" for k, v in client_env(creds).items())),
    ):
        path = base / name
        path.touch(mode=0o600)
        path.write_text(text)


def start(box: Sandbox, progress: Progress, timeout: float = 60.0) -> S3Credentials:
    """Start `box`'s S3 server (or return the running one's credentials) and wait until its
    gateway answers HTTP. Raises SandboxError when it is not built, exits, or does not answer
    within `timeout` seconds (its log: `<workdir>/logs/s3.log`)."""
    if running := load(box):
        return running
    if why := missing():
        raise SandboxError(why)
    data = folder(box) / "data"
    data.mkdir(parents=True, exist_ok=True)
    ports = {flag: free_port() for flag in MINI_PORTS}
    net = podnet.load(box.state)
    address = net.gateway if net is not None else "127.0.0.1"
    creds = S3Credentials(
        endpoint=f"http://127.0.0.1:{ports['s3.port']}",
        access_key_id="GRYVIA" + secrets.token_hex(7).upper(),
        secret_access_key=secrets.token_urlsafe(30),
        pod_endpoint=f"http://{address}:{ports['s3.port']}",
    )
    progress(f"starting an S3 server (SeaweedFS) at {creds.endpoint}")
    env = os.environ | {
        "AWS_ACCESS_KEY_ID": creds.access_key_id,
        "AWS_SECRET_ACCESS_KEY": creds.secret_access_key,
    }
    proc = box.start(S3, mini_argv(str(binary()), data, ports, address), env=env, cwd=data)
    _write_credentials(box, creds)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SandboxError(
                f"the S3 server exited with {proc.returncode}: see "
                f"{box.workdir / 'logs' / f'{S3}.log'}"
            )
        if _answers(creds.endpoint):
            progress(f"S3 endpoint and keys: {folder(box) / 'env'}")
            return creds
        time.sleep(0.2)
    raise SandboxError(f"the S3 server did not answer within {timeout:.0f}s")


def _answers(endpoint: str) -> bool:
    """True when the gateway answers an unsigned request with any HTTP status (it refuses
    it: 403 AccessDenied)."""
    try:
        with urllib.request.urlopen(endpoint + "/", timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False
