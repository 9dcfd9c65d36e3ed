"""`gryvia serve create|list|get|scale|delete|logs|port-forward`: GryviaInferenceServices,
models served by a Deployment behind a Service (operator flag --enable-inference)."""

from __future__ import annotations

import socket
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gryvia_cli.cli.kindcommands import add_get, add_list
from gryvia_cli.cli.objects import ObjectGroup, TableSpec
from gryvia_cli.cli.options import (
    NamespaceOpt,
    OutputOpt,
    YesOpt,
    check_new_name,
)
from gryvia_cli.cli.session import session
from gryvia_cli.core.inference import (
    SERVE_COLUMNS,
    SERVE_WIDE_COLUMNS,
    serve_details,
    serve_row,
    serve_wide_row,
)
from gryvia_cli.errors import InvalidInputError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import info, success, warn

app = typer.Typer(help="Inference services: models served behind a Service.", no_args_is_help=True)
NameArg = Annotated[str, typer.Argument(help="Inference service name.", show_default=False)]
SERVICES = ObjectGroup(r.INFERENCE_SERVICE, "inference service", "serve")

if TYPE_CHECKING:
    from gryvia_operator.api.inference import GryviaInferenceService


def _model(obj: dict[str, Any]) -> GryviaInferenceService:
    from gryvia_operator.api.inference import GryviaInferenceService

    return GryviaInferenceService.model_validate(obj)


