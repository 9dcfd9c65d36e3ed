"""A light HTTP client for kubeconfigs with static credentials, without the `kubernetes` package.

Importing the official client costs about 0.3 s of CPU (its `config` package pulls in
google-auth, requests-oauthlib, its OpenAPI models ...), more than a whole `gryvia list jobs`
should take. Most kubeconfigs need none of it: a server URL, a CA, and a client certificate
or a bearer token. For those, `static_client` builds a `StaticApiClient`: the two methods of
the official `ApiClient` that `KubeAccess` calls (`param_serialize`, `call_api`), plus
`fetch`, which sends a request whose reply is read whole on the standard library's
`http.client` (`kube.lighthttp`: no urllib3 import, ~60 ms, on the path of a read command).
`call_api` keeps urllib3 (imported on first use) for the streaming replies of watches and
logs, configured as the official client configures its pool (CA file or data, client
certificate and key, `insecure-skip-tls-verify`, one retry on a fresh connection).

Anything else (exec plugins, auth providers such as OIDC or gcp, `tls-server-name`,
`proxy-url`, proxy environment variables, username/password) returns None, and `connect`
loads the official client as before, so those kubeconfigs behave exactly as they did.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

if TYPE_CHECKING:
    from gryvia_cli.kube.lighthttp import ConnectionPool, LightResponse

USER_KEYS = frozenset(
    {"token", "tokenFile", "client-certificate", "client-certificate-data", "client-key"}
    | {"client-key-data"}
)
"""User entries made only of these keys take the light path."""
CLUSTER_KEYS = frozenset(
    {"server", "certificate-authority", "certificate-authority-data", "insecure-skip-tls-verify"}
    | {"extensions"}
)
"""Cluster entries made only of these keys take the light path."""


@dataclass
class StaticConfiguration:
    """What callers read of `kubernetes.client.Configuration`: the server URL."""

    host: str


class StaticResponse:
    """The official client's `RESTResponse` shape: `status`, `data` after `read()`, and the
    streaming urllib3 response as `response`."""

    def __init__(self, response: Any) -> None:
        self.response = response
        self.status = int(response.status)
        self.reason = response.reason
        self.data: bytes | None = None

    def read(self) -> bytes:
        """Read the whole body (once) and return it."""
        if self.data is None:
            self.data = self.response.data
        return self.data or b""


class StaticApiClient:
    """Sends requests with a bearer token and/or a client certificate over one urllib3 pool.

    `pool_args` are urllib3 `PoolManager` arguments; `token` is the whole Authorization
    header value (`Bearer ...`) or None.
    """

    def __init__(self, host: str, pool_args: Mapping[str, Any], token: str | None) -> None:
        self.configuration = StaticConfiguration(host)
        self.token = token
        self.user_agent = "gryvia-cli"
        self.pool_args = dict(pool_args)
        self._pool: Any = None
        self._light: ConnectionPool | None = None
        self.before_urllib3: Callable[[], None] | None = None
        """Called once before urllib3 is imported (`kube.connect` quiets its logs)."""

    @property
    def pool(self) -> Any:
        """The urllib3 `PoolManager` of streaming requests (`call_api`), made on first use."""
        if self._pool is None:
            if self.before_urllib3 is not None:
                self.before_urllib3()
            import urllib3

            self._pool = urllib3.PoolManager(**self.pool_args)
        return self._pool

    def fetch(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        _request_timeout: tuple[float, float | None] | None = None,
    ) -> LightResponse:
        """Send one request (arguments as `call_api`'s) and read its whole reply on
        `http.client` (`kube.lighthttp`); raises `lighthttp.TransportError` when no complete
        answer came."""
        import ssl

        from gryvia_cli.kube.lighthttp import ConnectionPool

        if self._light is None:
            args = self.pool_args
            self._light = ConnectionPool(
                self.configuration.host,
                ca_file=args.get("ca_certs"),
                cert_file=args.get("cert_file"),
                key_file=args.get("key_file"),
                verify=args.get("cert_reqs") != ssl.CERT_NONE,
                maxsize=int(args.get("maxsize") or 10),
            )
        target = url[len(self.configuration.host) :]
        return self._light.request(method, target, headers, body, _request_timeout)

    def param_serialize(
        self,
        *,
        method: str,
        resource_path: str,
        query_params: Sequence[tuple[str, Any]] = (),
        header_params: Mapping[str, str] | None = None,
        body: Any = None,
        auth_settings: Sequence[str] = (),
    ) -> tuple[str, str, dict[str, str], bytes | None]:
        """(method, url, headers, body bytes) as `call_api` takes them; bodies are JSON
        (valid YAML too, so server-side apply takes it)."""
        url = self.configuration.host + resource_path  # Resource.path quotes names
        if query_params:
            url += "?" + urlencode([(k, _query_value(v)) for k, v in query_params])
        headers = {"User-Agent": self.user_agent, **(header_params or {})}
        if self.token and "BearerToken" in auth_settings:
            headers["Authorization"] = self.token
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            headers.setdefault("Content-Type", "application/json")
        return method.upper(), url, headers, data

    def call_api(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        _request_timeout: tuple[float, float | None] | None = None,
    ) -> StaticResponse:
        """Send one request; the body is left unread (`read()` it or stream `response`).
        urllib3 errors propagate as they do from the official client."""
        import urllib3

        timeout = None
        if _request_timeout is not None:
            timeout = urllib3.Timeout(connect=_request_timeout[0], read=_request_timeout[1])
        response = self.pool.request(
            method, url, body=body, headers=dict(headers), timeout=timeout, preload_content=False
        )
        return StaticResponse(response)


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def static_client(config: Mapping[str, Any], context: str) -> StaticApiClient | None:
    """A StaticApiClient for `context` of a merged kubeconfig (`kube.config.merge_kubeconfig`),
    or None when its credentials or connection need the official client (see the module
    docstring). Raises OSError/ValueError for unreadable files or bad base64 (callers then
    let the official client report them)."""
    if _proxy_set(os.environ):
        return None
    ctx = _entry(config.get("contexts"), context).get("context") or {}
    cluster_entry = _entry(config.get("clusters"), str(ctx.get("cluster") or ""))
    user_entry = _entry(config.get("users"), str(ctx.get("user") or ""))
    cluster = cluster_entry.get("cluster") or {}
    user = user_entry.get("user") or {} if user_entry else {}
    if not cluster.get("server") or set(cluster) - CLUSTER_KEYS or set(user) - USER_KEYS:
        return None
    host = str(cluster["server"]).rstrip("/")
    pool: dict[str, Any] = {"retries": 1, "maxsize": (os.cpu_count() or 1) * 5}
    if host.startswith("https"):
        import ssl

        verify = not cluster.get("insecure-skip-tls-verify")
        pool["cert_reqs"] = ssl.CERT_REQUIRED if verify else ssl.CERT_NONE
        base = _base(cluster_entry)
        pool["ca_certs"] = _as_file(
            cluster, "certificate-authority", "certificate-authority-data", base
        )
        # like the official client: the user's files are relative to the cluster's file
        pool["cert_file"] = _as_file(user, "client-certificate", "client-certificate-data", base)
        pool["key_file"] = _as_file(user, "client-key", "client-key-data", base)
    token = None
    if user.get("token"):
        token = f"Bearer {user['token']}"
    elif user.get("tokenFile"):
        path = Path(_base(user_entry) or "", str(user["tokenFile"]))
        token = f"Bearer {path.read_text()}"
    return StaticApiClient(host, pool, token)


def _proxy_set(environ: Mapping[str, str]) -> bool:
    """True when `http_proxy`, `https_proxy` or `all_proxy` (any case) is set, as
    `urllib.request.getproxies_environment` reads them, without importing urllib.request
    (~8 ms) on every command."""
    return any(v and k.lower() in _PROXY_VARIABLES for k, v in environ.items())


_PROXY_VARIABLES = frozenset({"http_proxy", "https_proxy", "all_proxy"})


def _entry(entries: Any, name: str) -> dict[str, Any]:
    for entry in entries or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            return entry
    return {}


def _base(entry: Mapping[str, Any]) -> str:
    """The folder of the kubeconfig file an entry came from (relative paths start there)."""
    path = entry.get("_source")
    return str(Path(path).parent.absolute()) if path else ""


_TEMP: list[str] = []


def _as_file(obj: Mapping[str, Any], key: str, data_key: str, base: str) -> str | None:
    """The path of `key` (relative to `base`) or of the base64 `data_key` written to a private
    temp file (removed at exit), as the official client's FileOrData does; None when neither
    is set."""
    data = obj.get(data_key)
    if data:  # tempfile, shutil: ~10 ms to import, for inline credentials only
        import atexit
        import base64
        import shutil
        import tempfile

        if not _TEMP:
            _TEMP.append(tempfile.mkdtemp(prefix="gryvia-kube-"))
            atexit.register(shutil.rmtree, _TEMP[0], True)
        fd, path = tempfile.mkstemp(dir=_TEMP[0])
        with os.fdopen(fd, "wb") as out:
            out.write(base64.standard_b64decode(str(data)))
        return path
    if obj.get(key):
        path = os.path.normpath(Path(base, str(obj[key])))
        if not Path(path).is_file():
            raise OSError(f"{key} file {path} does not exist")
        return path
    return None
