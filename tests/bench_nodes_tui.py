"""Node-count curve of the console's Nodes view beside k9s's: 50, 500 and 2,000 GPU nodes.

Issue #42 point 1 asks for "the console's Nodes view beside k9s at 50 / 500 / 2,000 nodes".
The cluster is the one `tests.bench_nodes` times the CLI on: a bare API server
(`tests.support.controlplane`) with the CRDs, 1,000 suspended GryviaAIJobs, and the sandbox's
Node manifests (half H100:8, half A100-80G:8) with a GryviaGpuNode each, grown 50 -> 500 ->
2,000. Here each Node also carries a Ready condition, so that the console's status line can
only show `N ready` once every registration has been joined with its Node (see below).

At each size both consoles are started `STARTS` times, in turns (gryvia, k9s, gryvia, ...),
each in a 160x48 pty whose output goes to a terminal emulator (`tests.bench_tui.Program`,
`tests.support.ptyscreen`), after one uncounted start of each at the first size (bytecode,
page cache). Each start measures, from process start (median of the starts):

- first paint: the first frame with a node row (`gpu-h100-N` / `gpu-a100-80g-N`) on it;
- full list: the first frame that shows every node. Gryvia: the Nodes view's status line
  `N GPU nodes · N ready · M GPUs` with no `not registered` after it (Nodes and GryviaGpuNodes
  are listed apart and may arrive in pages; only both whole give N ready and none taken from
  labels alone). k9s: its header `nodes(all)[N]` (k9s writes thousands with commas);
- peak RSS (VmHWM) of the process once the list is complete.

How each console reaches its Nodes view: `k9s -A -c nodes --readonly --splashless --logoless`
opens on it; `gryvia tui -A` has no start-view option and opens on Jobs, so the benchmark
waits for the console's first frame (its view bar, `1 Jobs`) and types the Nodes view's
number key, as a user would at the earliest. Gryvia's times from process start therefore
include its start-up and the Jobs list (the first view's kind is listed before the others);
the time from that key is printed beside them.

Prints one table per measure, each size with its growth over the previous size. Target (from
`tests.bench_tui`): first paint <= 1 s and <= k9s's. Full list and RSS have no target of their
own here; they give the curve. k9s comes from the binary cache (`tests.bench_tui._k9s_binary`,
built on first use). Run: `python -m tests.bench_nodes_tui [NODES ...]` (default 50 500 2000).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.bench_nodes import JOBS, SIZES, growing, jobs_plane, node_manifests
from tests.bench_tui import Program, _k9s_binary
from tests.support.ptyscreen import PtyScreen

STARTS = 3
"""Starts of each console at each size, taken in turns; the median is reported."""
NODE_ROW = r"\bgpu-(?:h100|a100-80g)-\d+\b"
"""A node's name on a table row (the names `bench_nodes.node_manifests` gives)."""
PAINT_LIMIT = 1.0
TIMEOUT = 300


@dataclass(frozen=True)
class Console:
    """A console in the benchmark: its `Program` (argv, and the regex of its full count)
    and, where it does not open on its Nodes view, the first frame to wait for and the keys
    that open that view from there."""

    program: Program
    opens_at: str = ""
    keys: str = ""


@dataclass
class Start:
    """One start's numbers: seconds from process start, MB."""

    rows: float
    full: float
    rss_mb: float
    key: float = 0.0
    """When the view's key was typed (0: the console opened on the Nodes view)."""


@dataclass
class Point:
    """One console at one node count (medians of its starts; NaN when every start failed)."""

    nodes: int
    name: str
    starts: list[Start] = field(default_factory=list)

    def median(self, pick: str) -> float:
        """Median of one `Start` field over the starts."""
        values = [getattr(s, pick) for s in self.starts]
        return statistics.median(values) if values else float("nan")

    @property
    def from_key(self) -> tuple[float, float]:
        """(first rows, full list) measured from the key that opened the view."""
        if not self.starts:
            return float("nan"), float("nan")
        return (
            statistics.median(s.rows - s.key for s in self.starts),
            statistics.median(s.full - s.key for s in self.starts),
        )