@app.command("create")
def create(
    ctx: typer.Context,
    name: NameArg,
    image: Annotated[str, typer.Option("--image", help="Serving image.", show_default=False)],
    port: Annotated[int, typer.Option("--port", help="Port the server listens on.")] = 8080,
    replicas: Annotated[
        int | None, typer.Option("--replicas", min=0, help="Replicas [default: 1].")
    ] = None,
    version: Annotated[
        str | None, typer.Option("--version", help="Version served [default: image tag].")
    ] = None,
    health_path: Annotated[
        str | None, typer.Option("--health-path", help="Readiness: HTTP path, e.g. /healthz.")
    ] = None,
    health_command: Annotated[
        str | None,
        typer.Option("--health-command", help="Readiness: a shell command exiting 0."),
    ] = None,
    gpus: Annotated[int, typer.Option("--gpus", min=0, help="GPUs per replica.")] = 0,
    cpu: Annotated[str | None, typer.Option("--cpu", help="CPU request, e.g. 500m.")] = None,
    memory: Annotated[str | None, typer.Option("--memory", help="Memory request.")] = None,
    min_replicas: Annotated[
        int | None, typer.Option("--min-replicas", min=1, help="Autoscaling: least replicas.")
    ] = None,
    max_replicas: Annotated[
        int | None, typer.Option("--max-replicas", min=1, help="Autoscaling: most replicas.")
    ] = None,
    cpu_target: Annotated[
        int | None,
        typer.Option("--cpu-target", min=1, max=100, help="Autoscaling: CPU percent target."),
    ] = None,
    command: Annotated[
        list[str] | None, typer.Argument(help="Command (after --).", show_default=False)
    ] = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Serve an image: a Deployment, a Service and readiness from a health check.

    Needs the operator flag --enable-inference (chart value aiOperator.inference.enabled).
    A canary is set in a manifest (`gryvia apply`, docs/inference.md).

    Examples:
      gryvia serve create llm --image acme/llm:1.2 --port 8000 --health-path /healthz --gpus 1
      gryvia serve create web --image python:3.12 --health-path / -- python3 -m http.server 8080
      gryvia serve create llm --image acme/llm:2 --min-replicas 1 --max-replicas 4 --cpu 2
    """
    check_new_name(name, "inference service name")
    from gryvia_cli.core.inference import build_service

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    try:
        body = build_service(
            name,
            ns,
            image=image,
            port=port,
            replicas=replicas,
            version=version,
            command=command or None,
            health_path=health_path,
            health_command=["sh", "-c", health_command] if health_command else None,
            gpus=gpus,
            cpu=cpu,
            memory=memory,
            min_replicas=min_replicas,
            max_replicas=max_replicas,
            cpu_target=cpu_target,
        )
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from None
    obj = state.access().create(r.INFERENCE_SERVICE, body, ns)
    success(f"inference service {ns}/{name} created; follow it with `gryvia serve get {name}`")
    SERVICES.print_written(state, obj, output)


add_list(
    app,
    SERVICES,
    TableSpec(SERVE_COLUMNS, serve_row, SERVE_WIDE_COLUMNS, serve_wide_row),
    "List inference services: phase, ready/wanted replicas, serving version.",
    "URL, CANARY and MESSAGE",
)
add_get(
    app,
    SERVICES,
    lambda s, _now: serve_details(s),
    "Show one inference service: image, replicas, health check, URL, serving version.",
    "llm",
)


@app.command("scale")
def scale(
    ctx: typer.Context,
    name: NameArg,
    replicas: Annotated[int, typer.Option("--replicas", min=0, help="Replicas.")],
    namespace: NamespaceOpt = None,
) -> None:
    """Set the replicas of a service without autoscaling.

    Examples:
      gryvia serve scale llm --replicas 2
    """
    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    isvc = _model(SERVICES.read(state, name, ns))
    if isvc.spec.autoscaling is not None:
        raise InvalidInputError(
            f"inference service {name} autoscales (spec.autoscaling); change its min/max "
            "replicas with `gryvia apply`, or remove autoscaling first"
        )
    state.access().merge_patch(r.INFERENCE_SERVICE, name, ns, {"spec": {"replicas": replicas}})
    success(f"inference service {name} scaled to {replicas}")


@app.command("delete")
def delete(
    ctx: typer.Context, name: NameArg, yes: YesOpt = False, namespace: NamespaceOpt = None
) -> None:
    """Delete an inference service with its Deployments, Service and HPA.

    Examples:
      gryvia serve delete llm --yes
    """
    state = session(ctx)
    SERVICES.delete(state, name, state.resolve_namespace(namespace), yes)


def _pods(ctx: typer.Context, name: str, namespace: str | None) -> tuple[str, list[dict[str, Any]]]:
    state = session(ctx)
    from gryvia_operator.api.inference import LABEL_SERVICE as LABEL

    ns = state.resolve_namespace(namespace)
    SERVICES.read(state, name, ns)
    pods = state.access().items(r.POD, ns, label_selector=f"{LABEL}={name}")
    pods.sort(key=lambda p: str(p["metadata"]["name"]))
    return ns, pods


@app.command("logs")
def logs(
    ctx: typer.Context,
    name: NameArg,
    tail: Annotated[int, typer.Option("--tail", help="Lines from the end of each replica.")] = 100,
    namespace: NamespaceOpt = None,
) -> None:
    """Print the last lines of every replica's log (stable and canary), replica by replica.

    Examples:
      gryvia serve logs llm --tail 20
    """
    from gryvia_cli.kube.stream import stream_lines
    from gryvia_cli.output import section

    ns, pods = _pods(ctx, name, namespace)
    if not pods:
        info(f"inference service {name} has no pods yet")
        return
    access = session(ctx).access()
    for pod in pods:
        pod_name = pod["metadata"]["name"]
        section(f"pod {pod_name}")
        try:
            response = access.pod_log(pod_name, ns, tail=tail if tail >= 0 else None)
        except Exception as exc:  # a replica not started yet has no log
            warn(f"{pod_name}: {exc}")
            continue
        for line in stream_lines(response):
            sys.stdout.write(line + "\n")


@app.command("port-forward")
def port_forward(
    ctx: typer.Context,
    name: NameArg,
    ports: Annotated[str, typer.Argument(help="LOCAL:REMOTE, PORT or :REMOTE.")],
    address: Annotated[str, typer.Option("--address", help="Local address.")] = "127.0.0.1",
    namespace: NamespaceOpt = None,
) -> None:
    """Forward a local port to a ready replica of the service, until Ctrl-C.

    Prints `Forwarding from ADDRESS:LOCAL -> REMOTE` once it listens.

    Examples:
      gryvia serve port-forward llm 8000:8080
    """
    from gryvia_cli.core.podexec import PodNotReadyError, parse_ports
    from gryvia_cli.kube.remote import RemoteAccess

    pair = parse_ports(ports)
    ns, pods = _pods(ctx, name, namespace)
    ready = [
        p
        for p in pods
        if any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in (p.get("status") or {}).get("conditions") or []
        )
    ]
    if not ready:
        raise PodNotReadyError(f"inference service {name} has no ready replica yet")
    pod_name = ready[0]["metadata"]["name"]
    state = session(ctx)
    remote = RemoteAccess(state.kubeconfig, state.access().context)
    from gryvia_cli.cli.forwarding import forward_until_interrupted

    listener = socket.create_server((address, pair.local))
    sys.stdout.write(f"Forwarding from {address}:{listener.getsockname()[1]} -> {pair.remote}\n")
    sys.stdout.flush()
    info(f"pod {ns}/{pod_name}; Ctrl-C stops")

    def carry(conn: socket.socket) -> None:
        remote.forward(ns, pod_name, pair.remote, conn)

    forward_until_interrupted(listener, carry, f"{pod_name}:{pair.remote}")
