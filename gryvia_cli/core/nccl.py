"""What NCCL says about itself with `NCCL_DEBUG=INFO`: its version, the network it chose, the
transport of each channel, its rings and trees, and its warnings (`gryvia gpu nccl`).

NCCL's INFO lines start `host:pid:tid [cudaDev] NCCL INFO ...`; the lines read here are:
`NCCL version X`, `Using network IB|Socket`, `Channel CC/NN : r0 r1 ...` (a ring),
`Channel CC/x : A[d] -> B[d] [send|receive] via P2P/...|SHM/...|NET/IB/...|NET/Socket/...`
(a connection and its transport; `GDRDMA` in it is GPUDirect RDMA), `Trees [c] ...`,
`comm ... rank R nranks N ...` and `NCCL WARN ...`. Lines are data: nothing in them is run
or rendered as markup.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

_VERSION = re.compile(r"NCCL version (\S+)")
_NETWORK = re.compile(r"NCCL INFO Using network (\w+)")
_RING = re.compile(r"NCCL INFO Channel (\d+)/(\d+) :((?:\s+\d+)+)\s*$")
_CONNECTION = re.compile(
    r"NCCL INFO Channel (\d+)/\S+ : (\d+)\[\w+\] -> (\d+)\[\w+\](?: \[(?:send|receive)\])?"
    r" via (\S+)"
)
_TREES = re.compile(r"NCCL INFO Trees (.+)$")
_NRANKS = re.compile(r"NCCL INFO comm \S+ rank (\d+) nranks (\d+)")
_WARN = re.compile(r"NCCL WARN (.+)$")

TRANSPORTS = ("P2P", "SHM", "IB", "Socket")
"""NCCL's transports as reported, in the order of preference within and across nodes."""


@dataclass
class NcclReport:
    """What a job's NCCL logs said; counts are connections (channel, peer) seen."""

    version: str = ""
    networks: set[str] = field(default_factory=set)
    transports: Counter[str] = field(default_factory=Counter)
    gpu_direct: int = 0
    """Connections over the network through GPUDirect RDMA (`GDRDMA`)."""
    rings: dict[int, list[int]] = field(default_factory=dict)
    trees: list[str] = field(default_factory=list)
    nranks: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        """Whether any NCCL line was read (NCCL_DEBUG=INFO was set and NCCL started)."""
        return bool(self.version or self.networks or self.transports or self.rings)

    def socket_fallback(self, asked_rdma: bool) -> bool:
        """True when a job that asked for `network: rdma` went over sockets."""
        return asked_rdma and ("Socket" in self.networks or self.transports["Socket"] > 0)

    def as_dict(self, asked_rdma: bool) -> dict[str, Any]:
        """The documented JSON shape of `gpu nccl -o json`."""
        return {
            "version": self.version or None,
            "networks": sorted(self.networks),
            "transports": {t: self.transports[t] for t in TRANSPORTS if self.transports[t]},
            "gpuDirectRDMA": self.gpu_direct,
            "rings": {str(c): r for c, r in sorted(self.rings.items())},
            "trees": self.trees,
            "nranks": self.nranks or None,
            "warnings": self.warnings,
            "askedRDMA": asked_rdma,
            "socketFallback": self.socket_fallback(asked_rdma),
        }


def transport_of(via: str) -> str:
    """The transport of a connection's `via` text: P2P, SHM, IB (NET/IB) or Socket
    (NET/Socket); anything else as NCCL names it (a network plugin's)."""
    head, _, rest = via.partition("/")
    if head == "NET":
        return rest.split("/")[0] or "NET"
    return head


def read_nccl(lines: Iterable[str]) -> NcclReport:
    """Fold NCCL's log lines (of one or more ranks) into one report; repeated lines of the
    same ring, tree or connection count once."""
    report = NcclReport()
    seen: set[tuple[str, ...]] = set()
    for line in lines:
        if match := _VERSION.search(line):
            report.version = report.version or match[1]
        elif match := _NETWORK.search(line):
            report.networks.add(match[1])
        elif match := _RING.search(line):
            report.rings.setdefault(int(match[1]), [int(r) for r in match[3].split()])
        elif match := _CONNECTION.search(line):
            key = ("c", match[1], match[2], match[3], match[4])
            if key not in seen:
                seen.add(key)
                report.transports[transport_of(match[4])] += 1
                report.gpu_direct += "GDRDMA" in match[4]
        elif match := _TREES.search(line):
            if match[1] not in report.trees:
                report.trees.append(match[1])
        elif match := _NRANKS.search(line):
            report.nranks = max(report.nranks, int(match[2]))
        elif (match := _WARN.search(line)) and match[1].strip() not in report.warnings:
            report.warnings.append(match[1].strip())
    return report


def nccl_lines(report: NcclReport, job: str, asked_rdma: bool) -> list[str]:
    """The `gpu nccl` report, line by line."""
    if not report.found:
        return [
            f"No NCCL lines in the logs of {job}: NCCL logs its setup with NCCL_DEBUG=INFO"
            " (Gryvia sets it unless backend is gloo) once the job's first collective runs."
        ]
    used = (
        ", ".join(f"{t} {report.transports[t]}" for t in TRANSPORTS if report.transports[t]) or "-"
    )
    others = [t for t in report.transports if t not in TRANSPORTS]
    used += "".join(f", {t} {report.transports[t]}" for t in others)
    network = ", ".join(sorted(report.networks)) or "-"
    if report.gpu_direct:
        network += f" (GPUDirect RDMA on {report.gpu_direct} connection(s))"
    out = [
        f"NCCL of job {job}" + (f" ({report.nranks} ranks)" if report.nranks else ""),
        f"Version:     {report.version or '-'}",
        f"Network:     {network}",
        f"Transports:  {used} (connections)",
    ]
    for channel, ring in sorted(report.rings.items()):
        out.append(f"Ring {channel:<7} {' '.join(str(r) for r in ring)}")
    for tree in report.trees[:4]:
        out.append(f"Trees:       {tree}")
    if report.socket_fallback(asked_rdma):
        out.append(
            "Problem:     the job asked for network: rdma, but NCCL went over sockets"
            " (NET/Socket): the node has no usable RDMA NIC, the rdma-network attachment is"
            " missing, or NCCL_IB_DISABLE is set"
        )
    out.extend(f"Warning:     {w}" for w in report.warnings)
    return out
