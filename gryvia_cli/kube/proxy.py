"""Which HTTP proxy a request to the API server goes through, decided as kubectl decides.

client-go uses the cluster's `proxy-url` when the kubeconfig sets one (NO_PROXY does not
apply to it), else Go's `http.ProxyFromEnvironment` (golang.org/x/net/http/httpproxy):
HTTPS_PROXY for https servers, HTTP_PROXY for http ones (upper or lower case, the upper
first), NO_PROXY excludes hosts (`*`, a domain and its subdomains, an IP, a CIDR, an
optional `:port`), and `localhost` and loopback addresses are never proxied. ALL_PROXY is
not read. A proxy without a scheme is `http://`.
"""

from __future__ import annotations

import base64
import ipaddress
import os
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit, urlunsplit


def proxy_for(
    server: str, proxy_url: str | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The proxy URL for requests to `server` (an `https://host:port` URL), or None to
    connect directly. `proxy_url` is the kubeconfig cluster's `proxy-url`."""
    if proxy_url:
        return str(proxy_url)
    env = os.environ if environ is None else environ
    parts = urlsplit(server)
    scheme = parts.scheme or "https"
    names = ("HTTPS_PROXY", "https_proxy") if scheme == "https" else ("HTTP_PROXY", "http_proxy")
    proxy = next((env[n] for n in names if env.get(n)), "")
    if not proxy or not _use_proxy(parts.hostname or "", parts.port, scheme, env):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def _use_proxy(host: str, port: int | None, scheme: str, env: Mapping[str, str]) -> bool:
    host = host.lower()
    if host == "localhost":
        return False
    ip = _ip(host)
    if ip is not None and ip.is_loopback:
        return False
    port = port or (443 if scheme == "https" else 80)
    no_proxy = env.get("NO_PROXY") or env.get("no_proxy") or ""
    for raw in (e.strip().lower() for e in no_proxy.split(",")):
        if not raw:
            continue
        if raw == "*":
            return False
        if ip is not None and "/" in raw:
            try:
                if ip in ipaddress.ip_network(raw, strict=False):
                    return False
            except ValueError:
                pass
            continue
        entry, entry_port = _split_port(raw)
        if entry_port is not None and entry_port != port:
            continue
        if ip is not None:
            if _ip(entry) == ip:
                return False
            continue
        if entry.startswith("*."):
            entry = entry[1:]
        bare = entry.lstrip(".")
        if (host == bare and not entry.startswith(".")) or host.endswith("." + bare):
            return False
    return True


def _split_port(entry: str) -> tuple[str, int | None]:
    if entry.startswith("["):  # [v6]:port
        host, _, rest = entry[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None
    if entry.count(":") == 1:
        host, _, port = entry.partition(":")
        return host, int(port) if port.isdigit() else None
    return entry, None


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


def proxy_credentials(proxy: str | None) -> tuple[str | None, dict[str, str]]:
    """(the proxy URL without its `user:password@`, the `proxy-authorization` header for
    them) for a proxy URL from `proxy_for`; (the URL unchanged, {}) when it names no user.

    Go's HTTP transport, which kubectl uses, sends `Proxy-Authorization: Basic` with the
    proxy URL's user and password (percent-decoded) on every request and CONNECT; the
    official client sends nothing of the URL's userinfo, so a proxy that asks for it
    answers 407. The header goes in the client configuration's `proxy_headers`, which both
    its HTTP pool and its WebSocket streams (exec, port-forward) send; the URL loses the
    credentials so no error message prints them.
    """
    if not proxy:
        return proxy, {}
    parts = urlsplit(proxy)
    if parts.username is None:
        return proxy, {}
    user, password = unquote(parts.username), unquote(parts.password or "")
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=host)), {"proxy-authorization": f"Basic {token}"}
