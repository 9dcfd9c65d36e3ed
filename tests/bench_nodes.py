"""Node-count curve of the CLI's node reads, beside kubectl: 50, 500 and 2,000 GPU nodes.

Issue #42 point 1 asks each scale benchmark for a curve over 50 / 500 / 2,000 nodes. The
sandbox's nodes each carry a GPU-exporter process, which 2,000 nodes on two cores cannot
run, so this benchmark registers the nodes by hand on a bare API server
(`tests.support.controlplane`: etcd and kube-apiserver): the same Node manifests the sandbox
registers (`gryvia_cli.sandbox.nodespec.build_nodes`, half H100 and half A100-80G, eight GPUs
each), with 1,000 suspended GryviaAIJobs beside them. A node read costs the same whether a
kubelet or this script wrote the Node; what it leaves out is the operator (no GryviaGpuNode
samples, no pods), so `capacity` and `sinfo` show every node idle; the GryviaGpuNode the
operator keeps for each node is created with it, as `list nodes` reads both.

At each size it times (median wall and CPU of `bench_cli.RUNS` runs after a warm-up, as
subprocesses, output piped) `gryvia list nodes`, `sinfo`, `capacity` and `queue -A` against
the kubectl read of the same objects, prints the ratio, and then one table per command with
the growth between sizes (time at this size over time at the previous one). Targets: the
CLI's (issue 22): within 1.5x of kubectl's wall time.

Then the operator over the same sizes, on a one-node sandbox (`tests.support.benchbox`) the
nodes are added to (kwok keeps them Ready; the GPU-exporter DaemonSet, a process per node,
is deleted first): at each size the time
until the operator has registered every node (a GryviaGpuNode each), then its restart
(SIGKILL, start) to `/readyz` and its peak RSS, with the growth between sizes. Nodes are read
by kopf (an index and an event handler), not by the operator's informers.

Run: `python -m tests.bench_nodes [NODES ...]` (default 50 500 2000; about five minutes).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.bench_cli import RUNS, median, prepare
from tests.support.benchbox import kubectl_run

if TYPE_CHECKING:
    from tests.support.controlplane import ControlPlane

SIZES = (50, 500, 2000)
JOBS = 1000
LIMIT = 1.5
EXPORTERS = "gpu-operator"
"""The sandbox's GPU-exporter namespace (`gryvia_cli.sandbox.gpusim.EXPORTER_NAMESPACE`)."""


@dataclass(frozen=True)
class Case:
    """A gryvia command and the kubectl command that reads the same objects."""

    label: str
    gryvia: tuple[str, ...]
    kubectl: tuple[str, ...]


CASES = (
    Case("list nodes", ("list", "nodes"), ("get", "gryviagpunodes,nodes")),
    Case("sinfo", ("sinfo",), ("get", "nodes")),
    Case("capacity", ("capacity",), ("get", "gaj,nodes", "-A")),
    Case("queue -A", ("queue", "-A"), ("get", "gaj,pods,nodes", "-A")),
)


@dataclass(frozen=True)
class Point:
    """One command at one node count: (wall, CPU) seconds of each tool."""

    nodes: int
    case: str
    gryvia: tuple[float, float]
    kubectl: tuple[float, float]

    @property
    def ratio(self) -> float:
        """gryvia's median wall time over kubectl's."""
        return self.gryvia[0] / self.kubectl[0]


def _as_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": items}


def node_manifests(count: int) -> list[dict[str, Any]]:
    """`count` sandbox Node manifests, H100:8 and A100-80G:8 alternating, so that the first
    N of them are half of each for every N."""
    from gryvia_cli.sandbox.nodespec import build_nodes, parse_node_spec

    half = (count + 1) // 2
    h100 = build_nodes(parse_node_spec(f"{half}xH100:8"))
    a100 = build_nodes(parse_node_spec(f"{half}xA100-80G:8"))
    return [node for pair in zip(h100, a100, strict=True) for node in pair][:count]


def registration(node: dict[str, Any]) -> dict[str, Any]:
    """The GryviaGpuNode the operator keeps for `node` (name, GPU type and count)."""
    labels = node["metadata"]["labels"]
    name = node["metadata"]["name"]
    gpu_type = "H100" if name.startswith("gpu-h100") else "A100-80G"
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaGpuNode",
        "metadata": {"name": name},
        "spec": {
            "nodeName": name,
            "gpuType": gpu_type,
            "gpuCount": int(labels["nvidia.com/gpu.count"]),
        },
    }


def grow_nodes(kubectl: list[str], nodes: list[dict[str, Any]], have: int, want: int) -> None:
    """Register nodes[have:want], 500 to a `kubectl create`."""
    for start in range(have, want, 500):
        kubectl_run(
            kubectl, "create", "-f", "-", body=_as_list(nodes[start : min(start + 500, want)])
        )


def grow(kubectl: list[str], nodes: list[dict[str, Any]], have: int, want: int) -> None:
    """Register nodes[have:want] and their GryviaGpuNodes, 500 to a `kubectl create`."""
    grow_nodes(kubectl, nodes, have, want)
    for start in range(have, want, 500):
        chunk = nodes[start : min(start + 500, want)]
        kubectl_run(kubectl, "create", "-f", "-", body=_as_list([registration(n) for n in chunk]))


def measure(nodes: int, gryvia: list[str], kube: list[str], env: dict[str, str]) -> list[Point]:
    """Every case at the current node count."""
    return [
        Point(nodes, c.label, median([*gryvia, *c.gryvia], env), median([*kube, *c.kubectl], env))
        for c in CASES
    ]