def gryvia_console(kubeconfig: Path) -> Console:
    """`gryvia tui -A` (this checkout's code: `python -m gryvia_cli` from the repository root),
    then the Nodes view's number key at the first frame."""
    from gryvia_cli.tui.keytables import VIEWS

    argv = [sys.executable, "-m", "gryvia_cli", "--kubeconfig", str(kubeconfig), "tui", "-A"]
    full = r"(?<![\d,]){n} GPU nodes\W+{n} ready\W+\d+ GPUs\b(?!\W+\d+ not registered)"
    program = Program(
        "gryvia",
        argv,
        lambda n: full.format(n=n),
        lambda n: full.format(n=n),
        "/",
        "\r",
    )
    return Console(program, r"\b1 Jobs\b", str(VIEWS.index("nodes") + 1))


def k9s_console(kubeconfig: Path, k9s: Path) -> Console:
    """`k9s -A -c nodes`, read-only, no splash or logo (as `tests.bench_tui` starts it)."""
    argv = [str(k9s), "--kubeconfig", str(kubeconfig), "-A", "-c", "nodes"]
    program = Program(
        "k9s",
        [*argv, "--readonly", "--splashless", "--logoless"],
        lambda n: rf"(?i)\bnodes(?:\([^)]*\))?\[{n:,}\]",
        lambda n: rf"(?i)\bnodes(?:\([^)]*\))?\[{n:,}\]",
        "/",
        "\r",
    )
    return Console(program)


