"""Run a terminal program in a pseudo-terminal and read its screen as a user would see it.

The benchmarks start Gryvia's console and k9s the same way through this: a pty of a fixed size,
every byte the program writes read on one thread, stamped with the time it arrived, and fed
into a `pyte` terminal emulator on another (so the emulator's parsing never delays a read), so
"the first frame that shows X" is the arrival time of the chunk after which the emulated
screen first shows X. Peak RSS is read from the kernel
(`VmHWM` in /proc/PID/status) while the program runs.
"""

from __future__ import annotations

import fcntl
import os
import queue
import re
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pyte

_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")
"""CSI, OSC and two-byte escape sequences."""
_PLAIN_TAIL = 65536


def _take_terminal() -> None:
    """In the child, after `setsid`: make the pty its controlling terminal (`/dev/tty`), which
    programs such as k9s open."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtyScreen:
    """A program running in a `columns`x`lines` pty; `screen_text()` is what it shows now.

    `wait(match, timeout)` blocks until `match(screen_lines)` is truthy after some chunk and
    returns that chunk's arrival time (`time.perf_counter()` seconds) and the value; it raises
    AssertionError naming `what` and the screen when `timeout` seconds pass or the program ends.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        columns: int = 160,
        lines: int = 48,
    ) -> None:
        self.screen = pyte.Screen(columns, lines)
        self.stream = pyte.ByteStream(self.screen)
        self._cond = threading.Condition()
        self._chunks = 0
        self._closed = False
        self._plain = ""
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        full_env = {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor"}
        full_env.update(env or {})
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=full_env,
            start_new_session=True,
            preexec_fn=_take_terminal,
            close_fds=True,
        )
        os.close(slave)
        self._master = master
        self._arrivals: queue.SimpleQueue[tuple[bytes, float]] = queue.SimpleQueue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._parser = threading.Thread(target=self._parse, daemon=True)
        self._reader.start()
        self._parser.start()

    def _read(self) -> None:
        """Read the pty and stamp each chunk as it arrives; the parser thread feeds the
        emulator, so a slow parse of one chunk never delays reading (and stamping) the next."""
        while True:
            try:
                data = os.read(self._master, 1 << 16)
            except OSError:
                data = b""
            self._arrivals.put((data, time.perf_counter()))
            if not data:
                return

    def _parse(self) -> None:
        while True:
            data, arrived = self._arrivals.get()
            with self._cond:
                if not data:
                    self._closed = True
                    self._cond.notify_all()
                    return
                self.stream.feed(data)
                text = _ESCAPES.sub("", data.decode("utf-8", "replace"))
                self._plain = (self._plain + text)[-_PLAIN_TAIL:]
                self._chunks += 1
                self._at = arrived
                self._cond.notify_all()

    def screen_lines(self) -> list[str]:
        """The rows of the screen now (call with the lock not held)."""
        with self._cond:
            return list(self.screen.display)

    def screen_text(self) -> str:
        """The screen now, one string."""
        return "\n".join(self.screen_lines())

    def wait(
        self, match: Callable[[list[str]], object], *, timeout: float, what: str
    ) -> tuple[float, object]:
        """(arrival time of the first chunk after which `match` holds, its value)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            seen = -1
            while True:
                if self._chunks != seen:
                    seen = self._chunks
                    value = match(list(self.screen.display))
                    if value:
                        return getattr(self, "_at", time.perf_counter()), value
                left = deadline - time.monotonic()
                if left <= 0 or (self._closed and self._chunks == seen):
                    screen = "\n".join(self.screen.display)
                    state = "ended" if self._closed else "still running"
                    raise AssertionError(
                        f"timed out waiting for {what} ({state}); screen:\n{screen}"
                    )
                self._cond.wait(min(left, 0.5))

    def wait_text(self, pattern: str, *, timeout: float, what: str = "") -> float:
        """Arrival time of the first frame where the regex `pattern` matches some row, or the
        text written last (escape sequences removed: a title drawn into a border, which
        the emulator may not place, still counts once written)."""
        rx = re.compile(pattern)
        at, _ = self.wait(
            lambda rows: any(rx.search(r) for r in rows) or rx.search(self._plain[-4096:]),
            timeout=timeout,
            what=what or pattern,
        )
        return at

    def send(self, keys: str | bytes) -> float:
        """Write keys to the program in one write; return the time just after it."""
        data = keys.encode() if isinstance(keys, str) else keys
        os.write(self._master, data)
        return time.perf_counter()

    def peak_rss_mb(self) -> float:
        """The program's peak resident set so far (VmHWM), in MB (MiB)."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text(encoding="ascii")
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise AssertionError(f"no VmHWM in /proc/{self.proc.pid}/status")

    def close(self) -> None:
        """End the program (its whole session) and the pty."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        os.close(self._master)
        self._reader.join(timeout=5)
        self._parser.join(timeout=5)
