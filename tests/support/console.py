"""The console (`gryvia tui`) in a pseudo-terminal, as a user runs it: type keys, read what it
draws, measure when the process ends.

The child gets a pty of `columns` x `rows` on stdin/stdout/stderr; a reader thread keeps every
byte it writes (`output`, escapes included) so tests can wait for words to be painted.
`press_and_time_exit` sends a key and returns the seconds from the write to the moment the
kernel reports the process gone (measured on exit, not on paint).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


class ConsoleProcess:
    """`gryvia ARGS...` running in a pty; use as a context manager (killed on exit)."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        columns: int = 140,
        rows: int = 40,
        cwd: Path | None = None,
    ) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        full_env = {
            **os.environ,
            **(env or {}),
            "TERM": "xterm-256color",
            "PYTHONFAULTHANDLER": "1",  # SIGABRT prints every thread's stack (see `stacks`)
        }
        full_env.pop("NO_COLOR", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gryvia_cli", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=full_env,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        self.master = master
        self._lock = threading.Lock()
        self._out = bytearray()
        self._reader = threading.Thread(target=self._read, name="console-pty", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self._out += data

    @property
    def output(self) -> str:
        """Everything the console wrote so far, decoded (escapes included)."""
        with self._lock:
            return self._out.decode("utf-8", "replace")

    def tail(self, chars: int = 1500) -> str:
        """The last `chars` characters written, escape sequences removed (for failure
        messages), and the exit code when the process has ended."""
        text = re.sub(
            r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-_])", "", self.output
        )
        code = self.proc.poll()
        ended = "" if code is None else f" [console exited {code}]"
        return repr(text[-chars:]) + ended

    def mark(self) -> int:
        """The output length now: pass to `since` to see only what is drawn later."""
        with self._lock:
            return len(self._out)

    def since(self, mark: int) -> str:
        """What the console wrote after `mark`."""
        with self._lock:
            return self._out[mark:].decode("utf-8", "replace")

    def press(self, keys: str) -> None:
        """Type `keys`."""
        os.write(self.master, keys.encode())

    def press_and_time_exit(self, key: str, timeout: float = 30.0) -> float:
        """Type `key` and return the seconds until the process exited (raises AssertionError
        when it is still running after `timeout`)."""
        start = time.monotonic()
        os.write(self.master, key.encode())
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the console still runs {timeout:.0f}s after {key!r}; its threads:\n"
                + self.stacks()
            ) from None
        return time.monotonic() - start

    def stacks(self, timeout: float = 10.0) -> str:
        """Abort the still-running console and return the thread stacks Python's fault
        handler printed (for failure messages: where a hang waits)."""
        mark = self.mark()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGABRT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and "Thread 0x" not in self.since(mark):
            time.sleep(0.05)
        text = self.since(mark)
        return text[text.find("Fatal Python error") :] if "Fatal Python" in text else text[-4000:]

    def close(self) -> None:
        """Kill the console (and its process group) if it still runs; close the pty."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        with contextlib.suppress(OSError):
            os.close(self.master)

    def __enter__(self) -> ConsoleProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
