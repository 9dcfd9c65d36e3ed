"""Sandbox benchmarks: start time to Ready nodes, and 100 one-pod Jobs to completion."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import uuid


def main() -> None:
    """Print the sandbox's start time and the time for 100 one-pod Jobs to complete."""
    from gryvia_cli.sandbox import binaries, cluster, podnet

    with tempfile.TemporaryDirectory(prefix="gryvia-bench-") as home:
        os.environ["GRYVIA_SANDBOX_HOME"] = home
        name = f"bench-{uuid.uuid4().hex[:4]}"
        t0 = time.monotonic()
        box = cluster.up(name, "2xH100:8,2xA100-80G:8,2xL40:4,1xcpu")
        start = time.monotonic() - t0
        try:
            print(
                f"sandbox start to Ready nodes (7 nodes, logs probe incl.): {start:.1f} s "
                "(target < 30 s)"
            )
            net = podnet.load(box.state)
            print(
                f"pod network: {net.bridge} {net.subnet}, a namespace per pod"
                if net
                else f"pod network: host ({podnet.available() or 'bridge not created'})"
            )
            kubectl = [str(binaries.path_of("kubectl")), "--kubeconfig", str(box.kubeconfig)]
            jobs = [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": {"name": f"j{i}"},
                    "spec": {
                        "backoffLimit": 0,
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [
                                    {"name": "c", "image": "none", "command": ["echo", f"job {i}"]}
                                ],
                            }
                        },
                    },
                }
                for i in range(100)
            ]
            t0 = time.monotonic()
            subprocess.run(
                [*kubectl, "create", "-f", "-"],
                check=True,
                capture_output=True,
                input=json.dumps({"apiVersion": "v1", "kind": "List", "items": jobs}),
                text=True,
            )
            while True:
                out = json.loads(
                    subprocess.run(
                        [*kubectl, "get", "jobs", "-o", "json"], check=True, capture_output=True
                    ).stdout
                )
                done = sum(1 for j in out["items"] if (j.get("status") or {}).get("succeeded"))
                if done == 100 or time.monotonic() - t0 > 600:
                    break
                time.sleep(0.5)
            print(
                f"100 one-pod Jobs created to all Complete: {time.monotonic() - t0:.1f} s "
                f"({done}/100 complete)"
            )
        finally:
            cluster.down(name)


if __name__ == "__main__":
    main()
