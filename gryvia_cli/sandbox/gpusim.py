"""The sandbox's GPUs that report: a dcgm-exporter for each simulated GPU node.

Each GPU node runs this exporter as a pod of the `gryvia-gpu-exporter` DaemonSet (as NVIDIA's
GPU Operator runs dcgm-exporter), serving `gryvia_operator.api.dcgm`'s format on :9400.

What is simulated, and how:
- **Which GPU a container holds.** The pod runner writes a marker file per container process
  (`<state>/procs/<pid>`, JSON: `namespace`, `pod`, `container`, `node`, `gpus`). The node's
  GPUs go to its containers first-fit, oldest container first, as many as each asked for in
  `nvidia.com/gpu`; the rest are free.
- **Activity.** A GPU's activity is the share of the last sampling interval (default 5 s,
  four looks a second) in which a process of the container holding it was running or
  runnable: a busy loop reads 100 % even on a loaded machine, a `sleep` 0 %. Served as
  `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (ratio) and `DCGM_FI_DEV_GPU_UTIL` (percent).
- **Memory and power.** Memory used is the process group's resident memory (MiB), at most the
  GPU's; power is 60 W idle plus 6.4 W per percent of activity (700 W at 100 %).
- **Faults.** `gryvia sandbox gpu-fault NODE --gpu N --xid X` writes
  `<state>/gpu-faults/<node>.json`; that GPU then serves `DCGM_FI_DEV_XID_ERRORS` X.

The node's GPU count, product and memory come from `<state>/gpu-nodes/<node>.json`, written
when the node is registered (`node_record`).

Run as `python -m gryvia_cli.sandbox.gpusim --state DIR [--node NAME] [--address :9400]`.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gryvia_operator.api.dcgm import (
    EXPORTER_LABELS,
    EXPORTER_PORT,
    FIELD_ENGINE_ACTIVE,
    FIELD_FB_FREE,
    FIELD_FB_USED,
    FIELD_GPU_UTIL,
    FIELD_POWER_USAGE,
    FIELD_XID_ERRORS,
    GpuReading,
)

IDLE_WATTS = 60.0
WATTS_PER_PERCENT = 6.4
PAGE_MIB = os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
SAMPLE_PERIOD = 0.25
"""Seconds between two looks at a group's process states."""


@dataclass(frozen=True)
class Holder:
    """One container process that asked for GPUs: its pod and the process group it leads."""

    namespace: str
    pod: str
    container: str
    gpus: int
    pgid: int
    started: float  # the marker's mtime, seconds since the epoch


@dataclass
class Group:
    """A container's process group at one scan: its processes and their resident MiB."""

    pids: list[int] = field(default_factory=list)
    memory_mib: float = 0.0


@dataclass(frozen=True)
class GpuNode:
    """A simulated GPU node's GPUs: how many, which product, MiB of memory each."""

    name: str
    count: int
    product: str
    memory_mib: int


def marker_record(namespace: str, pod: str, container: str, node: str, gpus: int) -> str:
    """The JSON the pod runner writes into a container process's marker file."""
    return json.dumps(
        {"namespace": namespace, "pod": pod, "container": container, "node": node, "gpus": gpus}
    )


def node_record(node: Mapping[str, Any]) -> GpuNode | None:
    """A Node manifest's GPUs from its GFD labels (`nvidia.com/gpu.count`, `.product`,
    `.memory`), or None for a node without GPUs."""
    labels = node["metadata"].get("labels") or {}
    if labels.get("nvidia.com/gpu.present") != "true":
        return None
    return GpuNode(
        node["metadata"]["name"],
        int(labels.get("nvidia.com/gpu.count", "0")),
        labels.get("nvidia.com/gpu.product", ""),
        int(labels.get("nvidia.com/gpu.memory", "0")),
    )


def write_nodes(state: Path, nodes: Sequence[Mapping[str, Any]]) -> None:
    """Write `<state>/gpu-nodes/<name>.json` for each GPU node of the manifests `nodes`."""
    folder = state / "gpu-nodes"
    folder.mkdir(parents=True, exist_ok=True)
    for node in nodes:
        if (gpus := node_record(node)) is not None:
            (folder / f"{gpus.name}.json").write_text(json.dumps(gpus.__dict__))


