"""Running a command in a pod's container with this terminal's streams: what `gryvia exec`,
`gryvia shell` and `gryvia workspace shell` share (raw mode for a tty, the window size, the
exit code)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from gryvia_cli.cli.session import Session
from gryvia_cli.output import warn

if TYPE_CHECKING:
    from gryvia_cli.kube.remote import RemoteAccess


def remote_access(state: Session) -> RemoteAccess:
    from gryvia_cli.kube.remote import RemoteAccess

    return RemoteAccess(state.kubeconfig, state.access().context)


@contextlib.contextmanager
def _raw_terminal(fd: int) -> Iterator[None]:
    """Put terminal `fd` in raw mode (keys go to the remote shell as typed) and restore it.

    Raw mode starts at once (TCSANOW): what the user typed before the remote prompt appeared
    is kept and sent (setraw's default TCSAFLUSH discarded it)."""
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    try:
        tty.setraw(fd, termios.TCSANOW)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _terminal_size() -> tuple[int, int] | None:
    try:
        size = os.get_terminal_size(sys.stdout.fileno())
    except (OSError, ValueError):
        return None
    return size.columns, size.lines


def exec_in_pod(
    state: Session,
    ns: str,
    pod: Mapping[str, Any],
    ctr: str,
    command: list[str],
    *,
    stdin: bool,
    tty: bool,
) -> int:
    """Run `command` in container `ctr` of the running `pod` with this terminal's streams
    (raw mode with `tty` when stdin is a terminal); return the command's exit code (its
    failure message, if any, on stderr). Shared by `gryvia exec`/`shell` and
    `gryvia workspace shell`."""
    from gryvia_cli.core.podexec import exit_code_of

    remote = remote_access(state)
    fd = sys.stdin.fileno() if stdin else -1
    tty = tty and stdin and os.isatty(fd)
    with _raw_terminal(fd) if tty else contextlib.nullcontext():
        status = remote.exec(
            ns,
            pod["metadata"]["name"],
            ctr,
            command,
            tty=tty,
            stdin=(lambda: os.read(fd, 4096)) if stdin else None,
            stdout=sys.stdout.buffer,
            stderr=sys.stderr.buffer,
            size=_terminal_size if tty else None,
        )
    code, message = exit_code_of(status)
    if message:
        warn(f"{' '.join(command)}: {message}")
    return code
