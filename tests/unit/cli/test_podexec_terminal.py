"""`gryvia shell`/`exec` raw mode keeps what was typed before it (issue #37: the first keys
typed while the pod's shell was starting were lost)."""

from __future__ import annotations

import os
import pty
import select
import termios

from gryvia_cli.cli.podexec import _raw_terminal


def _read_ready(fd: int) -> bytes:
    ready, _, _ = select.select([fd], [], [], 1.0)
    return os.read(fd, 4096) if ready else b""


def test_raw_mode_keeps_input_typed_before_it_and_restores_the_terminal() -> None:
    master, slave = pty.openpty()
    try:
        before = termios.tcgetattr(slave)
        os.write(master, b"ls -l\n")
        select.select([slave], [], [], 1.0)  # the line discipline has the typed line
        with _raw_terminal(slave):
            assert not termios.tcgetattr(slave)[3] & termios.ICANON
            got = _read_ready(slave)
        assert got == b"ls -l\n"
        assert termios.tcgetattr(slave) == before
    finally:
        os.close(master)
        os.close(slave)
