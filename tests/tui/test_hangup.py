"""A console whose terminal goes away (SIGHUP: window, tmux pane or ssh session closed) ends
at once instead of running on without a screen."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import yaml

from tests.support.console import ConsoleProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.tui]


def _unreachable_kubeconfig(path: Path) -> Path:
    """A kubeconfig whose server listens nowhere (port 9 on loopback): the console still opens."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_hangup_ends_the_console_with_code_129(tmp_path: Path) -> None:
    kubeconfig = _unreachable_kubeconfig(tmp_path / "kubeconfig")
    env = {"GRYVIA_CONFIG_HOME": str(tmp_path / "home"), "KUBECONFIG": str(kubeconfig)}
    with ConsoleProcess(["tui", "-n", "default"], env=env) as console:
        wait_for(lambda: "Jobs" in console.output, timeout=60, what="the first paint")
        os.kill(console.proc.pid, signal.SIGHUP)
        wait_for(lambda: console.proc.poll() is not None, timeout=30, what="the console's exit")
        assert console.proc.returncode == 129, console.output[-2000:]


def test_a_closed_terminal_ends_the_console_with_code_129(tmp_path: Path) -> None:
    """The pty master closed without a SIGHUP (the pty is not the console's controlling
    terminal): Textual alone would spin on end-of-file forever."""
    kubeconfig = _unreachable_kubeconfig(tmp_path / "kubeconfig")
    env = {"GRYVIA_CONFIG_HOME": str(tmp_path / "home"), "KUBECONFIG": str(kubeconfig)}
    with ConsoleProcess(["tui", "-n", "default"], env=env) as console:
        wait_for(lambda: "Jobs" in console.output, timeout=60, what="the first paint")
        os.close(console.master)
        console.master = os.open(os.devnull, os.O_RDWR)  # close() closes it again
        wait_for(lambda: console.proc.poll() is not None, timeout=30, what="the console's exit")
        assert console.proc.returncode == 129
