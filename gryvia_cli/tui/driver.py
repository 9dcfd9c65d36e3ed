"""A terminal driver that lets `q` end the console at once.

Textual's Linux driver, on exit, joins its input thread, which polls the terminal in 100 ms
`select` calls and makes one more poll after being told to stop: up to 200 ms of the 500 ms
`q` may take. `quick_driver` returns a subclass that waits for that thread at most
`INPUT_JOIN_SECONDS` (it is a daemon thread that ends within 200 ms by itself); on other
platforms it returns Textual's own driver unchanged. When the console suspends (to hand the
terminal to `gryvia shell` or `port-forward`) it waits for that thread as Textual does: a
thread left polling would read the command's first keys, and the stop flag it keeps set
would end the input thread of the resumed console at once (no key would work any more).
"""

from __future__ import annotations

import contextlib
import signal

from textual.driver import Driver

INPUT_JOIN_SECONDS = 0.02


def quick_driver(default: type[Driver]) -> type[Driver]:
    """`default` (what Textual picked for this terminal), with a short input-thread join when
    it is the Linux/POSIX driver."""
    from textual.drivers.linux_driver import LinuxDriver

    if not issubclass(default, LinuxDriver):
        return default

    class QuickExitDriver(default):  # type: ignore[valid-type,misc]
        """LinuxDriver whose `disable_input` does not wait out the input thread's polls
        (unless the console suspends)."""

        _suspending = False

        def suspend_application_mode(self) -> None:
            """Suspend, waiting for the input thread to end (the console will resume)."""
            self._suspending = True
            try:
                super().suspend_application_mode()
            finally:
                self._suspending = False

        def disable_input(self) -> None:
            """Disable further input; wait at most INPUT_JOIN_SECONDS for the input thread
            (for as long as it takes when suspending)."""
            if self._suspending:
                super().disable_input()
                return
            if self.exit_event.is_set():
                return
            with contextlib.suppress(Exception):
                signal.signal(signal.SIGWINCH, signal.SIG_DFL)
                self._disable_mouse_support()
                self.exit_event.set()
                thread = self._key_thread
                if thread is not None:
                    thread.join(INPUT_JOIN_SECONDS)
                if thread is None or not thread.is_alive():
                    # A thread still polling keeps the flag set and ends by itself.
                    self.exit_event.clear()
                import termios

                with contextlib.suppress(termios.error):
                    termios.tcflush(self.fileno, termios.TCIFLUSH)

    return QuickExitDriver


HANGUP_EXIT_CODE = 129
"""128 + SIGHUP, the code a shell reports for a process its closed terminal hung up."""


def exit_on_hangup(fd: int) -> None:
    """End the process (code 129) as soon as terminal `fd` hangs up, from a daemon thread.

    A closed terminal window, tmux pane or pty master does not always send SIGHUP (not when
    the terminal is not the process's controlling one), and Textual's input thread then spins
    on end-of-file forever at full CPU. `poll` with an empty event mask wakes only for
    POLLHUP/POLLERR/POLLNVAL, so this reads nothing the console's input needs. Does nothing
    when `fd` is not a terminal (tests, pipes).
    """
    import os
    import select
    import threading

    if not os.isatty(fd):
        return

    def wait_for_hangup() -> None:
        poller = select.poll()
        poller.register(fd, 0)
        while True:
            for _, event in poller.poll():
                if event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    os._exit(HANGUP_EXIT_CODE)

    threading.Thread(target=wait_for_hangup, name="tty-hangup", daemon=True).start()


EXIT_DEADLINE_SECONDS = 1.5
"""How long the console may take to close once asked (`q`) before the process ends anyway:
three times the 500 ms `q` target, twice the slowest healthy quit seen on a loaded machine."""

_RESET = (
    "\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l"  # mouse reporting off
    "\x1b[?2004l\x1b[<u\x1b[?1049l\x1b[?25h\x1b[?1004l"  # paste, keyboard, alt screen, cursor
)
"""What Textual's driver writes when it leaves application mode (`stop_application_mode`)."""


def exit_by_deadline(
    driver: Driver | None, code: int, seconds: float = EXIT_DEADLINE_SECONDS
) -> None:
    """End the process with `code` `seconds` from now, from a daemon thread, unless it ended.

    Armed when the console is asked to close: the normal path returns from `App.run` and
    ends the process at once (`gryvia_cli.tui.run`), so this fires only when closing hangs
    (a worker, a lock, a teardown step waiting for the network). It then restores the
    terminal (the modes Textual sets, the tty attributes `driver` saved), writes one line
    and every thread's stack to stderr (for a bug report), and calls `os._exit(code)`.
    """
    import faulthandler
    import os
    import sys
    import termios
    import threading
    import time

    def force() -> None:
        time.sleep(seconds)
        fileno, attrs = getattr(driver, "fileno", None), getattr(driver, "attrs_before", None)
        with contextlib.suppress(Exception):
            if fileno is not None and attrs is not None:
                termios.tcsetattr(fileno, termios.TCSANOW, attrs)
        with contextlib.suppress(Exception):
            os.write(sys.__stdout__.fileno() if sys.__stdout__ else 1, _RESET.encode())
            note = f"gryvia tui: closing took over {seconds:g} s; ended without waiting.\n"
            os.write(2, note.encode())
            faulthandler.dump_traceback(file=sys.__stderr__ or 2, all_threads=True)
        os._exit(code)

    threading.Thread(target=force, name="exit-deadline", daemon=True).start()
