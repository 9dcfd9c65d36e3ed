"""The `gryvia` commands the console runs while it is suspended (the Job view's shell and
port-forward keys): their command lines, for the console's own context and kubeconfig."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO


def gryvia_argv(
    args: Sequence[str], *, namespace: str, context: str, kubeconfig: Path | str | None
) -> list[str]:
    """Return the argv running `gryvia ARGS -n NAMESPACE` with this Python, against
    `context` (empty: the current one) of `kubeconfig` (None: the default file)."""
    argv = [sys.executable, "-m", "gryvia_cli"]
    if kubeconfig:
        argv += ["--kubeconfig", str(kubeconfig)]
    if context:
        argv += ["--context", context]
    return [*argv, *args, "-n", namespace]


def run_in_foreground(argv: Sequence[str]) -> int:
    """Run `argv` on the console's terminal and return its exit code.

    Ctrl-C sends SIGINT to the terminal's whole foreground process group: the command and
    the console. While the command runs, the console's SIGINT handler does nothing, so
    Ctrl-C stops the command (a port-forward) and not the console. It is a handler, not
    SIG_IGN, because an ignored signal stays ignored in the command after exec, while a
    handler goes back to the default there. Python sets handlers in the main thread only;
    elsewhere the command runs with the handlers as they are.
    """
    import signal
    import subprocess
    import threading

    if threading.current_thread() is not threading.main_thread():
        return subprocess.run(list(argv), check=False).returncode
    previous = signal.signal(signal.SIGINT, _ignore_interrupt)
    try:
        return subprocess.run(list(argv), check=False).returncode
    finally:
        signal.signal(signal.SIGINT, previous)


def _ignore_interrupt(signum: int, frame: object) -> None:
    """SIGINT handler while a command has the terminal: the command handles Ctrl-C."""


def wait_after_failure(
    command: str, code: int, *, stdin: TextIO | None = None, stderr: TextIO | None = None
) -> bool:
    """After `gryvia COMMAND` failed (exit code not 0, nor 130 or -SIGINT for Ctrl-C), say
    so and wait for Enter before the console redraws over the terminal, so its error (a bad
    LOCAL:REMOTE, a port in use, no running pod) stays readable. Returns whether it waited
    (not when stdin is not a terminal)."""
    import signal

    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    if code in (0, 130, -signal.SIGINT) or not stdin.isatty():
        return False
    stderr.write(f"\ngryvia {command} ended with exit code {code}; press Enter for the console ")
    stderr.flush()
    with contextlib.suppress(OSError, ValueError, KeyboardInterrupt):
        stdin.readline()
    return True
