"""Quit benchmark: seconds from `q` to the console's exit while the network misbehaves.

A one-node sandbox behind a loopback relay that adds 5 s of latency or blackholes every byte;
twenty tries per fault (five of them after the console went live). Prints the median, p90 and
maximum against the target of 500 ms. Run with `python -m tests.bench_quit`.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import uuid
from pathlib import Path

TRIES = 20
LIVE_FIRST = 5
TARGET_SECONDS = 0.5


def main() -> None:
    """Bring a sandbox up, time the quits under each fault, print, tear it down."""
    from gryvia_cli.sandbox import binaries, cluster
    from tests.support.operator import apply_crds
    from tests.support.quitting import FAULTS, quit_times
    from tests.support.relay import Relay, relayed_kubeconfig, server_address

    with tempfile.TemporaryDirectory(prefix="gryvia-bench-quit-") as home:
        os.environ["GRYVIA_SANDBOX_HOME"] = home
        name = f"bquit-{uuid.uuid4().hex[:4]}"
        box = cluster.up(name, "1xH100:8")
        try:
            apply_crds(binaries.path_of("kubectl"), box.kubeconfig)
            with Relay(server_address(box.kubeconfig)) as relay:
                kubeconfig = relayed_kubeconfig(box.kubeconfig, Path(home) / "relayed", relay)
                for fault in FAULTS:
                    times = sorted(
                        quit_times(
                            relay, kubeconfig, Path(home) / "console", fault, TRIES, LIVE_FIRST
                        )
                    )
                    p90 = times[int(len(times) * 0.9) - 1]
                    verdict = "met" if times[-1] <= TARGET_SECONDS else "missed"
                    print(
                        f"q -> exit under {fault}, {len(times)} tries: median "
                        f"{statistics.median(times) * 1000:.0f} ms, p90 {p90 * 1000:.0f} ms, "
                        f"max {times[-1] * 1000:.0f} ms (target max <= "
                        f"{TARGET_SECONDS * 1000:.0f} ms: {verdict})",
                        flush=True,
                    )
        finally:
            cluster.down(name)


if __name__ == "__main__":
    main()