def set_fault(state: Path, node: str, gpu: int, xid: int) -> None:
    """Make GPU `gpu` of `node` report XID `xid` (0 clears it). Raises ValueError when the
    node has no such GPU (naming what it has) and OSError when the file cannot be written."""
    try:
        known = GpuNode(**json.loads((state / "gpu-nodes" / f"{node}.json").read_text()))
    except FileNotFoundError:
        raise ValueError(f"node {node} is not a GPU node of this sandbox") from None
    if not 0 <= gpu < known.count:
        raise ValueError(f"--gpu {gpu}: node {node} has GPUs 0..{known.count - 1}")
    path = state / "gpu-faults" / f"{node}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    faults = json.loads(path.read_text()) if path.exists() else {}
    faults = {k: v for k, v in faults.items() if k != str(gpu)} | ({str(gpu): xid} if xid else {})
    path.write_text(json.dumps(faults))


def holders(markers: Path, node: str) -> list[Holder]:
    """The live container processes on `node` that asked for GPUs, oldest first."""
    found = []
    for marker in markers.glob("*") if markers.is_dir() else []:
        try:
            record = json.loads(marker.read_text() or "{}")
            started = marker.stat().st_mtime
        except (OSError, ValueError):
            continue  # gone, or written by a runner that wrote empty markers
        if record.get("node") == node and int(record.get("gpus") or 0) > 0:
            found.append(
                Holder(
                    record["namespace"],
                    record["pod"],
                    record["container"],
                    int(record["gpus"]),
                    int(marker.name),
                    started,
                )
            )
    return sorted(found, key=lambda h: (h.started, h.pgid))


def assign(held: Sequence[Holder], count: int) -> dict[int, Holder]:
    """GPU index -> holder: first-fit in `held`'s order; a holder that does not fit gets none."""
    taken: dict[int, Holder] = {}
    for holder in held:
        if len(taken) + holder.gpus > count:
            continue
        start = len(taken)
        for index in range(start, start + holder.gpus):
            taken[index] = holder
    return taken


def group_processes(pgids: set[int], proc: Path = Path("/proc")) -> dict[int, Group]:
    """The processes and resident memory (MiB) of each process group of `pgids`, from
    /proc/<pid>/stat (proc(5)); groups with no process left are absent."""
    groups: dict[int, Group] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit() or (fields := _stat(entry)) is None:
            continue
        if (pgid := int(fields[2])) in pgids:
            group = groups.setdefault(pgid, Group())
            group.pids.append(int(entry.name))
            group.memory_mib += int(fields[21]) * PAGE_MIB
    return groups


def running(pids: Sequence[int], proc: Path = Path("/proc")) -> bool:
    """Whether any of `pids` is running or runnable (state R): a busy loop is, even when it
    waits for a CPU; a `sleep` is not."""
    return any((f := _stat(proc / str(pid))) is not None and f[0] == "R" for pid in pids)


def activity_percent(busy_samples: int, samples: int) -> float:
    """The share of samples in which the group was running, as a GPU activity 0..100."""
    return round(100 * busy_samples / samples, 2) if samples else 0.0


def _stat(entry: Path) -> list[str] | None:
    """The fields of /proc/<pid>/stat after "pid (comm) " (state first), or None if gone."""
    try:
        text = entry.joinpath("stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def readings(
    node: GpuNode,
    assigned: Mapping[int, Holder],
    activity: Mapping[int, float],
    memory_mib: Mapping[int, float],
    faults: Mapping[int, int],
) -> list[GpuReading]:
    """One reading per GPU of `node`. `activity` and `memory_mib` are by process group;
    `faults` maps a GPU index to its last XID. A GPU whose holder has not been measured for a
    whole interval yet serves no activity fields (readers skip it rather than read it idle)."""
    out = []
    for index in range(node.count):
        holder = assigned.get(index)
        busy = activity.get(holder.pgid) if holder else 0.0
        used = min(node.memory_mib, int(memory_mib.get(holder.pgid, 0.0))) if holder else 0
        values: dict[str, float] = {
            FIELD_FB_USED: used,
            FIELD_FB_FREE: node.memory_mib - used,
            FIELD_POWER_USAGE: round(IDLE_WATTS + WATTS_PER_PERCENT * (busy or 0.0), 1),
            FIELD_XID_ERRORS: faults.get(index, 0),
        }
        if busy is not None:
            values |= {FIELD_ENGINE_ACTIVE: round(busy / 100, 4), FIELD_GPU_UTIL: round(busy)}
        out.append(
            GpuReading(
                hostname=node.name,
                gpu=index,
                uuid=f"GPU-sandbox-{node.name}-{index}",
                model=node.product,
                pci_bus_id=f"00000000:{index + 0x18:02X}:00.0",
                namespace=holder.namespace if holder else "",
                pod=holder.pod if holder else "",
                container=holder.container if holder else "",
                values=values,
            )
        )
    return out


