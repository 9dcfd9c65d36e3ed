"""`gryvia version`: the client version and, unless --client, the server side's."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gryvia_cli.cli.options import OutputOpt
from gryvia_cli.cli.session import session
from gryvia_cli.errors import GryviaError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import MACHINE_FORMATS, emit, render_data, warn
from gryvia_operator.api.names import CLI_API_VERSION

app = typer.Typer()


@app.command("version", rich_help_panel="Utilities")
def version(
    ctx: typer.Context,
    client: Annotated[
        bool, typer.Option("--client", help="Only the client; no cluster needed.")
    ] = False,
    platform_namespace: Annotated[
        str | None,
        typer.Option(
            "--platform-namespace",
            help="Where the operator runs [default: gryvia-system].",
            show_default=False,
        ),
    ] = None,
    output: OutputOpt = None,
) -> None:
    """Client and server versions.

    Client, Kubernetes API server, operator images and the served Gryvia API version.

    Examples:
      gryvia version
      gryvia version --client
      gryvia version -o json | jq -r .server.kubernetes

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: Version, client: {gryvia, python}, server:
    {server, platformNamespace, kubernetes, gryviaApi, operatorImages}}.
    """
    import platform

    from gryvia_cli import __version__

    state = session(ctx)
    fmt = state.fmt(output)
    data: dict[str, Any] = {
        "apiVersion": CLI_API_VERSION,
        "kind": "Version",
        "client": {"gryvia": __version__, "python": platform.python_version()},
    }
    unreachable: GryviaError | None = None
    if not client:
        try:
            data["server"] = server_versions(
                state, platform_namespace or state.settings().platform_namespace
            )
        except GryviaError as exc:  # the client's version still prints, as kubectl's does
            unreachable = exc
    if fmt in MACHINE_FORMATS:
        render_data(data, fmt)
    else:
        emit(f"Client: gryvia {__version__} (python {data['client']['python']})")
    if unreachable is not None:
        raise unreachable
    if client or fmt in MACHINE_FORMATS:
        return
    server = data["server"]
    emit(f"Kubernetes: {server.get('kubernetes') or 'unknown'} ({server.get('server')})")
    emit(f"Gryvia API: {server.get('gryviaApi') or 'not installed'}")
    images = server.get("operatorImages") or []
    emit(
        "Operator: "
        + (", ".join(images) if images else f"no Deployment in {server['platformNamespace']}")
    )


def server_versions(state: Any, platform_ns: str) -> dict[str, Any]:
    """The API server version, the served Gryvia API version and the operator images."""
    access = state.access()
    out: dict[str, Any] = {"server": access.server, "platformNamespace": platform_ns}
    out["kubernetes"] = access.server_version().get("gitVersion")
    served = access.served_resources(f"{r.AIJOB.group}/{r.AIJOB.version}")
    out["gryviaApi"] = r.AIJOB.api_version if served else None
    try:
        deployments = access.items(r.DEPLOYMENT, platform_ns)
    except GryviaError as exc:
        warn(f"could not read Deployments in {platform_ns}: {exc.message}")
        deployments = []
    out["operatorImages"] = sorted(
        {
            str(c.get("image"))
            for d in deployments
            for c in ((d.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers")
            or []
        }
    )
    return out
