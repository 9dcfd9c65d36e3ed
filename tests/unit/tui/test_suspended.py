"""Commands the console runs suspended: Ctrl-C (SIGINT to the terminal's foreground process
group) stops the command, not the console."""

from __future__ import annotations

import io
import signal
import sys

from gryvia_cli.tui.suspended import run_in_foreground, wait_after_failure

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


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_failed_command_waits_for_enter_so_its_error_stays_readable() -> None:
    stdin, stderr = _Terminal("\n"), io.StringIO()
    assert wait_after_failure("port-forward", 2, stdin=stdin, stderr=stderr)
    assert "gryvia port-forward ended with exit code 2; press Enter" in stderr.getvalue()
    assert stdin.read() == ""  # the Enter was read


def test_success_ctrl_c_and_no_terminal_do_not_wait() -> None:
    for code in (0, 130, -signal.SIGINT):
        assert not wait_after_failure("shell", code, stdin=_Terminal("\n"), stderr=io.StringIO())
    assert not wait_after_failure("shell", 1, stdin=io.StringIO("\n"), stderr=io.StringIO())
