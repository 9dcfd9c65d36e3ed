"""The console's terminal driver: suspending (the Job view's shell and port-forward keys)
waits for the input thread, so the resumed console reads keys again."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest

from gryvia_cli.tui.driver import quick_driver

linux_driver = pytest.importorskip("textual.drivers.linux_driver")


def _driver_polling_a_pipe() -> tuple[Any, int]:
    """A QuickExitDriver (not started) whose input thread polls a pipe in 100 ms steps, as
    Textual's does; returns it and the pipe's write end."""
    cls = quick_driver(linux_driver.LinuxDriver)
    driver = cls.__new__(cls)
    read_fd, write_fd = os.pipe()
    driver.fileno = read_fd
    driver.exit_event = threading.Event()
    driver.attrs_before = None
    for name in (
        "_disable_mouse_support",
        "_disable_bracketed_paste",
        "_enable_line_wrap",
        "_disable_in_band_window_resize",
        "flush",
        "close",
    ):
        setattr(driver, name, lambda: None)
    driver.write = lambda data: None

    def poll() -> None:
        import select

        while not driver.exit_event.is_set():
            select.select([read_fd], [], [], 0.1)
        select.select([read_fd], [], [], 0.1)  # Textual's last poll after the stop flag

    driver._key_thread = threading.Thread(target=poll, daemon=True)
    driver._key_thread.start()
    return driver, write_fd


def test_suspend_waits_for_the_input_thread_and_clears_the_stop_flag() -> None:
    driver, write_fd = _driver_polling_a_pipe()
    try:
        driver.suspend_application_mode()
        assert not driver._key_thread.is_alive()
        # A set flag would end the input thread that resume_application_mode starts.
        assert not driver.exit_event.is_set()
    finally:
        os.close(write_fd)
        os.close(driver.fileno)


def test_exit_still_does_not_wait_out_the_input_threads_polls() -> None:
    driver, write_fd = _driver_polling_a_pipe()
    try:
        driver.stop_application_mode()
        assert driver._key_thread.is_alive()  # ends by itself; the console is exiting
        driver._key_thread.join(1)
    finally:
        os.close(write_fd)
        os.close(driver.fileno)


def test_a_close_that_hangs_ends_the_process_by_the_deadline_with_every_threads_stack() -> None:
    import subprocess
    import sys
    import time

    script = (
        "import threading\n"
        "from gryvia_cli.tui.driver import exit_by_deadline\n"
        "exit_by_deadline(None, 3, seconds=0.2)\n"
        "threading.Event().wait()  # the close that never returns\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 3, done.stderr
    assert time.monotonic() - started >= 0.2
    assert "closing took over 0.2 s; ended without waiting" in done.stderr
    assert "most recent call first" in done.stderr  # the stacks (faulthandler's format)
    assert "\x1b[?1049l" in done.stdout  # the alternate screen is left