def ready_manifests(count: int) -> list[dict[str, Any]]:
    """`bench_nodes.node_manifests(count)`, each Node with a Ready condition (no kubelet or
    node controller runs to change it)."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    ready = {
        "type": "Ready",
        "status": "True",
        "reason": "KubeletReady",
        "message": "registered by the benchmark",
        "lastHeartbeatTime": now,
        "lastTransitionTime": now,
    }
    return [
        {**node, "status": {**node["status"], "conditions": [ready]}}
        for node in node_manifests(count)
    ]


def start_once(console: Console, nodes: int, env: dict[str, str]) -> Start:
    """Start `console` in a pty, open its Nodes view, take the numbers, close it."""
    term = PtyScreen(console.program.argv, env=env)
    try:
        key = 0.0
        if console.keys:
            term.wait_text(console.opens_at, timeout=TIMEOUT, what="the first frame")
            key = term.send(console.keys) - term.started
        rows = term.wait_text(NODE_ROW, timeout=TIMEOUT, what="a node row") - term.started
        count = console.program.count(nodes)
        full = term.wait_text(count, timeout=TIMEOUT, what=f"{nodes} nodes") - term.started
        return Start(rows, full, term.peak_rss_mb(), key)
    finally:
        term.close()


def measure(nodes: int, consoles: list[Console], env: dict[str, str]) -> list[Point]:
    """`STARTS` starts of each console, in turns; a failed start is reported and left out."""
    points = [Point(nodes, c.program.name) for c in consoles]
    for _ in range(STARTS):
        for console, point in zip(consoles, points, strict=True):
            try:
                point.starts.append(start_once(console, nodes, env))
            except AssertionError as exc:
                print(f"   {console.program.name} at {nodes} nodes: {exc}", flush=True)
    for p in points:
        starts = "; ".join(
            f"{s.rows * 1000:.0f}/{s.full * 1000:.0f} ms {s.rss_mb:.0f} MB" for s in p.starts
        )
        print(f"   {p.name} at {nodes} nodes, first rows/full list: {starts}", flush=True)
    return points


def _ms(seconds: float) -> str:
    return "-" if seconds != seconds else f"{seconds * 1000:.0f} ms"


def _growth(now: float, before: float | None) -> str:
    if before is None or now != now or before != before:
        return ""
    return f"{now / before:.2f}x"


Extra = list[tuple[str, Callable[[Point, Point], str]]]
"""Extra columns of a table: (heading, cell from gryvia's and k9s's Point at one size)."""


def _table(
    title: str,
    points: list[Point],
    pick: str,
    show: Callable[[float], str],
    extra: Extra | None = None,
) -> list[str]:
    """One measure: a row per size with both consoles' medians of `pick` (a `Start` field),
    the `extra` columns, and the growth of each console over the previous size."""
    gryvia = [p for p in points if p.name == "gryvia"]
    k9s = {p.nodes: p for p in points if p.name == "k9s"}
    head = f"  {'nodes':>6}  {'gryvia':>9}  {'k9s':>9}"
    if extra:
        head += "".join(f"  {name:>14}" for name, _ in extra)
    lines = [title, head + f"  {'gryvia growth':>13}  {'k9s growth':>10}"]
    before: tuple[float, float] | None = None
    for g in gryvia:
        k = k9s.get(g.nodes, Point(g.nodes, "k9s"))
        now = (g.median(pick), k.median(pick))
        row = f"  {g.nodes:>6}  {show(now[0]):>9}  {show(now[1]):>9}"
        if extra:
            row += "".join(f"  {fn(g, k):>14}" for _, fn in extra)
        growth = (
            _growth(now[0], before[0] if before else None),
            _growth(now[1], before[1] if before else None),
        )
        lines.append(row + f"  {growth[0]:>13}  {growth[1]:>10}")
        before = now
    return lines


def _paint_verdict(g: Point, k: Point) -> str:
    ours, theirs = g.median("rows"), k.median("rows")
    if ours != ours:
        return "n/a"
    ok = ours <= PAINT_LIMIT and (theirs != theirs or ours <= theirs)
    return "met" if ok else "MISSED"


def report(points: list[Point]) -> str:
    """The three tables (first paint with its target, full list, peak RSS) and a footnote."""

    def mb(value: float) -> str:
        return "-" if value != value else f"{value:.0f} MB"

    lines = _table(
        "first paint: process start -> first node row on screen",
        points,
        "rows",
        _ms,
        [
            ("target", _paint_verdict),
            ("gryvia from key", lambda g, k: _ms(g.from_key[0])),
        ],
    )
    lines += _table(
        "full list: process start -> every node counted on screen",
        points,
        "full",
        _ms,
        [("gryvia from key", lambda g, k: _ms(g.from_key[1]))],
    )
    lines += _table("peak RSS with the full list", points, "rss_mb", mb)
    lines.append(
        f"(median of {STARTS} starts of each, in turns; gryvia: `gryvia tui -A`, its Nodes key "
        f"typed at its first frame; k9s: `k9s -A -c nodes`; {JOBS} suspended jobs; target: "
        f"first paint <= {PAINT_LIMIT:.0f} s and <= k9s; load average "
        f"{os.getloadavg()[0]:.2f})"
    )
    return "\n".join(lines)


def main(sizes: tuple[int, ...] = SIZES) -> None:
    """Build k9s if needed, bring a bare API server up, grow the nodes to each size in turn,
    start both consoles, print the tables, stop."""
    k9s = _k9s_binary()
    with jobs_plane("gryvia-bench-nodes-tui-") as (home, plane, kube):
        env = {
            "GRYVIA_CONFIG_HOME": f"{home}/config",
            "XDG_CONFIG_HOME": f"{home}/config",
            "XDG_STATE_HOME": f"{home}/state",
            "XDG_DATA_HOME": f"{home}/data",
            "K9S_CONFIG_DIR": f"{home}/k9s",
        }
        consoles = [gryvia_console(plane.kubeconfig), k9s_console(plane.kubeconfig, k9s)]
        points: list[Point] = []
        manifests = ready_manifests(max(sizes))
        for index, size in enumerate(growing(kube, manifests, sizes)):
            if index == 0:  # uncounted: bytecode and page cache for both
                for console in consoles:
                    try:
                        start_once(console, size, env)
                    except AssertionError as exc:
                        print(f"   {console.program.name} warm-up: {exc}", flush=True)
            points += measure(size, consoles, env)
        print(report(points), flush=True)


if __name__ == "__main__":
    main(tuple(int(a) for a in sys.argv[1:]) or SIZES)
