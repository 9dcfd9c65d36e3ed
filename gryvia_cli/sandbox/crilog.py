"""Container log files in the CRI format that kwok-controller serves to `kubectl logs`.

Each line is `<RFC3339Nano time> <stream> <tag> <text>` with tag `F` (full line) or `P`
(partial: the process wrote no newline before exiting), as the kubelet's CRI runtimes write.
"""

from __future__ import annotations

import datetime as dt
import shutil
import threading
from pathlib import Path
from typing import IO


def cri_line(
    stream: str, text: bytes, *, partial: bool = False, now: dt.datetime | None = None
) -> bytes:
    """Return one CRI log record for `text` (without its newline) on `stream` (stdout|stderr)."""
    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return b"%s %s %s %s\n" % (stamp.encode(), stream.encode(), b"P" if partial else b"F", text)


class CriLogWriter:
    """Appends the stdout and stderr of one container to one CRI log file, thread-safely."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file = path.open("ab", buffering=0)
        self._lock = threading.Lock()

    def pump(self, pipe: IO[bytes], stream: str) -> threading.Thread:
        """Start a daemon thread that copies `pipe` line by line until EOF; return it."""
        thread = threading.Thread(target=self._copy, args=(pipe, stream), daemon=True)
        thread.start()
        return thread

    def write(self, stream: str, text: bytes, *, partial: bool = False) -> None:
        """Append one record."""
        with self._lock:
            self._file.write(cri_line(stream, text, partial=partial))

    def _copy(self, pipe: IO[bytes], stream: str) -> None:
        with pipe:
            for raw in iter(pipe.readline, b""):
                if raw.endswith(b"\n"):
                    self.write(stream, raw[:-1])
                else:
                    self.write(stream, raw, partial=True)

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._file.close()


def previous_log(logs_dir: Path, container: str) -> Path:
    """The file kwok serves to `kubectl logs --previous`: the container's log as it was when
    the container last restarted (absent until then, so the request fails as a kubelet's)."""
    return logs_dir / f"{container}.previous.log"


def keep_previous_log(logs_dir: Path, container: str) -> None:
    """Copy the container's log to `previous_log` before the container starts again. The log
    file itself keeps growing across restarts (as before), so the copy holds every earlier
    instance's lines, the last one's at the end."""
    source = logs_dir / f"{container}.log"
    if source.exists():
        shutil.copyfile(source, previous_log(logs_dir, container))
