"""The operator pod on the sandbox's real node: start to Ready, hand-over, rolling upgrade.

A sandbox with a real node (`gryvia sandbox up --real-node`: a kubelet with containerd, its
images from the sandbox's registry), then the FAQ's `helm install` line. It prints:

- the sandbox's start time with the real node (control plane, simulated nodes, registry,
  containerd, kubelet, node Ready);
- the operator pods' start to Ready after `helm install`: from the install command's start,
  and per pod from its creation as the API server recorded it (to the second) with its image
  pull time as the kubelet reported it;
- a graceful hand-over: the leading pod deleted (SIGTERM; it releases the Lease), the time until
  the other pod holds the Lease, and the replacement pod's creation to Ready;
- `helm upgrade` to a new image tag with a dry-run job only the webhook refuses sent every
  200 ms: the rollout's time and how many of those were not denied by the webhook (target 0).

Needs root, `make node-bin` and `make image`; prints why and stops when one is missing. Run:
`python -m tests.bench_realnode` (about two minutes).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from gryvia_cli.sandbox.sandboxes import Sandbox
from tests.support.realnode import (
    FAQ_LINE,
    NS,
    DryRuns,
    helm,
    kubectl,
    leader,
    operator_pods,
    ready,
    running_image,
)
from tests.support.wait import wait_for

PULLED = re.compile(r"Successfully pulled image .* in ([\d.]+m?s)")


def _stamp(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def _ready_seconds(pod: dict[str, object]) -> float:
    """Creation to the Ready condition, as the API server recorded both (whole seconds)."""
    meta, status = pod["metadata"], pod["status"]
    assert isinstance(meta, dict) and isinstance(status, dict)
    [cond] = [c for c in status["conditions"] if c["type"] == "Ready"]
    return (_stamp(cond["lastTransitionTime"]) - _stamp(meta["creationTimestamp"])).total_seconds()


def _pull_times(box: Sandbox) -> list[str]:
    """The kubelet's image pull times of the operator's namespace ("3.8s", "20ms")."""
    events = json.loads(kubectl(box, "get", "events", "-n", NS, "-o", "json"))["items"]
    return [m.group(1) for e in events if (m := PULLED.search(e.get("message", "")))]


def main() -> None:
    """Start the sandbox with a real node, install, measure, print, remove it."""
    from gryvia_cli import __version__
    from gryvia_cli.sandbox import cluster, realnode, registry

    if why := realnode.missing():
        print(f"skipped: {why}")
        return
    with tempfile.TemporaryDirectory(prefix="gryvia-bench-realnode-") as home:
        os.environ["GRYVIA_SANDBOX_HOME"] = home
        name = f"bench-{uuid.uuid4().hex[:4]}"
        t0 = time.monotonic()
        box = cluster.up(name, "1xH100:8,1xcpu", with_real_node=True)
        print(f"sandbox with a real node up in {time.monotonic() - t0:.1f} s", flush=True)
        try:
            notes: list[str] = []
            chart = registry.publish(box, notes.append)
            if not any(n.startswith("pushed the operator image") for n in notes):
                print("skipped: no operator image to install (run 'make image' as root)")
                return
            image = f"ghcr.io/{registry.IMAGE_REPOSITORY}:{__version__}"
            t0 = time.monotonic()
            helm(box, "install", "gryvia", chart, "--plain-http", *FAQ_LINE)
            pods = wait_for(lambda: running_image(box, image), timeout=300, what="operator pods")
            both = time.monotonic() - t0
            per_pod = ", ".join(f"{_ready_seconds(p):.0f} s" for p in pods)
            print(
                f"helm install to 2 Ready operator pods: {both:.1f} s (each, creation to Ready: "
                f"{per_pod}; image pulls {', '.join(_pull_times(box))})",
                flush=True,
            )

            first = leader(box)
            t0 = time.monotonic()
            kubectl(box, "delete", "pod", "-n", NS, first, "--wait=false")
            wait_for(lambda: leader(box) not in ("", first) or None, timeout=60, what="hand-over")
            handover = time.monotonic() - t0
            installed = {p["metadata"]["name"] for p in pods}

            def replacement() -> list[dict[str, Any]] | None:
                new = [p for p in operator_pods(box) if p["metadata"]["name"] not in installed]
                return [p for p in new if ready(p)] or None

            fresh = wait_for(
                replacement,
                timeout=120,
                what="the replacement pod",
            )
            replaced = time.monotonic() - t0
            print(
                f"leader pod deleted: Lease held by the other pod after {handover:.1f} s; "
                f"replacement Ready {replaced:.1f} s after the delete (creation to Ready "
                f"{_ready_seconds(fresh[0]):.0f} s)",
                flush=True,
            )

            tag = f"{__version__}-bench"
            local = f"localhost/gryvia-operator:{__version__}"
            registry.push_image(local, registry.address(box), tag)
            probe = DryRuns(box)
            probe.start()
            t0 = time.monotonic()
            helm(box, "upgrade", "gryvia", chart, "--plain-http", "-n", NS, "--reuse-values",
                 "--set", f"image.tag={tag}")  # fmt: skip
            new = f"ghcr.io/{registry.IMAGE_REPOSITORY}:{tag}"
            wait_for(lambda: running_image(box, new), timeout=300, what="the upgraded pods")
            rollout = time.monotonic() - t0
            probe.stop.set()
            probe.join(timeout=70)
            print(
                f"helm upgrade to a new tag: both pods replaced in {rollout:.1f} s; "
                f"{probe.sent} dry-run jobs sent every 200 ms, {len(probe.failures)} not "
                f"denied by the webhook (target 0)",
                flush=True,
            )
        finally:
            cluster.down(name)


if __name__ == "__main__":
    main()
