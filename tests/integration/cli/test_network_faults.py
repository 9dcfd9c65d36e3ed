"""Long-running commands through a relay that stalls (blackhole) or cuts the API connection.

`submit --wait --logs`, `logs -f` and `status --watch` run as subprocesses with a kubeconfig
pointed at a loopback relay (tests/support/relay.py) in front of the sandbox's API server; the
test checks the cluster directly (kubectl, not through the relay). A long blackhole (90 s under
`make test`: the console says "unreachable" 60 s after its first failed request, which comes up
to 30 s into the stall; 120 s under `make test-all`) ends none of them: each says `reconnecting
to the API server` within 30 s, and each succeeds within 10 s of forwarding resuming with every
log line exactly once; the console (`gryvia tui`, in a pty through the same relay, in the same
window: one wait for both) says it reconnects and converges within 10 s. Cutting every
connection several times under `logs -f` loses and repeats no line either.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.builders import job_yaml, sh_job
from tests.integration.cli.conftest import CliCase, kubectl_json, wait_for_phase
from tests.support.console import ConsoleProcess
from tests.support.depth import amount
from tests.support.relay import Relay, relayed_kubeconfig, server_address
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

RECONNECTING = "reconnecting to the API server (attempt 1, last error: "
BLACKHOLE_SECONDS = amount(90, 120)


def numbered_job(tmp_path: Path, name: str, lines: int, interval: float) -> str:
    """A job printing `line 1` ... `line <lines>`, one every `interval` seconds."""
    path = tmp_path / f"{name}.yaml"
    script = f'for i in $(seq 1 {lines}); do echo "line $i"; sleep {interval}; done'
    path.write_text(job_yaml(name, gpus=0, gpu_type=None, image="python:3.12-slim", script=script))
    return str(path)


@dataclass
class Running:
    """A `gryvia` subprocess whose stdout and stderr go to files the test reads as it runs."""

    proc: subprocess.Popen[bytes]
    out: Path
    err: Path

    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def finish(self, timeout: float) -> int:
        """Wait for the exit (AssertionError with its output after `timeout` seconds)."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(
                f"still running after {timeout:.0f}s\nstdout: {self.stdout()[-2000:]}\n"
                f"stderr: {self.stderr()[-3000:]}"
            ) from None

    def says(self, text: str) -> bool:
        return text in self.stderr()


Start = Callable[..., "Running"]


@pytest.fixture
def relay(case: CliCase) -> Iterator[Relay]:
    with Relay(server_address(case.sandbox.kubeconfig)) as running:
        yield running


@pytest.fixture
def start(case: CliCase, relay: Relay) -> Iterator[Start]:
    """Start `gryvia ARGS...` through the relay; returns a Running. Kills leftovers."""
    kubeconfig = relayed_kubeconfig(
        case.sandbox.kubeconfig, case.tmp_path / "relayed" / "kubeconfig", relay
    )
    started: list[Running] = []

    def run(label: str, *args: str) -> Running:
        from tests.integration.cli.conftest import REPO

        env = _cli_env(case, kubeconfig)
        out, err = case.tmp_path / f"{label}.out", case.tmp_path / f"{label}.err"
        with out.open("wb") as o, err.open("wb") as e:
            proc = subprocess.Popen(
                [sys.executable, "-m", "gryvia_cli", *args], env=env, stdout=o, stderr=e, cwd=REPO
            )
        running = Running(proc, out, err)
        started.append(running)
        return running

    yield run
    for running in started:
        if running.proc.poll() is None:
            running.proc.kill()
            running.proc.wait()


def _cli_env(case: CliCase, kubeconfig: Path) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env.update(
        KUBECONFIG=str(kubeconfig),
        GRYVIA_CONFIG_HOME=str(case.tmp_path / "gryvia-config"),
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
    )
    return env


def printed_lines(text: str, count: int) -> None:
    assert text.splitlines() == [f"line {n}" for n in range(1, count + 1)], text[-3000:]


def _answering(text: str) -> bool:
    """The console's top bar says the API server answers: live, or slow (over 2 s, as a
    loaded CI machine may answer)."""
    return "● live" in text or "◐ slow" in text


def _suspended(name: str, namespace: str) -> dict[str, Any]:
    return sh_job(name, gpus=1, gpu_type="H100", script="true", namespace=namespace, suspend=True)


