"""A real exec credential plugin minting short-lived service-account tokens, and its reaper.

Run as a script (`python tests/support/execplugin.py DIR`, as a kubeconfig's `exec` runs it),
it reads DIR/plugin.json (`kubectl`, `admin` kubeconfig, `namespace`, `serviceAccount`,
`lifetime` seconds), creates a Secret, mints a token bound to it (`kubectl create token
--bound-object-kind Secret`: deleting the Secret revokes the token), appends one line to
DIR/calls (epoch seconds, Secret name) and prints an ExecCredential whose
`expirationTimestamp` is `lifetime` seconds away (the API server's own minimum is 10 minutes).

`Reaper` deletes each Secret a second after its reported expiry, so a token used past its
reported expiry gets 401, as on a cluster with truly short-lived tokens. `exec_kubeconfig`
writes a kubeconfig whose user runs the plugin.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

LABEL = "gryvia-test/exec-token"
EXPIRES = "gryvia-test/expires"


def _kubectl(cfg: dict[str, Any], *args: str, body: Any = None) -> str:
    done = subprocess.run(
        [cfg["kubectl"], "--kubeconfig", cfg["admin"], "-n", cfg["namespace"], *args],
        input=None if body is None else json.dumps(body),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.stderr.write(f"kubectl {args[0]} failed: {done.stderr.strip()}\n")
        sys.exit(1)
    return done.stdout


def mint(folder: Path) -> dict[str, Any]:
    """Create a Secret, mint a token bound to it, record the call; the ExecCredential."""
    cfg = json.loads((folder / "plugin.json").read_text())
    name = f"tok-{uuid.uuid4().hex[:10]}"
    expires = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=cfg["lifetime"])
    stamp = expires.strftime("%Y-%m-%dT%H:%M:%SZ")
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "labels": {LABEL: "1"}, "annotations": {EXPIRES: stamp}},
    }
    _kubectl(cfg, "create", "-f", "-", body=secret)
    token = _kubectl(
        cfg,
        "create",
        "token",
        cfg["serviceAccount"],
        *("--bound-object-kind", "Secret", "--bound-object-name", name, "--duration", "10m"),
    ).strip()
    with (folder / "calls").open("a") as out:
        out.write(f"{time.time():.3f} {name}\n")
    with (folder / "tokens").open("a") as out:
        out.write(f"{name} {token}\n")
    return {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": token, "expirationTimestamp": stamp},
    }


def calls(folder: Path) -> list[str]:
    """The Secret names of the plugin's calls so far, in order."""
    path = folder / "calls"
    return [line.split()[1] for line in path.read_text().splitlines()] if path.exists() else []


def exec_kubeconfig(
    folder: Path,
    *,
    admin: Path,
    kubectl: Path,
    namespace: str,
    service_account: str,
    lifetime: int,
) -> Path:
    """Write DIR/plugin.json and DIR/kubeconfig (the admin kubeconfig's cluster, a user whose
    exec runs this plugin with interactiveMode Never); return the kubeconfig's path."""
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    cfg = {
        "kubectl": str(kubectl),
        "admin": str(admin),
        "namespace": namespace,
        "serviceAccount": service_account,
        "lifetime": lifetime,
    }
    (folder / "plugin.json").write_text(json.dumps(cfg))
    base = yaml.safe_load(admin.read_text())
    current = next(c for c in base["contexts"] if c["name"] == base["current-context"])
    cluster = next(c for c in base["clusters"] if c["name"] == current["context"]["cluster"])
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(Path(__file__).resolve()), str(folder)],
            "interactiveMode": "Never",
        }
    }
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [cluster],
        "users": [{"name": "short-lived", "user": user}],
        "contexts": [
            {
                "name": "short-lived",
                "context": {
                    "cluster": cluster["name"],
                    "user": "short-lived",
                    "namespace": namespace,
                },
            }
        ],
        "current-context": "short-lived",
    }
    path = folder / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


class Reaper:
    """Deletes the plugin's Secrets (revoking their tokens) `grace` seconds after their
    reported expiry, polling every `interval` seconds in a thread; `revoke_now(name)` deletes
    one early. Use as a context manager."""

    def __init__(self, kubectl: list[str], namespace: str, grace: float = 1.0) -> None:
        self.kubectl = [*kubectl, "-n", namespace]
        self.grace = grace
        self.revoked: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Reaper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def revoke_now(self, name: str) -> None:
        """Delete Secret `name` now (its token gets 401 from the next request on)."""
        subprocess.run(
            [*self.kubectl, "delete", "secret", name, "--wait=false", "--ignore-not-found"],
            capture_output=True,
            check=False,
        )
        self.revoked.append(name)

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            done = subprocess.run(
                [*self.kubectl, "get", "secrets", "-l", LABEL, "-o", "json"],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                continue
            now = time.time()
            for item in json.loads(done.stdout)["items"]:
                meta = item["metadata"]
                stamp = meta["annotations"][EXPIRES].replace("Z", "+00:00")
                if (
                    now > datetime.fromisoformat(stamp).timestamp() + self.grace
                    and "deletionTimestamp" not in meta
                ):
                    self.revoke_now(meta["name"])


if __name__ == "__main__":
    print(json.dumps(mint(Path(sys.argv[1]))))
