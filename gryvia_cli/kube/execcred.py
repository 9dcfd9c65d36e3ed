"""Exec credential plugins (a kubeconfig user's `exec:` block), run the way kubectl runs them.

The official client's `ExecProvider` runs the plugin again whenever its token is within five
minutes of expiry (`EXPIRY_SKEW_PREVENTION_DELAY`), so a 60-second token is fetched on every
request; it ignores `interactiveMode`, loses the plugin's stderr under a terminal and logs its
failures instead of raising them. This module keeps client-go's contract
(k8s.io/client-go/plugin/pkg/client/auth/exec, the `client.authentication.k8s.io`
ExecCredential API):

- the credential is cached until shortly before its `expirationTimestamp` (10% of its
  lifetime, at most 10 s) and fetched again when the API server answers 401 (`invalidate`);
  without an expiry it is kept until a 401;
- `interactiveMode`: `Never` never hands the plugin the terminal, `IfAvailable` does when
  stdin is a terminal, `Always` fails without one; required for `client.authentication.k8s.io/v1`,
  `IfAvailable` by default before;
- `KUBERNETES_EXEC_INFO` carries `spec.interactive` and, with `provideClusterInfo`, the
  cluster (`server`, `certificate-authority-data`, `tls-server-name`,
  `insecure-skip-tls-verify`, `proxy-url`, `config` from the `client.authentication.k8s.io/exec`
  extension);
- a relative `command` holding a `/` starts at the kubeconfig's folder; `env` is added to the
  environment;
- a failure is one `ExecPluginError` line naming the plugin and its stderr (when the plugin
  had the terminal, its stderr is already on screen).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gryvia_cli.errors import KubeconfigError

API_VERSIONS = (
    "client.authentication.k8s.io/v1",
    "client.authentication.k8s.io/v1beta1",
    "client.authentication.k8s.io/v1alpha1",
)
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")
EXEC_EXTENSION = "client.authentication.k8s.io/exec"
MAX_SKEW = 10.0
"""Seconds before its expiry that a credential is fetched again (at most; 10% of shorter
lifetimes)."""


class ExecPluginError(KubeconfigError):
    """An exec credential plugin could not run, failed, or printed no usable ExecCredential.
    One line: the plugin, what went wrong and its stderr."""

    def __init__(self, message: str, hint: str | None = None, **kw: tuple[str, ...]):
        super().__init__(message, hint, **kw)


@dataclass(frozen=True)
class Credential:
    """What a plugin returned: a bearer token or a client certificate/key (PEM), and when
    it expires (UTC epoch seconds, None = until the API server refuses it)."""

    token: str | None
    cert_pem: str | None
    key_pem: str | None
    expires: float | None
    fetched: float

    def fresh(self, now: float) -> bool:
        """True while the credential can still be sent: before `expires` minus 10% of its
        lifetime (at most MAX_SKEW seconds)."""
        if self.expires is None:
            return True
        skew = min(MAX_SKEW, max(0.0, self.expires - self.fetched) * 0.1)
        return now < self.expires - skew


@dataclass
class ExecPlugin:
    """A kubeconfig user's `exec` block, resolved: `args[0]` is the command (made absolute
    when relative with a `/`), `env` the extra variables, `cluster` the ExecCredential
    `spec.cluster` (None without `provideClusterInfo`)."""

    api_version: str
    args: list[str]
    env: dict[str, str]
    interactive_mode: str
    cluster: dict[str, Any] | None
    install_hint: str = ""
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = Path(self.args[0]).name

    @classmethod
    def from_kubeconfig(
        cls,
        exec_block: Mapping[str, Any],
        cluster: Mapping[str, Any],
        base: str,
        cluster_base: str | None = None,
    ) -> ExecPlugin:
        """Build from a user's `exec` block and its context's cluster entry body; `base` is
        the folder of the kubeconfig file that defined the user (a relative command starts
        there), `cluster_base` that of the cluster's file (its relative CA file; `base` when
        None).

        Raises ExecPluginError for a block kubectl refuses (no command, unknown apiVersion
        or interactiveMode, v1 without interactiveMode)."""
        command = str(exec_block.get("command") or "")
        api_version = str(exec_block.get("apiVersion") or "")
        if not command:
            raise ExecPluginError("the kubeconfig's exec plugin has no command")
        where = f"exec plugin {command}"
        if api_version not in API_VERSIONS:
            raise ExecPluginError(
                f"{where}: apiVersion {api_version or '(none)'} is not one of "
                + ", ".join(API_VERSIONS)
            )
        mode = exec_block.get("interactiveMode")
        if not mode:
            if api_version.endswith("/v1"):
                raise ExecPluginError(
                    f"{where}: interactiveMode must be set for {api_version} "
                    "(Never, IfAvailable or Always)"
                )
            mode = "IfAvailable"
        if mode not in INTERACTIVE_MODES:
            raise ExecPluginError(
                f"{where}: interactiveMode {mode} is not one of {', '.join(INTERACTIVE_MODES)}"
            )
        if not Path(command).is_absolute() and os.sep in command:
            command = os.path.normpath(Path(base, command))
        env = {
            str(e.get("name")): str(e.get("value") or "")
            for e in exec_block.get("env") or []
            if isinstance(e, Mapping) and e.get("name")
        }
        info = None
        if exec_block.get("provideClusterInfo"):
            info = cluster_info(cluster, cluster_base or base)
        return cls(
            api_version=api_version,
            args=[command, *(str(a) for a in exec_block.get("args") or [])],
            env=env,
            interactive_mode=str(mode),
            cluster=info,
            install_hint=str(exec_block.get("installHint") or ""),
        )

    def interactive(self, terminal: bool) -> bool:
        """Whether the plugin gets the terminal (stdin, stderr): never for `Never`, when
        `terminal` for `IfAvailable`; `Always` raises ExecPluginError without one."""
        if self.interactive_mode == "Never":
            return False
        if self.interactive_mode == "Always" and not terminal:
            raise ExecPluginError(
                f"exec plugin {self.name} needs a terminal (interactiveMode: Always), and "
                "standard input is not one"
            )
        return terminal

    def exec_info(self, interactive: bool) -> dict[str, Any]:
        """The KUBERNETES_EXEC_INFO object handed to the plugin."""
        spec: dict[str, Any] = {"interactive": interactive}
        if self.cluster is not None:
            spec["cluster"] = self.cluster
        return {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec}

    def run(self, terminal: bool, now: Callable[[], float] = time.time) -> Credential:
        """Run the plugin once and parse its ExecCredential. `terminal`: stdin is a terminal
        the plugin may use. Raises ExecPluginError."""
        import subprocess

        interactive = self.interactive(terminal)
        env = {**os.environ, **self.env}
        env["KUBERNETES_EXEC_INFO"] = json.dumps(self.exec_info(interactive))
        try:
            done = subprocess.run(
                self.args,
                env=env,
                stdin=None if interactive else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=None if interactive else subprocess.PIPE,
                check=False,
            )
        except FileNotFoundError:
            hint = f": {one_line(self.install_hint)}" if self.install_hint else ""
            raise ExecPluginError(f"exec plugin {self.args[0]} not found{hint}") from None
        except OSError as exc:
            raise ExecPluginError(f"exec plugin {self.args[0]} cannot run: {exc}") from None
        if done.returncode != 0:
            err = one_line(done.stderr.decode("utf-8", "replace")) if done.stderr else ""
            said = f": {err}" if err else (" (its output is above)" if interactive else "")
            raise ExecPluginError(
                f"exec plugin {self.name} failed with exit code {done.returncode}{said}"
            )
        return self.parse(done.stdout, now())

    def parse(self, stdout: bytes, fetched: float) -> Credential:
        """The Credential in a plugin's stdout. Raises ExecPluginError when it is not an
        ExecCredential of this apiVersion with a token or a certificate and key."""
        bad = f"exec plugin {self.name} printed no usable ExecCredential"
        try:
            data = json.loads(stdout or b"null")
        except ValueError:
            raise ExecPluginError(f"{bad}: its output is not JSON") from None
        if not isinstance(data, dict) or data.get("kind") != "ExecCredential":
            raise ExecPluginError(f"{bad}: kind is not ExecCredential")
        if data.get("apiVersion") != self.api_version:
            raise ExecPluginError(
                f"{bad}: apiVersion {data.get('apiVersion')} is not {self.api_version}"
            )
        status = data.get("status") or {}
        token = status.get("token") or None
        cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
        if not token and not (cert and key):
            raise ExecPluginError(f"{bad}: status has no token nor clientCertificateData/Key")
        expires = None
        if status.get("expirationTimestamp"):
            try:
                stamp = str(status["expirationTimestamp"]).replace("Z", "+00:00")
                expires = datetime.fromisoformat(stamp).timestamp()
            except ValueError:
                raise ExecPluginError(
                    f"{bad}: expirationTimestamp {status['expirationTimestamp']} is not RFC 3339"
                ) from None
        return Credential(token, None if token else cert, None if token else key, expires, fetched)


def one_line(text: str, limit: int = 400) -> str:
    """`text` as one line: its non-blank lines joined with "; ", cut at `limit` chars."""
    joined = "; ".join(line.strip() for line in text.splitlines() if line.strip())
    return joined if len(joined) <= limit else joined[: limit - 1] + "…"


def cluster_info(cluster: Mapping[str, Any], base: str) -> dict[str, Any]:
    """The ExecCredential `spec.cluster` of a kubeconfig cluster body (client-go's
    `clientauthentication.Cluster`): the CA is sent as data even when the kubeconfig names
    a file. Raises ExecPluginError when that file cannot be read."""
    import base64

    info: dict[str, Any] = {"server": str(cluster.get("server") or "")}
    for key in ("tls-server-name", "insecure-skip-tls-verify", "proxy-url"):
        if cluster.get(key):
            info[key] = cluster[key]
    if cluster.get("certificate-authority-data"):
        info["certificate-authority-data"] = str(cluster["certificate-authority-data"])
    elif cluster.get("certificate-authority"):
        path = Path(base, str(cluster["certificate-authority"]))
        try:
            info["certificate-authority-data"] = base64.b64encode(path.read_bytes()).decode()
        except OSError as exc:
            raise ExecPluginError(f"cannot read certificate-authority {path}: {exc}") from None
    for ext in cluster.get("extensions") or []:
        if isinstance(ext, Mapping) and ext.get("name") == EXEC_EXTENSION:
            info["config"] = ext.get("extension")
    return info


class ExecCredentials:
    """The cached credential of one plugin, shared by the threads of one process.

    Installed as the official client's `refresh_api_key_hook` (called before every request
    with the `Configuration`): it puts a fresh token into `api_key["BearerToken"]`, or points
    `cert_file`/`key_file` at a fresh certificate and rebuilds the bound client's pool.
    `invalidate()` (after a 401) makes the next call fetch again.
    """

    def __init__(
        self,
        plugin: ExecPlugin,
        *,
        terminal: bool,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.plugin = plugin
        self.terminal = terminal
        self.clock = clock
        self._lock = threading.Lock()
        self._credential: Credential | None = None
        self._api: Any = None

    def current(self) -> Credential:
        """The cached credential, fetched first when there is none or it is no longer
        fresh. Raises ExecPluginError."""
        with self._lock:
            cred = self._credential
            if cred is None or not cred.fresh(self.clock()):
                cred = self.plugin.run(self.terminal, self.clock)
                self._credential = cred
            return cred

    def invalidate(self, refused: Credential | None = None) -> None:
        """Forget the cached credential (the API server refused it): `refused`, the one
        sent, unless another thread has already replaced it (None: whichever is cached)."""
        with self._lock:
            if refused is None or self._credential is refused:
                self._credential = None

    def bind(self, api: Any) -> None:
        """Remember the ApiClient whose pool is rebuilt when a certificate changes."""
        self._api = api

    def apply(self, configuration: Any) -> Credential:
        """Put the current credential into `configuration` (the hook's body); return it."""
        cred = self.current()
        if cred.token:
            configuration.api_key["BearerToken"] = f"Bearer {cred.token}"
            return cred
        cert, key = _pem_file(cred.cert_pem or ""), _pem_file(cred.key_pem or "")
        if (configuration.cert_file, configuration.key_file) != (cert, key):
            configuration.cert_file, configuration.key_file = cert, key
            if self._api is not None:
                from kubernetes.client import rest

                self._api.rest_client = rest.RESTClientObject(configuration)
        return cred

    __call__ = apply


def send_with_credentials(configuration: Any, send: Callable[[], Any]) -> Any:
    """Send one request (`send()` serializes and sends it, returning the response); with
    exec credentials, put the current one in first (certificates trigger no token refresh
    of their own), and after a 401 fetch a new one and send once more (client-go does the
    same). Raises what `send` raises, and ExecPluginError."""
    hook = getattr(configuration, "refresh_api_key_hook", None)
    if not isinstance(hook, ExecCredentials):
        return send()
    sent = hook.apply(configuration)
    response = send()
    if response.status == 401:
        response.read()
        hook.invalidate(sent)
        hook.apply(configuration)
        response = send()
    return response


_PEM_DIR: list[str] = []


def _pem_file(pem: str) -> str:
    """A private temp file holding `pem` (one per distinct content; removed at exit)."""
    import atexit
    import hashlib
    import shutil
    import tempfile

    if not _PEM_DIR:
        _PEM_DIR.append(tempfile.mkdtemp(prefix="gryvia-exec-"))
        atexit.register(shutil.rmtree, _PEM_DIR[0], True)
    path = str(Path(_PEM_DIR[0], hashlib.sha256(pem.encode()).hexdigest()[:24]))
    if not Path(path).exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(pem)
    return path


def stdin_is_terminal() -> bool:
    """True when standard input is a terminal a plugin could prompt on."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False
