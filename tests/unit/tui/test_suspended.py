"""Commands the console runs suspended: Ctrl-C (SIGINT to the terminal's foreground process
group) stops the command, not the console."""

from __future__ import annotations

import signal
import sys

from gryvia_cli.tui.suspended import run_in_foreground

# The command sends SIGINT to the console (its parent) and to itself, as Ctrl-C does to the
# whole foreground process group, then would print and exit 0 if it survived.
CTRL_C = (
    "import os, signal, time\n"
    "os.kill(os.getppid(), signal.SIGINT)\n"
    "os.kill(os.getpid(), signal.SIGINT)\n"
    "time.sleep(5)\n"
)


def test_ctrl_c_stops_the_command_and_not_the_console() -> None:
    before = signal.getsignal(signal.SIGINT)
    code = run_in_foreground([sys.executable, "-c", CTRL_C])
    assert code in (130, -signal.SIGINT)  # the command got the default SIGINT behaviour
    assert signal.getsignal(signal.SIGINT) is before  # the console's handler is back


def test_exit_code_of_the_command() -> None:
    assert run_in_foreground([sys.executable, "-c", "raise SystemExit(3)"]) == 3
