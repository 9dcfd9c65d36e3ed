"""Where sandboxes live and what one is made of: folders, files, pids, names.

A sandbox named N lives in `$GRYVIA_SANDBOX_HOME/clusters/N` (default
`~/.local/state/gryvia/sandbox`), kwokctl's work folder, with Gryvia's own files (pod runner
state, kubeconfig) under `gryvia/` inside it.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gryvia_cli.errors import GryviaError

NAME_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$")
RUNNER = "gryvia-pod-runner"
Progress = Callable[[str], None]


class SandboxError(GryviaError):
    """A sandbox operation failed; the message says what and how to fix it."""


def home() -> Path:
    """Root folder of all sandboxes (kwokctl's KWOK_WORKDIR)."""
    env = os.environ.get("GRYVIA_SANDBOX_HOME")
    if env:
        return Path(env)
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "gryvia" / "sandbox"


@dataclass(frozen=True)
class Sandbox:
    """One sandbox's folders and files, by name."""

    name: str

    @property
    def workdir(self) -> Path:
        """kwokctl's folder for this cluster."""
        return home() / "clusters" / self.name

    @property
    def state(self) -> Path:
        """Gryvia's files: pod runner state, pods, hosts file."""
        return self.workdir / "gryvia"

    @property
    def kubeconfig(self) -> Path:
        """A kubeconfig with the single context `gryvia-<name>`."""
        return self.state / "kubeconfig"

    @property
    def audit_log(self) -> Path:
        """The API server's audit log: one JSON line per create or delete of a Gryvia object
        (`data/audit-policy.yaml`), dry runs marked by `dryRun=All` in `requestURI`."""
        return self.workdir / "logs" / "audit.log"

    @property
    def context(self) -> str:
        """The kubeconfig context name."""
        return f"gryvia-{self.name}"

    def pids(self) -> dict[str, int]:
        """Component name -> pid, from kwokctl's and the runner's pid files."""
        out: dict[str, int] = {}
        for pid_file in sorted((self.workdir / "pids").glob("*.pid")):
            with contextlib.suppress(ValueError, OSError):
                out[pid_file.stem] = int(pid_file.read_text().strip())
        return out

    def alive(self) -> dict[str, bool]:
        """Component name -> whether its process is running."""
        return {name: pid_alive(pid) for name, pid in self.pids().items()}

    def start(self, component: str, argv: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
        """`start_logged` as the sandbox's `component`: logging to `logs/<component>.log`,
        its pid in `pids/<component>.pid` (which `pids` and `down` read)."""
        log = self.workdir / "logs" / f"{component}.log"
        return start_logged(argv, log, self.workdir / "pids" / f"{component}.pid", **popen)


def start_logged(
    argv: Sequence[str], log: Path, pid_file: Path, **popen: Any
) -> subprocess.Popen[bytes]:
    """Start `argv` in a session of its own (a terminal's Ctrl-C does not reach it) with no
    stdin, stdout and stderr appended to `log`, and write its pid to `pid_file` (folders
    created as needed); `popen`: more `subprocess.Popen` arguments. Raises OSError when it
    cannot be started."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            **popen,
        )
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.write_text(str(proc.pid))
    return proc


def pid_alive(pid: int) -> bool:
    """True when process `pid` exists and has not exited (zombies count as exited)."""
    with contextlib.suppress(OSError):  # a zombie has exited already
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def check_name(name: str) -> None:
    """Raise SandboxError unless `name` is a DNS label of at most 32 characters."""
    if not NAME_RE.match(name):
        raise SandboxError(
            f"--name {name!r} is not valid: use 1-32 lowercase letters, digits and '-', "
            "starting and ending with a letter or digit"
        )


def list_sandboxes() -> list[Sandbox]:
    """Return every sandbox with a folder, running or not."""
    root = home() / "clusters"
    return [Sandbox(p.name) for p in sorted(root.iterdir()) if p.is_dir()] if root.is_dir() else []
