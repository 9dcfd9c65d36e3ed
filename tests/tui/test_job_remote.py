"""The Job view's shell (`s`) and port-forward (`F`) keys: the console suspends and runs
`gryvia shell` / `gryvia port-forward` for the job, with its namespace and context."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from gryvia_cli.tui import make_app
from gryvia_cli.tui.app import GryviaApp
from gryvia_cli.tui.screens.dialogs import PromptDialog
from gryvia_cli.tui.screens.job import JobScreen
from gryvia_cli.tui.suspended import gryvia_argv
from tests.tui.builders import NOW
from tests.tui.fake import FakeSource
from tests.tui.waits import settle, wait_until

pytestmark = [pytest.mark.tui]


def test_argv_names_the_consoles_context_kubeconfig_and_namespace() -> None:
    argv = gryvia_argv(["shell", "j"], namespace="ns", context="ctx", kubeconfig="/k/config")
    assert argv == [
        *(sys.executable, "-m", "gryvia_cli", "--kubeconfig", "/k/config", "--context", "ctx"),
        *("shell", "j", "-n", "ns"),
    ]
    assert gryvia_argv(["shell", "j"], namespace="ns", context="", kubeconfig=None)[3:] == [
        "shell",
        "j",
        "-n",
        "ns",
    ]


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The argv of each command the console runs suspended (nothing is run)."""
    calls: list[list[str]] = []

    @contextlib.contextmanager
    def suspend(self: Any) -> Iterator[None]:
        yield

    def run(argv: list[str], check: bool = False) -> subprocess.CompletedProcess[bytes]:
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0)

    monkeypatch.setattr(GryviaApp, "suspend", suspend)
    monkeypatch.setattr(subprocess, "run", run)
    return calls


async def test_shell_and_port_forward_keys_run_gryvia_for_the_job(
    fake_source: FakeSource, ran: list[list[str]]
) -> None:
    app = make_app(fake_source, clock=lambda: NOW)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        app.open_job("tenant-acme/llama-pretrain", "overview")
        await wait_until(pilot, lambda: isinstance(app.screen, JobScreen), what="job view")
        await pilot.press("s")
        await wait_until(pilot, lambda: len(ran) == 1, what="gryvia shell")
        assert ran[0][3:][-4:] == ["shell", "llama-pretrain", "-n", "tenant-acme"]
        await pilot.press("F")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptDialog), what="prompt")
        await pilot.press(*"8888:8000", "enter")
        await wait_until(pilot, lambda: len(ran) == 2, what="gryvia port-forward")
        assert ran[1][-5:] == ["port-forward", "llama-pretrain", "8888:8000", "-n", "tenant-acme"]
        assert isinstance(app.screen, JobScreen)
