"""CLI benchmark against kubectl: a sandbox with 500 GPU nodes, 200, 1000, then 10,000
GryviaAIJobs.

Run: `.venv/bin/python -m tests.bench_cli` (prints a table; a few minutes). It starts its own
sandbox under a temporary GRYVIA_SANDBOX_HOME and removes it afterwards. For each read command
and its closest `kubectl get`, run in turn as subprocesses (interpreter start included), it
reports the median wall time and the median CPU time (user + sys of the child) of RUNS runs
after one warm-up, with output read through a pipe like a script would; `-o json` is also
timed on a pseudo-terminal, where gryvia indents the JSON.

Targets (issue 22, point 6): `gryvia --help` <= 120 ms of CPU; `list jobs -A -o json` on 1000
jobs no slower than `kubectl get gaj -A -o json`, piped and on a terminal; every read command
within 1.5x of kubectl's wall time at 1000 objects and within 2x at 200. Issue 42 point 3:
`list jobs -A` within 1.5x at 200 jobs too, with each start-up cut's saving measured in the
same run (`tests.bench_startup.savings`), and at 10,000 jobs `-o json` no slower than kubectl
and the table printed page by page (`bench_startup.streaming`: the first row's time).
The kubectl command of a row reads what the gryvia command reads: `queue` ranks waiting
jobs against the GPU supply, so it is timed against `get gaj,pods,nodes`; a reference row
(no target) keeps the comparison with `get gaj,pods`, which reads no nodes, that earlier
runs printed.
"""

from __future__ import annotations

import json
import os
import pty
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.builders import make_job

