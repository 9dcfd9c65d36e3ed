"""TUI benchmark: a sandbox with 500 GPU nodes and 5000 suspended GryviaAIJobs.

Prints the time to the first full paint of the Jobs view (target <= 2 s), the delay from a
job's status patch to its repainted row (target p95 <= 500 ms) and the peak RSS of the process
running the console (target <= 300 MB). Run with `python -m tests.bench_tui`.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

JOBS = 5000
NODES = 500
NAMESPACES = 10
SAMPLES = 60


def _kubectl(kubectl: list[str], *args: str, body: Any = None) -> None:
    subprocess.run(
        [*kubectl, *args],
        input=json.dumps(body) if body is not None else None,
        text=True,
        check=True,
        capture_output=True,
        timeout=600,
    )


def _populate(kubectl: list[str]) -> None:
    """CRDs, a GryviaGpuNode per node, namespaces and 5000 suspended jobs (Lists of 500)."""
    from gryvia_operator.api.crd import generate as crdgen

    _kubectl(
        kubectl,
        "apply",
        "--server-side",
        "-f",
        "-",
        body={"apiVersion": "v1", "kind": "List", "items": crdgen.build_crds()},
    )
    _kubectl(kubectl, "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
    nodes = [
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaGpuNode",
            "metadata": {"name": f"gpu-h100-{i}"},
            "spec": {"nodeName": f"gpu-h100-{i}", "gpuType": "H100", "gpuCount": 8},
        }
        for i in range(NODES)
    ]
    _kubectl(
        kubectl, "create", "-f", "-", body={"apiVersion": "v1", "kind": "List", "items": nodes}
    )
    for n in range(NAMESPACES):
        _kubectl(kubectl, "create", "namespace", f"team-{n}")
    jobs = [
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaAIJob",
            "metadata": {"name": f"job-{i:05d}", "namespace": f"team-{i % NAMESPACES}"},
            "spec": {
                "type": "training",
                "gpus": 8,
                "gpuType": "H100",
                "image": "busybox",
                "suspend": True,
                "command": ["sleep", "1"],
            },
        }
        for i in range(JOBS)
    ]
    for start in range(0, JOBS, 500):
        _kubectl(
            kubectl,
            "create",
            "-f",
            "-",
            body={"apiVersion": "v1", "kind": "List", "items": jobs[start : start + 500]},
        )


async def _measure(kubeconfig: Path) -> dict[str, Any]:
    from kubernetes import client, config

    from gryvia_cli.tui import make_app
    from gryvia_cli.tui.kubesource import KubeSource
    from gryvia_cli.tui.widgets.rowtable import RowTable

    t0 = time.perf_counter()
    source = KubeSource.open(kubeconfig, None, None, all_namespaces=True)
    app = make_app(source)
    out: dict[str, Any] = {}
    async with app.run_test(size=(160, 48)) as pilot:
        table = None
        while True:
            if app.screen.__class__.__name__ == "JobsScreen" and app.screen.query(RowTable):
                table = app.screen.query_one(RowTable)
                if len(table.order) == JOBS and table._lines:
                    break
            await asyncio.sleep(0.005)
        out["first_paint"] = time.perf_counter() - t0
        await pilot.pause(1.0)
        api = client.CustomObjectsApi(config.new_client_from_config(config_file=str(kubeconfig)))

        def patch(key: str, phase: str) -> None:
            ns, name = key.split("/")
            api.patch_namespaced_custom_object_status(
                "gryvia.io", "v1alpha1", ns, "gryviaaijobs", name, {"status": {"phase": phase}}
            )

        def painted(key: str, text: str) -> bool:
            return any(k[0] == key and text in line.text for k, line in list(table._lines.items()))

        delays = []
        visible = table.order[:40]
        for i in range(SAMPLES):
            key = visible[i % len(visible)]
            phase = ("Running", "Queued")[(i // len(visible)) % 2]
            start = time.perf_counter()
            await asyncio.to_thread(patch, key, phase)
            while not painted(key, phase):
                await asyncio.sleep(0.005)
            delays.append(time.perf_counter() - start)
            await asyncio.sleep(0.05)
        out["delays"] = delays
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> None:
    """Bring the sandbox up, fill it, measure, print, tear it down."""
    from gryvia_cli.sandbox import binaries, cluster

    with tempfile.TemporaryDirectory(prefix="gryvia-bench-tui-") as home:
        os.environ["GRYVIA_SANDBOX_HOME"] = home
        name = f"btui-{uuid.uuid4().hex[:4]}"
        t0 = time.monotonic()
        box = cluster.up(name, f"{NODES}xH100:8")
        try:
            print(f"sandbox with {NODES} nodes up in {time.monotonic() - t0:.1f} s", flush=True)
            kubectl = [str(binaries.path_of("kubectl")), "--kubeconfig", str(box.kubeconfig)]
            t0 = time.monotonic()
            _populate(kubectl)
            print(
                f"{JOBS} jobs and {NODES} GryviaGpuNodes created in {time.monotonic() - t0:.1f} s",
                flush=True,
            )
            result = asyncio.run(_measure(box.kubeconfig))
            delays = sorted(result["delays"])
            p95 = delays[int(len(delays) * 0.95) - 1]
            print(
                f"first full paint of the Jobs view ({JOBS} jobs): {result['first_paint']:.2f} s "
                "(target <= 2 s)"
            )
            p50 = statistics.median(delays) * 1000
            print(
                f"status patch -> repainted row, {len(delays)} samples: p50 {p50:.0f} ms, "
                f"p95 {p95 * 1000:.0f} ms, max {delays[-1] * 1000:.0f} ms (target p95 <= 500 ms)"
            )
            print(f"peak RSS of the console process: {result['rss_mb']:.0f} MB (target <= 300 MB)")
        finally:
            cluster.down(name)


if __name__ == "__main__":
    main()