def _ms(pair: tuple[float, float]) -> str:
    return f"{pair[0] * 1000:.0f}/{pair[1] * 1000:.0f} ms"


def report(points: list[Point]) -> str:
    """One table per command: nodes, both tools' wall/CPU, ratio, target, growth of each."""
    lines = []
    for case in CASES:
        rows = [p for p in points if p.case == case.label]
        lines.append(f"{case.label}  (kubectl {' '.join(case.kubectl)})")
        lines.append(
            f"  {'nodes':>6}  {'gryvia wall/cpu':>16}  {'kubectl wall/cpu':>16}  "
            f"{'ratio':>5}  {'target':>7}  {'gryvia growth':>13}  {'kubectl growth':>14}"
        )
        before: Point | None = None
        for p in rows:
            growth = (
                (
                    f"{p.gryvia[0] / before.gryvia[0]:.2f}x",
                    f"{p.kubectl[0] / before.kubectl[0]:.2f}x",
                )
                if before
                else ("", "")
            )
            met = "met" if p.ratio <= LIMIT else "MISSED"
            lines.append(
                f"  {p.nodes:>6}  {_ms(p.gryvia):>16}  {_ms(p.kubectl):>16}  {p.ratio:>5.2f}  "
                f"{met:>7}  {growth[0]:>13}  {growth[1]:>14}"
            )
            before = p
    lines.append(
        f"(median of {RUNS} runs after a warm-up; {JOBS} suspended jobs; target <= {LIMIT}x "
        f"kubectl; load average {os.getloadavg()[0]:.2f})"
    )
    return "\n".join(lines)


@contextlib.contextmanager
def jobs_plane(prefix: str) -> Iterator[tuple[str, ControlPlane, list[str]]]:
    """A bare API server (etcd and kube-apiserver) in a temporary home named `prefix...`,
    with the CRDs and JOBS suspended jobs: (home, the plane, kubectl's argv for it). Both
    node benchmarks run on it; it is stopped and the home removed on exit."""
    from gryvia_cli.sandbox import binaries
    from tests.support.controlplane import control_plane

    with (
        tempfile.TemporaryDirectory(prefix=prefix) as home,
        control_plane(Path(home) / "plane") as plane,
    ):
        kube = [str(binaries.path_of("kubectl")), "--kubeconfig", str(plane.kubeconfig)]
        prepare(binaries.path_of("kubectl"), plane.kubeconfig, 0, JOBS)  # CRDs, 1,000 jobs
        yield home, plane, kube


def growing(
    kube: list[str], manifests: list[dict[str, Any]], sizes: tuple[int, ...]
) -> Iterator[int]:
    """Register `manifests` (and their GryviaGpuNodes) up to each of `sizes` in turn, smallest
    first; yields each size once its nodes are in place (and says how long that took)."""
    have = 0
    for size in sorted(sizes):
        t0 = time.monotonic()
        grow(kube, manifests, have, size)
        have = size
        print(f"{size} nodes in place ({time.monotonic() - t0:.1f} s)", flush=True)
        yield size


def main(sizes: tuple[int, ...] = SIZES) -> None:
    """Bring a bare API server up, grow the nodes to each size in turn, time, print, stop."""
    with jobs_plane("gryvia-bench-nodes-") as (home, plane, kube):
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("GRYVIA_") and k not in ("PYTHONDONTWRITEBYTECODE",)
        }
        env.update(
            KUBECONFIG=str(plane.kubeconfig),
            GRYVIA_CONFIG_HOME=f"{home}/config",
            XDG_CONFIG_HOME=f"{home}/config",
            XDG_STATE_HOME=f"{home}/state",
            NO_COLOR="1",
        )
        gryvia = [sys.executable, "-m", "gryvia_cli"]
        points: list[Point] = []
        for size in growing(kube, node_manifests(max(sizes)), sizes):
            points += measure(size, gryvia, kube, env)
        print(report(points), flush=True)
    print(operator_curve(sizes), flush=True)


def _count(kubectl: list[str], resource: str) -> int:
    out = subprocess.run(
        [*kubectl, "get", resource, "-o", "name"], capture_output=True, text=True, check=True
    )
    return len(out.stdout.split())


def operator_curve(sizes: tuple[int, ...]) -> str:
    """The operator's node registration and restart at each size (a table, with growth)."""
    from tests.bench_scale import _restart
    from tests.support.benchbox import operator_sandbox

    lines = [f"  {'nodes':>6}  {'registered':>10}  {'restart to ready':>16}  {'growth':>6}  RSS"]
    with operator_sandbox("nodes", "1xcpu", []) as box:
        manifests = node_manifests(max(sizes))
        # a process per GPU node would not fit two cores at 2,000 nodes
        kubectl_run(box.kubectl, "delete", "daemonset", "-n", EXPORTERS, "nvidia-dcgm-exporter")
        have, before = 0, None
        for size in sorted(sizes):
            t0 = time.monotonic()
            grow_nodes(box.kubectl, manifests, have, size)
            have = size
            deadline = time.monotonic() + 600
            while _count(box.kubectl, "gryviagpunodes") < size:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the operator registered fewer than {size} nodes in 600 s")
                time.sleep(0.5)
            registered = time.monotonic() - t0
            ready, _, rss = _restart(box, 0)
            growth = f"{ready / before:.2f}x" if before else ""
            before = ready
            lines.append(
                f"  {size:>6}  {registered:>9.1f}s  {ready:>15.1f}s  {growth:>6}  {rss:.0f} MB"
            )
            print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(["operator (nodes through kopf)", *lines])


if __name__ == "__main__":
    main(tuple(int(a) for a in sys.argv[1:]) or SIZES)
