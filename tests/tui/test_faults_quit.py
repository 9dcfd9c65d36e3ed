"""`q` quits the console within 500 ms whatever the network does: the console runs in a
pseudo-terminal against the sandbox through a relay that adds 5 s of latency or blackholes
every byte; the time is measured from the key press to the process's exit, ten tries each.

Most tries start the console with the fault already on (its first lists and TLS handshakes
are stuck in flight); the others let it go live first and press `q` once its top bar shows
the degraded connection (workers blocked on open watches, probes and reconnects).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SandboxHandle
from tests.support.console import ConsoleProcess
from tests.support.relay import Relay, relayed_kubeconfig, server_address
from tests.support.wait import wait_for

pytestmark = [pytest.mark.tui, pytest.mark.integration, pytest.mark.sandbox]

TRIES = 10
LIVE_FIRST = 3
"""Of the ten tries, how many go live before the fault starts."""
QUIT_SECONDS = 0.5


@pytest.fixture
def relay(sandbox: SandboxHandle, crds: None) -> Iterator[Relay]:
    with Relay(server_address(sandbox.kubeconfig)) as relay:
        yield relay


def _console(kubeconfig: Path, home: Path) -> ConsoleProcess:
    env = {"GRYVIA_CONFIG_HOME": str(home), "KUBECONFIG": str(kubeconfig)}
    return ConsoleProcess(["--kubeconfig", str(kubeconfig), "tui", "-n", "default"], env=env)


def _painted(console: ConsoleProcess, *words: str) -> bool:
    out = console.output
    return any(w in out for w in words)


def _quit_times(relay: Relay, tmp_path: Path, sandbox: SandboxHandle, fault: str) -> list[float]:
    kubeconfig = relayed_kubeconfig(sandbox.kubeconfig, tmp_path / "relayed", relay)
    times = []
    for attempt in range(TRIES):
        relay.forward()
        relay.set_latency(0.0)
        times.append(
            _one_try(relay, kubeconfig, tmp_path / "home", fault, attempt >= TRIES - LIVE_FIRST)
        )
    relay.forward()
    relay.set_latency(0.0)
    return times


def _one_try(relay: Relay, kubeconfig: Path, home: Path, fault: str, live_first: bool) -> float:
    """Start the console, bring the fault on (before or after it went live), press q."""
    if not live_first:
        _apply(relay, fault)
    accepted = relay.accepted
    with _console(kubeconfig, home) as console:
        if live_first:
            wait_for(lambda: _painted(console, "● live"), timeout=60, what="live")
            mark = console.mark()
            _apply(relay, fault)
            wait_for(
                lambda: any(w in console.since(mark) for w in ("slow", "reconnecting")),
                timeout=60,
                what=f"the top bar showing the {fault}",
            )
        else:
            wait_for(lambda: _painted(console, "connecting"), timeout=60, what="first paint")
            wait_for(lambda: relay.accepted > accepted, timeout=30, what="a connection in flight")
        seconds = console.press_and_time_exit("q")
        assert console.proc.returncode == 0, console.output[-2000:]
        return seconds


def _apply(relay: Relay, fault: str) -> None:
    if fault == "latency":
        relay.set_latency(5.0)
    else:
        relay.blackhole()


@pytest.mark.parametrize("fault", ["latency", "blackhole"])
def test_q_quits_within_half_a_second(
    relay: Relay, tmp_path: Path, sandbox: SandboxHandle, fault: str
) -> None:
    times = _quit_times(relay, tmp_path, sandbox, fault)
    print(f"q under {fault}: " + " ".join(f"{t * 1000:.0f}ms" for t in times))
    slow = [f"{t:.3f}s" for t in times if t > QUIT_SECONDS]
    assert not slow, f"q took more than {QUIT_SECONDS}s under {fault}: {slow} of {times}"
