"""Running the `gryvia` CLI as a user would, in a subprocess (`python -m gryvia_cli`)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def run_gryvia(
    *args: str,
    env: Mapping[str, str],
    timeout: float = 180,
    cwd: Path | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `gryvia ARGS...` with `env` and return the finished process (never raises for a
    non-zero exit; raises subprocess.TimeoutExpired after `timeout` seconds)."""
    return subprocess.run(
        [sys.executable, "-m", "gryvia_cli", *args],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
        check=False,
    )


def sigint_as_at_a_terminal() -> None:
    """`preexec_fn` giving a child Ctrl-C's default disposition, as a terminal does: a runner
    that started the suite in the background (`cmd &` in a script) ignores SIGINT, and an
    ignored signal stays ignored across exec, so a test's Ctrl-C would never reach it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
