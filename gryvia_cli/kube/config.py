"""Which cluster, user and namespace: kubeconfig files, contexts, in-cluster config.

Sources, first match wins: `--kubeconfig FILE`, `$KUBECONFIG` (several files joined with `:`
are merged by kubectl's rules, `merge_kubeconfig`), `~/.kube/config`, then the pod's service
account when running inside a cluster. Static credentials (a token, a client certificate)
are sent by `kube.transport` without the official `kubernetes` client; everything else goes
through the official client's `KubeConfigLoader` fed with the merged files, except exec
plugins, which `kube.execcred` runs (see docs/kubeconfig.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gryvia_cli.errors import KubeconfigError

SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
IN_CLUSTER = "in-cluster"


@dataclass(frozen=True)
class ContextInfo:
    """The effective context: its name, cluster, server, user and kubeconfig namespace."""

    name: str
    cluster: str
    server: str
    user: str
    namespace: str | None
    files: tuple[str, ...]

    @property
    def in_cluster(self) -> bool:
        """True when the pod's service account is used instead of a kubeconfig."""
        return self.name == IN_CLUSTER


def kubeconfig_source(
    explicit: Path | None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The kubeconfig file list to load (`:`-joined), or None when there is none: the files
    of `$KUBECONFIG` that exist (None when it is set and none exists, as kubectl does), else
    ~/.kube/config.

    Raises KubeconfigError when `--kubeconfig` names a missing file.
    """
    env = os.environ if environ is None else environ
    if explicit is not None:
        if not explicit.expanduser().is_file():
            raise KubeconfigError(f"kubeconfig file {explicit} does not exist")
        return str(explicit.expanduser())
    listed = [p for p in env.get("KUBECONFIG", "").split(os.pathsep) if p]
    existing = [p for p in listed if Path(p).expanduser().is_file()]
    if existing:
        return os.pathsep.join(existing)
    if listed:  # like kubectl: a set KUBECONFIG is never replaced by ~/.kube/config
        return None
    home = env.get("HOME") or str(Path.home())
    default = Path(home) / ".kube" / "config"
    return str(default) if default.is_file() else None


def no_kubeconfig_message(environ: Mapping[str, str] | None = None) -> str:
    """Why no kubeconfig was found: the files KUBECONFIG names that do not exist, or that
    KUBECONFIG is unset and ~/.kube/config is missing."""
    env = os.environ if environ is None else environ
    listed = [p for p in env.get("KUBECONFIG", "").split(os.pathsep) if p]
    if len(listed) == 1:
        return f"no kubeconfig found: KUBECONFIG is {listed[0]}, and that file does not exist"
    if listed:
        return (
            f"no kubeconfig found: KUBECONFIG lists {', '.join(listed)}, and none of these "
            "files exists"
        )
    return "no kubeconfig found (KUBECONFIG is unset and ~/.kube/config is missing)"


def context_names(explicit: Path | None) -> list[str]:
    """Context names of the (merged) kubeconfig, sorted (empty when there is none, e.g. in
    a pod).

    Raises KubeconfigError when `--kubeconfig` names a missing file or a file does not parse.
    """
    source = kubeconfig_source(explicit)
    if source is None:
        return []
    contexts = merge_kubeconfig(source)["contexts"]
    return sorted(str(c.get("name")) for c in contexts)


def in_cluster_available(environ: Mapping[str, str] | None = None) -> bool:
    """True inside a pod with a mounted service account token."""
    env = os.environ if environ is None else environ
    return bool(env.get("KUBERNETES_SERVICE_HOST")) and (SA_DIR / "token").is_file()


def effective_namespace(
    flag: str | None, saved: Mapping[str, str], ctx: ContextInfo
) -> tuple[str, str]:
    """Return (namespace, where it came from) in the order flag, saved default, context,
    `default`."""
    if flag:
        return flag, "--namespace"
    if saved.get(ctx.name):
        return saved[ctx.name], "gryvia config"
    if ctx.namespace:
        return ctx.namespace, "in-cluster service account" if ctx.in_cluster else "kubeconfig"
    return "default", "default"


def merge_kubeconfig(source: str) -> dict[str, Any]:
    """Read and merge the `:`-joined kubeconfig files of `source` as kubectl does
    (client-go's `ClientConfigLoadingRules.Load`): missing and empty files are skipped, a
    cluster, context or user comes from the first file that names it, `current-context`
    from the first file that sets a non-empty one (kubectl writes `current-context: ""`
    into files it creates). Each merged entry records its file as `_source` (relative paths
    start at its folder).

    Raises KubeconfigError for unreadable or malformed files and for a name listed twice in
    one file (kubectl refuses both).
    """
    merged: dict[str, Any] = {"clusters": [], "contexts": [], "users": []}
    for path in (Path(p).expanduser() for p in source.split(os.pathsep) if p):
        if not path.exists():
            continue
        config = _load_file(path)
        if config is None:
            continue  # an empty file is an empty config (client-go's clientcmd.Load)
        if not isinstance(config, dict):
            raise KubeconfigError(f"cannot read kubeconfig {path}: it is not a mapping")
        for key, value in config.items():
            merged.setdefault(key, value)
        for item in ("clusters", "contexts", "users"):
            have = {e.get("name") for e in merged[item]}
            seen: set[Any] = set()
            for entry in config.get(item) or []:
                if not isinstance(entry, dict):
                    continue
                name = entry.get("name")
                if name in seen:
                    raise KubeconfigError(
                        f'kubeconfig {path} lists {item[:-1]} "{name}" twice', hint=None
                    )
                seen.add(name)
                if name not in have:
                    merged[item].append({**entry, "_source": str(path)})
                    have.add(name)
        if config.get("current-context") and not merged.get("current-context"):
            merged["current-context"] = config["current-context"]
    return merged


def _load_file(path: Path) -> Any:
    """One kubeconfig file's document. A JSON file (JSON is YAML; kubeconfigs that tools
    generate often are) is read with `json`, sparing the ~15 ms import of PyYAML; anything
    else, and JSON that does not parse, with PyYAML's safe loader, whose errors are reported.
    Raises KubeconfigError."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise KubeconfigError(f"cannot read kubeconfig {path}: {exc}") from exc
    if text.lstrip().startswith("{"):
        import json

        try:
            return json.loads(text)
        except ValueError:
            pass  # PyYAML reads what JSON refuses (comments, ...) or words the error
    import yaml

    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise KubeconfigError(f"cannot read kubeconfig {path}: {exc}") from exc


def _named(entries: Any, name: str) -> dict[str, Any]:
    for entry in entries or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            return entry
    return {}


def describe_context(explicit: Path | None, context: str | None) -> ContextInfo:
    """Return the effective context without loading credentials (no exec plugin runs).

    Raises KubeconfigError when there is no kubeconfig (and not in a pod), no current
    context, or `context` is not defined.
    """
    source = kubeconfig_source(explicit)
    if source is None:
        if in_cluster_available():
            return _in_cluster_info()
        raise KubeconfigError(no_kubeconfig_message())
    config = merge_kubeconfig(source)
    contexts = list(config.get("contexts") or [])
    names = [str(c.get("name")) for c in contexts if isinstance(c, dict)]
    chosen = context or config.get("current-context") or ""
    if not chosen:
        raise KubeconfigError(
            f"kubeconfig {source} has no current context",
            hint=f"pass --context <name> (one of: {', '.join(names) or 'none defined'})",
        )
    entry = _named(contexts, chosen)
    if not entry:
        raise KubeconfigError(
            f'context "{chosen}" is not defined in {source}',
            hint=f"pass --context with one of: {', '.join(names) or 'none defined'}",
        )
    body = entry.get("context") or {}
    cluster_name = str(body.get("cluster") or "")
    cluster = _named(config.get("clusters"), cluster_name).get("cluster") or {}
    return ContextInfo(
        name=chosen,
        cluster=cluster_name,
        server=str(cluster.get("server") or ""),
        user=str(body.get("user") or ""),
        namespace=body.get("namespace") or None,
        files=tuple(source.split(os.pathsep)),
    )


def _in_cluster_info() -> ContextInfo:
    host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    namespace = None
    ns_file = SA_DIR / "namespace"
    if ns_file.is_file():
        namespace = ns_file.read_text().strip() or None
    server = f"https://{host}:{port}" if ":" not in host else f"https://[{host}]:{port}"
    return ContextInfo(IN_CLUSTER, IN_CLUSTER, server, "service account", namespace, ())


def load_client_configuration(
    explicit: Path | None, context: str | None, *, interactive: bool = True
) -> Any:
    """Build a `kubernetes.client.Configuration` with credentials for the effective context.

    The official client's `KubeConfigLoader` reads the kubeconfig merged by
    `merge_kubeconfig` (kubectl's rules), except a user's `exec` block, which
    `kube.execcred.ExecCredentials` runs (cached per token lifetime, installed as the
    configuration's `refresh_api_key_hook`; `interactive=False` keeps the terminal from the
    plugin, as the console needs). The proxy follows kubectl (`kube.proxy`).

    Raises KubeconfigError when the kubeconfig or its credentials cannot be loaded
    (ExecPluginError, one line, when the exec plugin fails).
    """
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    from gryvia_cli.kube.proxy import proxy_credentials, proxy_for

    cfg = client.Configuration()
    source = kubeconfig_source(explicit)
    try:
        if source is None:
            if not in_cluster_available():
                raise KubeconfigError(no_kubeconfig_message())
            config.load_incluster_config(client_configuration=cfg)
            cfg.proxy = proxy_for(cfg.host)
        else:
            merged = merge_kubeconfig(source)
            name = context or str(merged.get("current-context") or "")
            node, exec_block, cluster, bases = _loader_input(merged, name)
            loader = config.kube_config.KubeConfigLoader(
                config_dict=node, active_context=name, config_base_path=None
            )
            loader.load_and_set(cfg)
            cfg.proxy = proxy_for(cfg.host, cluster.get("proxy-url"))
            if exec_block is not None:
                from gryvia_cli.kube.execcred import ExecCredentials, ExecPlugin, stdin_is_terminal

                plugin = ExecPlugin.from_kubeconfig(exec_block, cluster, *bases)
                hook = ExecCredentials(plugin, terminal=interactive and stdin_is_terminal())
                hook.apply(cfg)  # the first fetch: a failing plugin fails the connection
                cfg.refresh_api_key_hook = hook  # type: ignore[assignment]
    except ConfigException as exc:
        raise KubeconfigError(f"cannot load credentials: {exc}") from exc
    except (OSError, ValueError, TypeError) as exc:  # unreadable cert files, malformed data
        raise KubeconfigError(f"cannot load credentials: {exc}") from exc
    cfg.no_proxy = None  # proxy_for applied NO_PROXY; a proxy-url ignores it (kubectl)
    cfg.proxy, headers = proxy_credentials(cfg.proxy)
    if headers:  # user:password in the proxy URL: Basic proxy authentication, as kubectl
        cfg.proxy_headers = headers
    cfg.retries = 1
    return cfg


def _loader_input(
    merged: dict[str, Any], context: str
) -> tuple[Any, dict[str, Any] | None, dict[str, Any], tuple[str, str]]:
    """(the official loader's ConfigNode tree, the user's exec block or None, the context's
    cluster body, the folders of the user's and the cluster's files). Each entry keeps its
    own file as path, as the official KubeConfigMerger does; the exec block is taken out
    (unless a token or an auth-provider comes first) so the official loader does not run it."""
    from kubernetes.config.kube_config import ConfigNode

    ctx = _named(merged.get("contexts"), context).get("context") or {}
    user_entry = _named(merged.get("users"), str(ctx.get("user") or ""))
    user = user_entry.get("user") or {}
    exec_block = None
    if isinstance(user.get("exec"), dict) and not (
        {"auth-provider", "token", "tokenFile"} & set(user)
    ):
        exec_block = user["exec"]
    value = {k: v for k, v in merged.items() if k not in ("clusters", "contexts", "users")}
    for item in ("clusters", "contexts", "users"):
        nodes = []
        for entry in merged[item]:
            body = {k: v for k, v in entry.items() if k != "_source"}
            if entry is user_entry and exec_block is not None:
                body["user"] = {k: v for k, v in user.items() if k != "exec"}
            path = entry.get("_source")
            nodes.append(ConfigNode(f"{path}/{entry.get('name')}", body, path))
        value[item] = nodes
    cluster_entry = _named(merged.get("clusters"), str(ctx.get("cluster") or ""))
    bases = (_folder(user_entry), _folder(cluster_entry))
    cluster = cluster_entry.get("cluster") or {}
    return ConfigNode("kubeconfig", value, None), exec_block, cluster, bases


def _folder(entry: dict[str, Any]) -> str:
    source = entry.get("_source")
    return str(Path(source).parent.absolute()) if source else ""