NODES = "250xH100:8,250xA100-80G:8"
SIZES = (200, 1000, 10000)
NAMESPACES = 5
RUNS = 7
HELP_CPU = 0.120


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time_pipe(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    cpu, started = _cpu(), time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {proc.stderr.decode()[-500:]}")
    return elapsed, _cpu() - cpu


def _time_tty(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """Run with stdout on a pseudo-terminal (drained by a thread), stderr to a pipe."""
    master, slave = pty.openpty()

    def drain() -> None:
        while True:
            try:
                if not os.read(master, 65536):
                    return
            except OSError:
                return

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    cpu, started = _cpu(), time.perf_counter()
    proc = subprocess.run(argv, env=env, stdout=slave, stderr=subprocess.PIPE, check=False)
    elapsed, used = time.perf_counter() - started, _cpu() - cpu
    os.close(slave)
    reader.join(timeout=5)
    os.close(master)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {proc.stderr.decode()[-500:]}")
    return elapsed, used


def median(
    argv: Sequence[str], env: dict[str, str], runs: int = RUNS, tty: bool = False
) -> tuple[float, float]:
    """Median (wall, CPU) seconds of `runs` runs after one warm-up run."""
    timer = _time_tty if tty else _time_pipe
    timer(argv, env)
    samples = [timer(argv, env) for _ in range(runs)]
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


@dataclass(frozen=True)
class Case:
    """One row: a gryvia command, the closest kubectl command, and the target's kind."""

    label: str
    gryvia: tuple[str, ...]
    kubectl: tuple[str, ...]
    tty: bool = False
    limit: Callable[[int], float] | None = lambda jobs: 1.5 if jobs >= 1000 else 2.0
    """The highest gryvia/kubectl wall-time ratio allowed at this many jobs; None: a row for
    reference, with no target."""


def _json_limit(jobs: int) -> float:
    return 1.0 if jobs >= 1000 else 2.0


CASES = (
    Case("list jobs -A", ("list", "jobs", "-A"), ("get", "gaj", "-A"), limit=lambda jobs: 1.5),
    Case(
        "list jobs -A -o json (piped)",
        ("list", "jobs", "-A", "-o", "json"),
        ("get", "gaj", "-A", "-o", "json"),
        limit=_json_limit,
    ),
    Case(
        "list jobs -A -o json (terminal)",
        ("list", "jobs", "-A", "-o", "json"),
        ("get", "gaj", "-A", "-o", "json"),
        tty=True,
        limit=_json_limit,
    ),
    # queue ranks waiting jobs against the GPU supply: it reads the jobs, pods and nodes (and
    # scheduling events, tenants, namespaces), so its kubectl counterpart reads those three
    Case("queue -A", ("queue", "-A"), ("get", "gaj,pods,nodes", "-A")),
    Case("queue -A (vs gaj,pods only)", ("queue", "-A"), ("get", "gaj,pods", "-A"), limit=None),
    Case("capacity", ("capacity",), ("get", "gaj,nodes", "-A")),
)


@dataclass(frozen=True)
class Row:
    """Measured numbers of one command at one size, and its target."""

    jobs: int
    label: str
    gryvia: tuple[float, float]
    kubectl: tuple[float, float]
    target: str
    met: bool | None
    """None for a reference row (no target)."""

    @property
    def ratio(self) -> float:
        """gryvia's median wall time over kubectl's."""
        return self.gryvia[0] / self.kubectl[0]


def measure(jobs: int, gryvia: list[str], kube: list[str], env: dict[str, str]) -> list[Row]:
    """Time --help and every case at the current number of jobs."""
    rows = []
    if jobs == SIZES[0]:
        mine, theirs = median([*gryvia, "--help"], env), median([*kube, "--help"], env)
        rows.append(
            Row(0, "--help", mine, theirs, f"<= {HELP_CPU * 1000:.0f} ms CPU", mine[1] <= HELP_CPU)
        )
    for case in CASES:
        mine = median([*gryvia, *case.gryvia], env, tty=case.tty)
        theirs = median([*kube, *case.kubectl], env, tty=case.tty)
        if case.limit is None:
            rows.append(Row(jobs, case.label, mine, theirs, "reference", None))
            continue
        limit = case.limit(jobs)
        rows.append(
            Row(jobs, case.label, mine, theirs, f"<= {limit:.1f}x", mine[0] / theirs[0] <= limit)
        )
    return rows


def prepare(kubectl: Path, kubeconfig: Path, first: int, last: int) -> None:
    """Install the CRDs and namespaces (first call) and create jobs first..last-1 with one
    `kubectl create` of a List."""
    from gryvia_operator.api.crd import generate as crdgen

    def kc(*args: str, stdin: str | None = None) -> None:
        subprocess.run(
            [str(kubectl), "--kubeconfig", str(kubeconfig), *args],
            input=stdin,
            text=True,
            capture_output=True,
            check=True,
            timeout=600,
        )

    if first == 0:
        crds = crdgen.build_crds()
        kc(
            "apply",
            "-f",
            "-",
            stdin=json.dumps({"kind": "List", "apiVersion": "v1", "items": crds}),
        )
        kc("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
        namespaces = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"bench-{n}"}}
            for n in range(NAMESPACES)
        ]
        kc(
            "create",
            "-f",
            "-",
            stdin=json.dumps({"kind": "List", "apiVersion": "v1", "items": namespaces}),
        )
    items = [
        make_job(f"bench-{i:04d}", f"bench-{i % NAMESPACES}")
        .gpus(8)
        .gpu_type("H100" if i % 2 else "A100-80G")
        .image("busybox")
        .command("sleep", "1")
        .suspend()
        .manifest()
        for i in range(first, last)
    ]
    kc("create", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def main() -> None:
    """Start the sandbox, time the commands at each size, print the table, remove the sandbox."""
    from tests.bench_startup import savings, streaming

    home = Path(tempfile.mkdtemp(prefix="gryvia-bench-cli-"))
    os.environ["GRYVIA_SANDBOX_HOME"] = str(home / "sandbox")
    from gryvia_cli.sandbox import binaries, cluster

    name = f"bench-{uuid.uuid4().hex[:6]}"
    print(f"starting sandbox {name} with {NODES} ...", file=sys.stderr)
    started = time.monotonic()
    box = cluster.up(name, NODES, progress=lambda m: print(f"  {m}", file=sys.stderr))
    print(f"  up in {time.monotonic() - started:.0f}s", file=sys.stderr)
    try:
        kubectl = binaries.path_of("kubectl")
        # as users run it: bytecode cached (a stale module is compiled on every start while
        # PYTHONDONTWRITEBYTECODE is set, as in some CI and dev shells), output buffered
        import compileall

        for package in ("gryvia_cli", "gryvia_operator", "gryvia"):
            compileall.compile_dir(Path(__file__).parents[1] / package, quiet=1)
        unset = ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")
        env = {
            k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_") and k not in unset
        }
        env.update(
            KUBECONFIG=str(box.kubeconfig),
            GRYVIA_CONFIG_HOME=str(home / "config"),
            NO_COLOR="1",
        )
        gryvia = [sys.executable, "-m", "gryvia_cli"]
        kube = [str(kubectl), "--kubeconfig", str(box.kubeconfig)]
        rows: list[Row] = []
        notes: list[str] = []
        created = 0
        for size in SIZES:
            print(f"  creating jobs {created}..{size - 1}", file=sys.stderr)
            prepare(kubectl, box.kubeconfig, created, size)
            created = size
            rows += measure(size, gryvia, kube, env)
            if size == SIZES[0]:
                notes += savings(kube, env, box.kubeconfig)
            if size == SIZES[-1]:
                notes += [f"at {size} jobs:", *streaming(gryvia, kube, env)]
        report(rows)
        print("\n".join(notes))
    finally:
        cluster.down(name)


def report(rows: Sequence[Row]) -> None:
    """Print one line per command and size: both tools' median wall and CPU time, the ratio,
    the target and whether it was met."""
    header = ("jobs", "command", "gryvia wall/cpu", "kubectl wall/cpu", "ratio", "target", "")
    lines = [header]
    for row in rows:
        lines.append(
            (
                str(row.jobs or "-"),
                row.label,
                f"{row.gryvia[0] * 1000:.0f}/{row.gryvia[1] * 1000:.0f} ms",
                f"{row.kubectl[0] * 1000:.0f}/{row.kubectl[1] * 1000:.0f} ms",
                f"{row.ratio:.2f}",
                row.target,
                "" if row.met is None else "met" if row.met else "MISSED",
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        )
    print(
        f"(median of {RUNS} runs each after a warm-up; queue ~ kubectl get gaj,pods,nodes, "
        f"capacity ~ kubectl get gaj,nodes; load average {os.getloadavg()[0]:.2f})"
    )


if __name__ == "__main__":
    main()