EXPORTER_NAMESPACE = "gpu-operator"
"""Where the exporter DaemonSet lives: the GPU Operator's namespace."""


def exporter_manifests(state: Path, python: str) -> list[dict[str, Any]]:
    """The namespace and DaemonSet that run this exporter on every GPU node, with the
    sandbox's `python` and `state` folder. It listens on the pod's own address, so it also
    works where pods share the host network."""
    env = [
        {"name": n, "valueFrom": {"fieldRef": {"fieldPath": p}}}
        for n, p in (("NODE_NAME", "spec.nodeName"), ("POD_IP", "status.podIP"))
    ]
    container = {
        "name": "nvidia-dcgm-exporter",
        "image": "gryvia-sandbox/gpu-exporter",  # never pulled: pods run as local processes
        "command": [python, "-m", "gryvia_cli.sandbox.gpusim", "--state", str(state)],
        "args": ["--address", f"$(POD_IP):{EXPORTER_PORT}"],
        "env": env,
        "ports": [{"name": "metrics", "containerPort": EXPORTER_PORT}],
    }
    meta = {"name": "nvidia-dcgm-exporter", "namespace": EXPORTER_NAMESPACE}
    daemonset = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": meta | {"labels": dict(EXPORTER_LABELS)},
        "spec": {
            "selector": {"matchLabels": dict(EXPORTER_LABELS)},
            "template": {
                "metadata": {"labels": dict(EXPORTER_LABELS)},
                "spec": {
                    "nodeSelector": {"nvidia.com/gpu.present": "true"},
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [container],
                },
            },
        },
    }
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": meta["namespace"]}}
    return [namespace, daemonset]


class SimulatedSource:
    """The exporter source for one sandbox node: samples its holders' CPU every `interval`
    seconds in a thread of its own; `read()` serves the last window. Raises OSError when the
    node's GPU file cannot be read."""

    def __init__(self, state: Path, node: str, interval: float = 5.0) -> None:
        self.state, self.interval = state, interval
        self.node = GpuNode(**json.loads((state / "gpu-nodes" / f"{node}.json").read_text()))
        self._lock = threading.Lock()
        self._activity: dict[int, float] = {}
        self._memory: dict[int, float] = {}
        threading.Thread(target=self._sample_forever, daemon=True).start()

    def read(self) -> list[GpuReading]:
        """The node's GPUs as of the last sampling window."""
        assigned = assign(holders(self.state / "procs", self.node.name), self.node.count)
        with self._lock:
            activity, memory = dict(self._activity), dict(self._memory)
        return readings(self.node, assigned, activity, memory, self._faults())

    def _faults(self) -> dict[int, int]:
        try:
            raw = json.loads((self.state / "gpu-faults" / f"{self.node.name}.json").read_text())
        except (OSError, ValueError):
            return {}
        return {int(gpu): int(xid) for gpu, xid in raw.items()}

    def _sample_forever(self) -> None:
        while True:
            pgids = {h.pgid for h in holders(self.state / "procs", self.node.name)}
            groups = group_processes(pgids)
            busy = dict.fromkeys(groups, 0)
            samples, end = 0, time.monotonic() + self.interval
            while time.monotonic() < end:
                for pgid, group in groups.items():
                    busy[pgid] += running(group.pids)
                samples += 1
                time.sleep(SAMPLE_PERIOD)
            with self._lock:
                self._activity = {p: activity_percent(n, samples) for p, n in busy.items()}
                self._memory = {p: g.memory_mib for p, g in groups.items()}


def main(argv: list[str] | None = None) -> int:
    """Serve one node's simulated GPUs until stopped; returns the exit code (1: no GPU file)."""
    from gryvia_operator.exporter.serve import parse_address, serve

    parser = argparse.ArgumentParser(prog="python -m gryvia_cli.sandbox.gpusim")
    parser.add_argument("--state", required=True, help="the sandbox's state folder")
    parser.add_argument("--node", default=os.environ.get("NODE_NAME") or socket.gethostname())
    parser.add_argument("--address", default=":9400", help="HOST:PORT to listen on")
    parser.add_argument("--interval", type=float, default=5.0, help="sampling interval, s")
    args = parser.parse_args(argv)
    try:
        host, port = parse_address(args.address)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        source = SimulatedSource(Path(args.state), args.node, args.interval)
    except (OSError, ValueError, TypeError) as exc:
        print(f"gpusim: node {args.node} has no GPU file: {exc}", file=sys.stderr)
        return 1
    serve(source, host, port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