def test_a_long_blackhole_ends_no_wait_loses_no_line_and_the_console_converges(
    case: CliCase, relay: Relay, start: Start
) -> None:
    """One window (BLACKHOLE_SECONDS) for the CLI and the console (each proof used to hold its own).

    CLI: `submit --wait --logs`, `logs -f` and `status --watch` say they reconnect within
    30 s, none gives up, each ends within 10 s of forwarding resuming, no line lost.
    Console (a real process in a pty, through the same relay): the top bar says
    `reconnecting (attempt N, ...)` within 30 s and `unreachable` after 60 s, and a job
    created meanwhile (a job, not a phase: the operator rewrites phases) is on screen within
    10 s of forwarding resuming."""
    run = start
    ns, name, lines = case.namespace, "stall", 50
    steady, later = "steady", f"later-{uuid.uuid4().hex[:6]}"
    case.sandbox.apply(_suspended(steady, ns))
    submit = run(
        "submit",
        "submit",
        *("-f", numbered_job(case.tmp_path, name, lines, 1), "-n", ns),
        *("--wait", "--logs", "--wait-timeout", "10m"),
    )
    relayed = case.tmp_path / "relayed" / "kubeconfig"
    env = {"GRYVIA_CONFIG_HOME": str(case.tmp_path / "console-home"), "KUBECONFIG": str(relayed)}
    console_args = ["--kubeconfig", str(relayed), "tui", "-n", ns]
    with ConsoleProcess(console_args, env=env, columns=160) as console:
        wait_for(lambda: "line 3" in submit.stdout(), timeout=180, what="submit --logs streaming")
        follow = run("logs", "logs", name, "-f", "-n", ns)
        watch = run("status", "status", name, "--watch", "-n", ns)
        wait_for(lambda: "line 5" in follow.stdout(), timeout=60, what="logs -f streaming")
        wait_for(watch.stdout, timeout=60, what="status --watch showing the job")
        try:
            wait_for(
                lambda: _answering(console.output) and steady in console.output,
                timeout=60,
                what="the console live with the job row",
            )
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the console wrote: {console.tail()}") from None

        relay.blackhole()
        stalled = time.monotonic()
        at_stall = console.mark()
        wait_for(
            lambda: "reconnecting (attempt" in console.since(at_stall),
            timeout=30,
            interval=0.1,
            what="the console's top bar saying reconnecting",
        )
        shown_after = time.monotonic() - stalled
        assert shown_after <= 30
        case.sandbox.apply(_suspended(later, ns))  # straight to the API server
        marked = console.mark()
        everyone = {"submit": submit, "logs -f": follow, "status --watch": watch}
        for label, proc in everyone.items():
            wait_for(
                lambda proc=proc: proc.says(RECONNECTING),
                timeout=max(1.0, stalled + 30 - time.monotonic()),
                interval=0.5,
                what=f"{label} saying it reconnects within 30 s of the stall",
            )
        wait_for_phase(case.sandbox, ns, name, "Succeeded")  # the job ends during the stall
        wait_for(
            lambda: time.monotonic() - stalled >= BLACKHOLE_SECONDS,
            timeout=BLACKHOLE_SECONDS + 10,
            interval=0.5,
            what=f"the end of the {BLACKHOLE_SECONDS} s blackhole",
        )
        for label, proc in everyone.items():
            assert proc.proc.poll() is None, f"{label} gave up during the stall: {proc.stderr()}"
            assert proc.stderr().count("reconnecting to the API server") <= 20, proc.stderr()
        during = console.since(marked)
        assert not _answering(during) and later not in during
        assert "unreachable (attempt" in during  # failing for more than 60 s

        relay.forward()
        resumed, mark = time.monotonic(), console.mark()
        wait_for(
            lambda: later in console.since(mark),
            timeout=10,
            interval=0.1,
            what="the new job on the console after forwarding resumed",
        )
        converged = time.monotonic() - resumed
        for label, proc in everyone.items():
            code = proc.finish(timeout=60)
            took = time.monotonic() - resumed
            assert code == 0, f"{label} exited {code}: {proc.stderr()[-3000:]}"
            assert took <= 10, f"{label} ended {took:.1f}s after forwarding resumed"
            assert proc.says("reconnected to the API server"), proc.stderr()
        wait_for(lambda: _answering(console.since(mark)), timeout=10)
        assert converged <= 10
        print(f"console: reconnecting shown after {shown_after:.1f}s; converged {converged:.1f}s")
        console.press_and_time_exit("q")
    printed_lines(follow.stdout(), lines)
    printed_lines(submit.stdout().split("\n", 1)[1], lines)  # after its created-name line
    assert f"job {name} Succeeded" in submit.stderr()


def test_cut_connections_under_logs_follow_repeat_and_lose_no_line(
    case: CliCase, relay: Relay, start: Start
) -> None:
    run = start
    ns, name, lines = case.namespace, "cuts", 40
    created = case.gryvia("submit", "-f", numbered_job(case.tmp_path, name, lines, 0.7), "-n", ns)
    assert created.returncode == 0, created.stderr
    follow = run("logs", "logs", name, "-f", "-n", ns)
    seen = 0
    for _ in range(5):
        wait_for(
            lambda seen=seen: len(follow.stdout().splitlines()) > seen + 2,
            timeout=120,
            interval=0.2,
            what="new lines before the next cut",
        )
        seen = len(follow.stdout().splitlines())
        assert relay.cut() >= 1
    code = follow.finish(timeout=120)
    assert code == 0, follow.stderr()
    printed_lines(follow.stdout(), lines)
    assert relay.cuts >= 5
    job = kubectl_json(case.sandbox, "get", "gryviaaijob", name, "-n", ns)
    assert job["status"]["phase"] == "Succeeded"
