"""README's "Using it" block, line by line, on a fresh `gryvia sandbox up`, as a new user runs
it: every line succeeds. The lines are read from README.md, so the README cannot drift from
what works.

What the test adds to each line, and nothing else: its own sandbox name, kubeconfig and config
folder (so nothing of the user's is touched), the wait a user makes before `exec` (until the
dev-ddp pods run), keys typed into the interactive lines (`shell`, `tui`), a request and a
Ctrl-C for `port-forward`, and the shell's `> usage.csv` written by the test.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import pytest

from tests.support.cli import run_gryvia, sigint_as_at_a_terminal
from tests.support.console import ConsoleProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

ROOT = Path(__file__).resolve().parents[2]


def using_it_lines() -> list[list[str]]:
    """The commands of README's "Using it" block, split as a shell splits them (comments
    dropped)."""
    text = (ROOT / "README.md").read_text()
    block = text.split("## Using it", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def test_the_block_is_what_this_test_knows() -> None:
    """A new README line must be taught to the test below (an interactive one needs keys)."""
    heads = [" ".join(words[1:3]) for words in using_it_lines()]
    assert all(words[0] == "gryvia" for words in using_it_lines())
    assert heads[0] == "sandbox up" and "tui -A" in heads


def _running(env: dict[str, str], job: str, pods: int) -> bool:
    done = run_gryvia("status", job, "-o", "json", env=env)
    if done.returncode != 0:
        return False
    items = json.loads(done.stdout).get("pods") or []
    return sum(1 for p in items if (p.get("status") or {}).get("phase") == "Running") == pods


def _port_forward(args: list[str], env: dict[str, str]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "gryvia_cli", *args],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_at_a_terminal,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("Forwarding from 127.0.0.1:6006"), first

        def served() -> bytes | None:
            try:
                with urllib.request.urlopen("http://127.0.0.1:6006/", timeout=5) as reply:
                    return reply.read()
            except OSError:
                return None

        assert b"Directory listing" in wait_for(served, timeout=30, what="the forwarded page")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) in (0, 130), proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _shell(args: list[str], env: dict[str, str]) -> None:
    with ConsoleProcess(args[1:], env=env, cwd=ROOT) as shell:
        prompt = wait_for(
            lambda: shell.output.rstrip().endswith(("#", "$")), timeout=30, what="a prompt"
        )
        assert prompt, shell.tail()
        shell.press("echo shell-rank=$RANK\r")
        try:
            wait_for(lambda: "shell-rank=0" in shell.output, timeout=30, what="the echo")
        except AssertionError as exc:
            raise AssertionError(shell.tail()) from exc
        shell.press("exit\r")
        shell.proc.wait(timeout=30)
        assert shell.proc.returncode == 0, shell.tail()


def _tui(args: list[str], env: dict[str, str]) -> None:
    with ConsoleProcess(args[1:], env=env, cwd=ROOT, columns=160, rows=48) as console:
        try:
            wait_for(lambda: "dev-ddp" in console.output, timeout=60, what="the job's row")
        except AssertionError as exc:
            raise AssertionError(console.tail()) from exc
        assert console.press_and_time_exit("q") < 30
        assert console.proc.returncode == 0, console.tail()


def test_using_it_line_by_line_on_a_fresh_sandbox(tmp_path: Path) -> None:
    name = f"readme-{uuid.uuid4().hex[:6]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env |= {
        "GRYVIA_SANDBOX_HOME": str(tmp_path / "home"),
        "GRYVIA_CONFIG_HOME": str(tmp_path / "config"),
        "KUBECONFIG": str(tmp_path / "kubeconfig"),
        "NO_COLOR": "1",
    }
    lines = using_it_lines()
    try:
        for words in lines:
            args = words[1:]
            if args[:2] == ["sandbox", "up"]:
                args += ["--name", name]
            if args[0] == "exec":  # a user waits for the pods first
                wait_for(lambda: _running(env, "dev-ddp", 2), timeout=90, what="dev-ddp running")
            if args[0] == "shell":
                _shell(words, env)
                continue
            if args[0] == "tui":
                _tui(words, env)
                continue
            if args[0] == "port-forward":
                _port_forward(args, env)
                continue
            target = None
            if ">" in args:
                target = tmp_path / args[args.index(">") + 1]
                args = args[: args.index(">")]
            done = run_gryvia(*args, env=env, cwd=ROOT, timeout=300)
            assert done.returncode == 0, f"{shlex.join(words)}\n{done.stdout}\n{done.stderr}"
            if args[:2] == ["submit", "-f"] and "--logs" in args:
                assert "all 2 ranks joined" in done.stdout, done.stdout
            if args[0] == "exec":
                assert done.stdout.strip() == "1", done.stdout
            if target is not None:
                target.write_text(done.stdout)
                assert done.stdout.splitlines()[0].startswith("sku,"), done.stdout
    finally:
        run_gryvia("sandbox", "down", "--name", name, "--yes", env=env, timeout=120)
