"""`gryvia workspace create|start|stop|delete|list|get|shell`: interactive development pods
(GryviaWorkspace) whose home directory survives stop and start (docs/workspaces.md)."""

from __future__ import annotations

import contextlib
import threading
from typing import Annotated

import typer

from gryvia_cli.cli.kindcommands import add_get
from gryvia_cli.cli.objects import ObjectGroup, TableSpec
from gryvia_cli.cli.options import (
    AllNamespacesOpt,
    NamespaceOpt,
    OutputOpt,
    YesOpt,
    check_new_name,
)
from gryvia_cli.cli.session import Session, session
from gryvia_cli.core.workspaces import workspace_details
from gryvia_cli.errors import UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import info, success

app = typer.Typer(
    help="Workspaces: development pods with a persistent home; create, start, stop, shell.",
    no_args_is_help=True,
)
NameArg = Annotated[str, typer.Argument(help="Workspace name.", show_default=False)]
WORKSPACES = ObjectGroup(r.WORKSPACE, "workspace", "workspace")


@app.command("create")
def create(
    ctx: typer.Context,
    name: NameArg,
    image: Annotated[
        str, typer.Option("--image", metavar="IMAGE", help="Container image.", show_default=False)
    ],
    command: Annotated[
        list[str] | None,
        typer.Option(
            "--command",
            metavar="ARG",
            help="Container command, one --command per word [default: sleep infinity].",
            show_default=False,
        ),
    ] = None,
    gpus: Annotated[int, typer.Option("--gpus", min=0, metavar="N", help="GPUs.")] = 0,
    gpu_type: Annotated[
        str | None, typer.Option("--gpu-type", metavar="TYPE", help="GPU type, e.g. H100.")
    ] = None,
    cpu: Annotated[
        str | None, typer.Option("--cpu", metavar="Q", help="CPU request and limit (2, 500m).")
    ] = None,
    memory: Annotated[
        str | None, typer.Option("--memory", metavar="Q", help="Memory request and limit (8Gi).")
    ] = None,
    storage: Annotated[
        str | None,
        typer.Option("--storage", metavar="Q", help="Home PVC size [default: 10Gi]."),
    ] = None,
    storage_class: Annotated[
        str | None,
        typer.Option("--storage-class", metavar="NAME", help="StorageClass of the home PVC."),
    ] = None,
    idle_timeout: Annotated[
        int | None,
        typer.Option(
            "--idle-timeout",
            min=1,
            metavar="MINUTES",
            help="Stop after this many idle minutes (no shell session; GPUs under "
            "--idle-gpu-percent where the operator samples them, else CPU under 100m).",
        ),
    ] = None,
    idle_gpu_percent: Annotated[
        float | None,
        typer.Option(
            "--idle-gpu-percent",
            min=0,
            max=100,
            metavar="PERCENT",
            help="GPU activity at or under which a GPU workspace is idle [default: 5].",
        ),
    ] = None,
    max_lifetime: Annotated[
        float | None,
        typer.Option(
            "--max-lifetime", min=0.001, metavar="HOURS", help="Stop after running this long."
        ),
    ] = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Create a workspace: a pod running --image (or --command) with a home PVC.

    The pod waits for shells (`sleep infinity` unless --command says otherwise); its home
    directory, /home/gryvia, is a PVC that stays while the workspace is stopped. The operator
    stops it (deletes the pod, keeps the PVC) after --idle-timeout minutes without a shell
    session or CPU use, and after --max-lifetime hours of running. A workspace with GPUs that
    the operator samples (--enable-gpu-metrics) is idle by its GPUs instead of its CPU: busy
    only while their activity is above --idle-gpu-percent (docs/workspaces.md).

    Examples:
      gryvia workspace create dev --image pytorch/pytorch:2.3 --gpus 1 --gpu-type H100
      gryvia workspace create notebook --image python:3.12 --cpu 2 --memory 8Gi \\
        --storage 50Gi --idle-timeout 30 --max-lifetime 12
    """
    check_new_name(name, "workspace name")
    from gryvia_cli.core.workspaces import build_workspace

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    try:
        body = build_workspace(
            name,
            ns,
            image=image,
            command=command,
            gpus=gpus,
            gpu_type=gpu_type,
            cpu=cpu,
            memory=memory,
            storage_size=storage,
            storage_class=storage_class,
            idle_timeout_minutes=idle_timeout,
            max_lifetime_hours=max_lifetime,
            idle_gpu_percent=idle_gpu_percent,
        )
    except ValueError as exc:
        raise UsageError(str(exc), hint="see 'gryvia workspace create --help'") from None
    obj = state.access().create(r.WORKSPACE, body, ns)
    success(f"workspace {ns}/{name} created; open a shell with 'gryvia workspace shell {name}'")
    WORKSPACES.print_written(state, obj, output)


def _set_stopped(ctx: typer.Context, name: str, namespace: str | None, stopped: bool) -> None:
    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    WORKSPACES.read(state, name, ns)
    state.access().merge_patch(r.WORKSPACE, name, ns, {"spec": {"stopped": stopped}})
    if stopped:
        success(f"workspace {ns}/{name} stopping; its home PVC {name}-home is kept")
    else:
        success(f"workspace {ns}/{name} starting; 'gryvia workspace list' shows when it runs")


@app.command("start")
def start(ctx: typer.Context, name: NameArg, namespace: NamespaceOpt = None) -> None:
    """Start a stopped workspace (a new pod on the same home PVC).

    Examples:
      gryvia workspace start dev
    """
    _set_stopped(ctx, name, namespace, False)


@app.command("stop")
def stop(ctx: typer.Context, name: NameArg, namespace: NamespaceOpt = None) -> None:
    """Stop a workspace: its pod is deleted, its home PVC kept.

    Examples:
      gryvia workspace stop dev
    """
    _set_stopped(ctx, name, namespace, True)


@app.command("delete")
def delete(
    ctx: typer.Context, name: NameArg, namespace: NamespaceOpt = None, yes: YesOpt = False
) -> None:
    """Delete a workspace with its pod and its home PVC (the files in it are lost).

    Asks first unless --yes or stdin is not a terminal.

    Examples:
      gryvia workspace delete dev --yes
    """
    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    WORKSPACES.delete(
        state,
        name,
        ns,
        yes,
        question=f"Delete workspace {ns}/{name} and its home PVC {name}-home?",
        done=f"workspace {ns}/{name} deleted, with its pod and home PVC",
    )


@app.command("list")
def list_workspaces(
    ctx: typer.Context,
    namespace: NamespaceOpt = None,
    all_namespaces: AllNamespacesOpt = False,
    output: OutputOpt = None,
) -> None:
    """List workspaces: phase, GPUs, idle timeout, maximum lifetime, why it stopped.

    PHASE is Pending, Running or Stopped as the operator wrote it, or Starting/Stopping
    until it acts on a start or stop. `-A` puts NAMESPACE first; `-o wide` adds IMAGE, POD,
    RUNS and LAST-ACTIVITY; `-o json|yaml` prints the List.

    Examples:
      gryvia workspace list
      gryvia workspace list -A -o wide
    """
    from gryvia_cli.core.workspaces import (
        WORKSPACE_COLUMNS,
        WORKSPACE_WIDE_COLUMNS,
        workspace_row,
        workspace_wide_row,
    )
    from gryvia_operator.api.workspace import GryviaWorkspace

    table = TableSpec(WORKSPACE_COLUMNS, workspace_row, WORKSPACE_WIDE_COLUMNS, workspace_wide_row)
    found = WORKSPACES.print_table(
        session(ctx), GryviaWorkspace, output, namespace, all_namespaces, table
    )
    if found:
        info(f"Total: {len(found)} workspace(s)")


add_get(
    app,
    WORKSPACES,
    workspace_details,
    "Show one workspace: image, resources, home PVC, timeouts, phase, last activity.",
    "dev",
)


def _heartbeat(state: Session, name: str, ns: str, done: threading.Event) -> None:
    """Refresh the session annotation now and every SESSION_HEARTBEAT_SECONDS until `done`
    (a failed refresh is retried at the next beat)."""
    from gryvia_cli.core.workspaces import heartbeat_patch
    from gryvia_cli.errors import GryviaError
    from gryvia_operator.api.workspace import SESSION_HEARTBEAT_SECONDS

    while True:
        with contextlib.suppress(GryviaError):
            state.access().merge_patch(r.WORKSPACE, name, ns, heartbeat_patch(state.now()))
        if done.wait(SESSION_HEARTBEAT_SECONDS):
            return


@app.command("shell")
def shell(
    ctx: typer.Context,
    name: NameArg,
    command: Annotated[
        list[str] | None,
        typer.Argument(help="A command to run instead of a shell, after --.", show_default=False),
    ] = None,
    program: Annotated[
        str, typer.Option("--shell", help="The shell to run in the container.")
    ] = "sh",
    namespace: NamespaceOpt = None,
) -> None:
    """Open a shell in a running workspace (or run one command with -- CMD).

    While the session is open it counts as activity: the CLI refreshes the workspace's
    gryvia.io/workspace-session-at annotation every 20 seconds, so the idle timeout does not
    stop it under you. gryvia exits with the shell's (or command's) exit code.

    Examples:
      gryvia workspace shell dev
      gryvia workspace shell dev -- sh -c 'echo $HOSTNAME; pwd'
    """
    from gryvia_cli.cli.podexec import exec_in_pod
    from gryvia_cli.core.podexec import PodNotReadyError, choose_container
    from gryvia_cli.errors import NotFoundError
    from gryvia_operator.api.workspace import GryviaWorkspace, pod_name

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    ws = GryviaWorkspace.model_validate(WORKSPACES.read(state, name, ns))
    phase = (ws.status.phase if ws.status else None) or "Pending"
    if ws.spec.stopped or phase != "Running":
        what = "stopped" if ws.spec.stopped else f"not running yet (phase {phase})"
        hint = (
            f"start it with 'gryvia workspace start {name}'"
            if ws.spec.stopped
            else f"wait for it: 'gryvia workspace get {name}'"
        )
        raise PodNotReadyError(f"workspace {ns}/{name} is {what}; {hint}")
    try:
        pod = state.access().get(r.POD, pod_name(name), ns)
    except NotFoundError:
        raise PodNotReadyError(
            f"workspace {ns}/{name} has no pod {pod_name(name)} yet; try again in a moment"
        ) from None
    ctr = choose_container(pod, None)
    done = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(state, name, ns, done), daemon=True)
    beat.start()
    try:
        interactive = not command
        code = exec_in_pod(
            state, ns, pod, ctr, command or [program], stdin=interactive, tty=interactive
        )
    finally:
        done.set()
    raise typer.Exit(code)
