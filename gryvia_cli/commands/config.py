"""`gryvia config`: show what gryvia connects to; save a default namespace per context."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gryvia_cli.cli.options import OutputOpt
from gryvia_cli.cli.session import Session, session
from gryvia_cli.output import MACHINE_FORMATS, emit, render_data, success

app = typer.Typer(help="Show or change what gryvia connects to.")


def effective(state: Session) -> dict[str, Any]:
    """The effective connection settings and where each came from (no request is sent)."""
    from gryvia_cli.kube.config import describe_context, effective_namespace
    from gryvia_cli.settings import config_path

    info = describe_context(state.kubeconfig, state.context)
    namespace, source = effective_namespace(state.namespace, state.settings().namespaces, info)
    return {
        "context": info.name,
        "cluster": info.cluster,
        "server": info.server,
        "user": info.user,
        "namespace": namespace,
        "namespaceSource": source,
        "kubeconfig": list(info.files),
        "configFile": str(config_path()),
        "platformNamespace": state.settings().platform_namespace,
        "prometheusUrl": state.settings().prometheus_for(info.name),
    }


def _context_name(ctx: typer.Context) -> str:
    """The name of the current (or --context) context, whose saved settings change."""
    from gryvia_cli.kube.config import describe_context

    state = session(ctx)
    return describe_context(state.kubeconfig, state.context).name


@app.callback(invoke_without_command=True)
def config(ctx: typer.Context, output: OutputOpt = None) -> None:
    """Show the effective context, namespace, server and user (no cluster request).

    Examples:
      gryvia config
      gryvia --context prod config -o json
    """
    if ctx.invoked_subcommand is not None:
        return
    state = session(ctx)
    data = effective(state)
    fmt = state.fmt(output)
    if fmt in MACHINE_FORMATS:
        render_data(data, fmt)
        return
    emit(f"Context:    {data['context']}")
    emit(f"Cluster:    {data['cluster']}")
    emit(f"Server:     {data['server']}")
    emit(f"User:       {data['user']}")
    emit(f"Namespace:  {data['namespace']} (from {data['namespaceSource']})")
    emit(f"Kubeconfig: {', '.join(data['kubeconfig']) or '-'}")
    emit(f"Config:     {data['configFile']}")
    emit(f"Prometheus: {data['prometheusUrl'] or '- (GPU use read through the API server)'}")


@app.command("set-namespace")
def set_namespace(
    ctx: typer.Context,
    namespace: Annotated[
        str, typer.Argument(help="Namespace to use by default.", show_default=False)
    ],
) -> None:
    """Save NAMESPACE as the default for the current (or --context) context.

    Stored in gryvia's config file, not in your kubeconfig; `-n` still wins.

    Examples:
      gryvia config set-namespace team-a
      gryvia --context prod config set-namespace ml
    """
    from gryvia_cli.settings import save_namespace

    name = _context_name(ctx)
    path = save_namespace(name, namespace)
    success(f"default namespace for context {name} is now {namespace} (saved in {path})")


@app.command("unset-namespace")
def unset_namespace(ctx: typer.Context) -> None:
    """Forget the saved default namespace of the current (or --context) context."""
    from gryvia_cli.settings import save_namespace

    name = _context_name(ctx)
    path = save_namespace(name, None)
    success(f"no saved namespace for context {name} any more ({path})")


@app.command("set-prometheus")
def set_prometheus(
    ctx: typer.Context,
    url: Annotated[
        str,
        typer.Argument(
            help="The Prometheus server's URL (http:// or https://).", show_default=False
        ),
    ],
) -> None:
    """Read GPU use of the current (or --context) context from the Prometheus server at URL.

    `gryvia status`, `gpu training` and `health gpu` then ask that Prometheus (one PromQL
    query) for dcgm-exporter's series, and read the exporters through the API server when it
    does not answer. GRYVIA_PROMETHEUS_URL sets one URL for every context.

    Examples:
      gryvia config set-prometheus http://prometheus.monitoring:9090
    """
    from gryvia_cli.errors import InvalidInputError
    from gryvia_cli.settings import save_prometheus

    name = _context_name(ctx)
    try:
        path = save_prometheus(name, url)
    except ValueError as exc:
        raise InvalidInputError(f"URL: {exc}", hint="give the server's http(s):// address") from exc
    success(f"GPU use for context {name} now comes from {url} (saved in {path})")


@app.command("unset-prometheus")
def unset_prometheus(ctx: typer.Context) -> None:
    """Read GPU use of the current (or --context) context through the API server again."""
    from gryvia_cli.settings import save_prometheus

    name = _context_name(ctx)
    path = save_prometheus(name, None)
    success(f"no Prometheus for context {name} any more ({path})")
