"""Time `q` in the console while the network misbehaves: shared by the fault test and the bench.

Each try starts `gryvia tui` in a pseudo-terminal against a relayed kubeconfig, brings the fault
on (before the console starts, or once it went live and its top bar shows the fault), presses
`q` and measures the seconds to the process's exit.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from tests.support.console import ConsoleProcess
from tests.support.relay import Relay
from tests.support.wait import wait_for

FAULTS = ("latency", "blackhole")
DEADLINE_NOTE = "closing took over"
"""What `gryvia_cli.tui.driver.exit_by_deadline` writes before the stacks."""
LATENCY_SECONDS = 5.0


def apply_fault(relay: Relay, fault: str) -> None:
    """`latency`: 5 s one way on every byte; `blackhole`: nothing passes either way."""
    if fault == "latency":
        relay.set_latency(LATENCY_SECONDS)
    else:
        relay.blackhole()


def quit_times(
    relay: Relay, kubeconfig: Path, home: Path, fault: str, tries: int, live_first: int
) -> list[float]:
    """Seconds from `q` to exit for `tries` tries; the last `live_first` go live first.

    `kubeconfig` must point at `relay`; the relay is back to forwarding afterwards.
    Raises AssertionError when the console does not start, paint or exit 0.
    """
    times = []
    for attempt in range(tries):
        relay.forward()
        relay.set_latency(0.0)
        times.append(_one_try(relay, kubeconfig, home, fault, attempt >= tries - live_first))
    relay.forward()
    relay.set_latency(0.0)
    return times


def _one_try(relay: Relay, kubeconfig: Path, home: Path, fault: str, live_first: bool) -> float:
    if not live_first:
        apply_fault(relay, fault)
    accepted = relay.accepted
    env = {"GRYVIA_CONFIG_HOME": str(home), "KUBECONFIG": str(kubeconfig)}
    args = ["--kubeconfig", str(kubeconfig), "tui", "-n", "default"]
    with ConsoleProcess(args, env=env) as console:
        if live_first:
            wait_for(lambda: "● live" in console.output, timeout=60, what="live")
            mark = console.mark()
            apply_fault(relay, fault)
            wait_for(
                lambda: any(w in console.since(mark) for w in ("slow", "reconnecting")),
                timeout=60,
                what=f"the top bar showing the {fault}",
            )
        else:
            wait_for(lambda: "connecting" in console.output, timeout=60, what="first paint")
            wait_for(lambda: relay.accepted > accepted, timeout=30, what="a connection in flight")
        seconds = console.press_and_time_exit("q")
        assert console.proc.returncode == 0, console.output[-2000:]
        if DEADLINE_NOTE in console.output:  # closing hung: the deadline ended it (a bug)
            text = console.output
            warnings.warn(
                f"q under {fault}: {text[text.find(DEADLINE_NOTE) :][:6000]}", stacklevel=1
            )
        return seconds
