"""Connecting: the effective kubeconfig context loaded into a ready `KubeAccess`, through the
light client of `kube.transport` when the credentials are static, else the official client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gryvia_cli.kube.access import KubeAccess


def _quiet_libraries(verbose: bool) -> None:
    """The official client's and urllib3's logs at ERROR (DEBUG with `-v`), and no
    InsecureRequestWarning; called before either library is used."""
    import logging
    import warnings

    level = logging.DEBUG if verbose else logging.ERROR
    for name in ("urllib3", "kubernetes"):
        logging.getLogger(name).setLevel(level)
    if not verbose:  # urllib3's InsecureRequestWarning, matched without importing urllib3
        warnings.filterwarnings("ignore", message="Unverified HTTPS request", module="urllib3")


def connect(
    kubeconfig: Path | None,
    context: str | None,
    *,
    timeout: float = 30.0,
    verbose: bool = False,
    interactive: bool = True,
) -> KubeAccess:
    """Load credentials for the effective context and return a ready KubeAccess.

    Nothing is sent yet (an exec plugin runs once). `interactive=False` (the console) never
    hands an exec plugin the terminal. Raises KubeconfigError (see `kube.config`).
    """
    from gryvia_cli.kube.config import describe_context, kubeconfig_source

    info = describe_context(kubeconfig, context)
    api = None if info.in_cluster else _static_client(kubeconfig_source(kubeconfig), info.name)
    if api is not None:  # urllib3 comes with its first stream (a watch, a log)
        api.before_urllib3 = lambda: _quiet_libraries(verbose)
    else:
        _quiet_libraries(verbose)
        from kubernetes import client

        from gryvia_cli.kube.config import load_client_configuration

        cfg = load_client_configuration(
            kubeconfig, None if info.in_cluster else info.name, interactive=interactive
        )
        api = client.ApiClient(cfg)
        if hasattr(cfg.refresh_api_key_hook, "bind"):  # exec credentials: rotate certificates
            cfg.refresh_api_key_hook.bind(api)
        api.user_agent = "gryvia-cli"
    return KubeAccess(api, info, timeout=timeout)


def _static_client(source: str | None, context: str) -> Any:
    """The light client (`kube.transport`) when the context's credentials are static, else
    None (also when a file it names is unreadable: the official client then reports it)."""
    from gryvia_cli.kube.config import merge_kubeconfig
    from gryvia_cli.kube.transport import static_client

    if source is None:
        return None
    try:
        return static_client(merge_kubeconfig(source), context)
    except (OSError, ValueError):
        return None
