"""`gryvia exec`, `gryvia shell` and `gryvia port-forward`: into one replica's pod of a job."""

from __future__ import annotations

import errno
import os
import socket
import sys
import threading
from collections.abc import Mapping
from typing import Annotated, Any

import typer

from gryvia_cli.cli.options import NamespaceOpt, check_job_name
from gryvia_cli.cli.podexec import exec_in_pod, remote_access
from gryvia_cli.cli.session import Session, session
from gryvia_cli.output import info

app = typer.Typer()

ReplicaOpt = Annotated[
    int | None,
    typer.Option(
        "--replica",
        help="Replica number: the completion index of a batch-Job pod (RANK) or the ordinal "
        "of a StatefulSet pod [default: 0, else the first with a running pod].",
        show_default=False,
    ),
]
ContainerOpt = Annotated[
    str | None,
    typer.Option(
        "-c", "--container", help="Container [default: the pod's first].", show_default=False
    ),
]


def _target(
    state: Session, job: str, replica: int | None, container: str | None, namespace: str | None
) -> tuple[str, Mapping[str, Any], str]:
    """(namespace, the replica's running pod, the container). Raises NotFoundError (job,
    container) or PodNotReadyError."""
    from gryvia_cli.core.podexec import choose_container, choose_pod
    from gryvia_cli.views import streams

    check_job_name(job)
    access = state.access()
    ns = state.resolve_namespace(namespace)
    summary = streams.read_job(access, ns, job)
    pod = choose_pod(
        streams.job_pods(access, ns, job),
        replica,
        job=job,
        job_phase=summary.phase,
        replicas=summary.pods,
    )
    return ns, pod, choose_container(pod, container)


def _listen(address: str, port: int) -> socket.socket:
    """A listening socket on `address`:`port` (0: any free port).

    Raises UsageError naming --address when it is no address of this machine, or the port
    when it cannot be bound (in use, or privileged).
    """
    from gryvia_cli.errors import UsageError

    bad_address = UsageError(
        f"--address {address}: not an address of this machine",
        hint="use 127.0.0.1 (the default), ::1, localhost or 0.0.0.0",
    )
    try:
        socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise bad_address from None
    try:
        return socket.create_server((address, port))
    except OSError as exc:
        if exc.errno == errno.EADDRNOTAVAIL:
            raise bad_address from None
        why = os.strerror(exc.errno) if exc.errno else str(exc)
        raise UsageError(
            f"local port {port} on {address}: cannot listen ({why}); "
            "pick another local port, or :REMOTE for any free one"
        ) from None


def _run(
    state: Session,
    job: str,
    command: list[str],
    *,
    replica: int | None,
    container: str | None,
    namespace: str | None,
    stdin: bool,
    tty: bool,
) -> None:
    """Run `command` in the replica's pod and exit with its exit code."""
    ns, pod, ctr = _target(state, job, replica, container, namespace)
    raise typer.Exit(exec_in_pod(state, ns, pod, ctr, command, stdin=stdin, tty=tty))


@app.command("exec", rich_help_panel="Workloads")
def exec_command(
    ctx: typer.Context,
    job: Annotated[str, typer.Argument(help="Job name.", show_default=False)],
    command: Annotated[list[str], typer.Argument(help="The command and its arguments, after --.")],
    replica: ReplicaOpt = None,
    container: ContainerOpt = None,
    stdin: Annotated[
        bool, typer.Option("-i", "--stdin", help="Pass this terminal's stdin to the command.")
    ] = False,
    tty: Annotated[
        bool,
        typer.Option(
            "-t", "--tty", help="Give the command a terminal (with -i, when stdin is one)."
        ),
    ] = False,
    namespace: NamespaceOpt = None,
) -> None:
    """Run a command in a job's pod.

    The command runs in the replica's running pod (replica 0 unless --replica picks
    another), in its first container unless -c names one, and gryvia exits with the
    command's exit code, as kubectl exec does. In the sandbox, the command runs as a local
    process in the container's working directory with its environment.

    Examples:
      gryvia exec train-ddp -- nvidia-smi
      gryvia exec train-ddp --replica 1 -- sh -c 'echo $RANK'
      gryvia exec train-ddp -it -- python3
    """
    _run(
        session(ctx),
        job,
        command,
        replica=replica,
        container=container,
        namespace=namespace,
        stdin=stdin,
        tty=tty,
    )


@app.command("shell", rich_help_panel="Workloads")
def shell(
    ctx: typer.Context,
    job: Annotated[str, typer.Argument(help="Job name.", show_default=False)],
    replica: ReplicaOpt = None,
    container: ContainerOpt = None,
    program: Annotated[
        str, typer.Option("--shell", help="The shell to run in the container.")
    ] = "sh",
    namespace: NamespaceOpt = None,
) -> None:
    """Open a shell in a job's pod.

    An interactive shell (`sh` unless --shell names another) in one replica's pod, with a
    terminal when stdin is one; exit the shell to come back. gryvia exits with the shell's
    exit code.

    Examples:
      gryvia shell train-ddp
      gryvia shell train-ddp --replica 1 --shell bash
    """
    _run(
        session(ctx),
        job,
        [program],
        replica=replica,
        container=container,
        namespace=namespace,
        stdin=True,
        tty=True,
    )


@app.command("port-forward", rich_help_panel="Workloads")
def port_forward(
    ctx: typer.Context,
    job: Annotated[str, typer.Argument(help="Job name.", show_default=False)],
    ports: Annotated[
        str,
        typer.Argument(
            help="LOCAL:REMOTE (8888:8000), PORT (the same on both sides) or :REMOTE (any free "
            "local port).",
            show_default=False,
        ),
    ],
    replica: ReplicaOpt = None,
    address: Annotated[
        str, typer.Option("--address", help="Local address to listen on.")
    ] = "127.0.0.1",
    namespace: NamespaceOpt = None,
) -> None:
    """Forward a local port to a job's pod.

    Forwards to a port of one replica's pod until Ctrl-C. Prints `Forwarding from
    ADDRESS:LOCAL -> REMOTE` on stdout once it listens; each connection to the local port
    opens its own stream to the pod (a failure is reported on stderr and ends only that
    connection). A connection made before the pod's port listens waits up to 30 s for it.

    Examples:
      gryvia port-forward serve-llm 8000:8000
      gryvia port-forward train-ddp :6006 --replica 0
    """
    from gryvia_cli.core.podexec import LISTEN_WAIT_S, parse_ports

    pair = parse_ports(ports)
    listener = _listen(address, pair.local)  # no cluster needed to report a bad local side
    try:
        state = session(ctx)
        ns, pod, _ = _target(state, job, replica, None, namespace)
        remote = remote_access(state)
    except BaseException:
        listener.close()
        raise
    name = pod["metadata"]["name"]
    local = listener.getsockname()[1]
    sys.stdout.write(f"Forwarding from {address}:{local} -> {pair.remote}\n")
    sys.stdout.flush()
    info(f"pod {ns}/{name}; Ctrl-C stops")

    waiting = threading.Event()

    def waited() -> None:
        if not waiting.is_set():  # once: every connection may wait for the same listener
            waiting.set()
            info(f"waiting for pod port {pair.remote} to listen (up to {LISTEN_WAIT_S:.0f} s)")

    from gryvia_cli.cli.forwarding import forward_until_interrupted

    def carry(conn: socket.socket) -> None:
        remote.forward(ns, name, pair.remote, conn, on_wait=waited)

    forward_until_interrupted(listener, carry, f"{name}:{pair.remote}")
