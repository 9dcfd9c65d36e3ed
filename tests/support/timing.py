"""Where the suite's time goes: a pytest plugin that records, for every test phase, its wall
time, the CPU time of the pytest process itself and the CPU time of every process it started
(the sandbox's control plane, the operator, kubectl and `gryvia` subprocesses), and prints at
the end of the run the slowest tests, the time per file and how often the operator started.

`--durations` shows wall time only: a test that waits on a busy API server and one that keeps
both cores busy look alike there. Children's CPU is read from `/proc` (utime, stime and the
reaped children's cutime, cstime of every live descendant) plus `RUSAGE_CHILDREN` for the
children pytest itself reaped, so a process that ends inside a test is counted once.

Each phase's figures travel on the test report (`user_properties`), so the summary is right
under pytest-xdist too. `GRYVIA_TEST_TIMING=FILE` also writes every test's figures to FILE as
JSON lines (appended; one line per test id), which `python -m tests.support.timing FILE...`
turns into the same tables for several runs together.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import traceback
from collections import defaultdict
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

_TICKS = os.sysconf("SC_CLK_TCK")
_KEY = "gryvia_timing"
SLOWEST = 25

operator_starts = 0
"""How many operator processes the tests started in this process (OperatorProcess.start)."""


def count_operator_start() -> None:
    """Called by `tests.support.operator.OperatorProcess.start`: one more operator start.
    `GRYVIA_TEST_STARTS=FILE` also appends the running test and the test-side line that asked
    for the start (the nearest frame outside tests/support) to FILE, one line per start."""
    global operator_starts
    operator_starts += 1
    if log := os.environ.get("GRYVIA_TEST_STARTS"):
        site = next(
            (
                f"{f.filename.rpartition('/tests/')[2]}:{f.lineno} {f.name}"
                for f in reversed(traceback.extract_stack())
                if "/tests/" in f.filename and "/tests/support/" not in f.filename
            ),
            "?",
        )
        test = os.environ.get("PYTEST_CURRENT_TEST", "?")
        with Path(log).open("a") as out:
            out.write(f"{test} <- {site}\n")


def _descendants_cpu() -> float:
    """CPU seconds of every live descendant of this process (their own and what they reaped)."""
    me = os.getpid()
    children: dict[int, list[int]] = defaultdict(list)
    cpu: dict[int, float] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry.name}/stat").read_bytes()
        except OSError:
            continue
        # Fields after the command (which may hold spaces and parentheses) start at ')'.
        fields = raw[raw.rfind(b")") + 2 :].split()
        pid, ppid = int(entry.name), int(fields[1])
        children[ppid].append(pid)
        cpu[pid] = sum(int(x) for x in fields[11:15]) / _TICKS
    total, todo = 0.0, list(children[me])
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo.extend(children[pid])
    return total


@dataclass(frozen=True)
class Sample:
    """One reading: wall clock, own CPU, children's CPU (seconds), operator starts so far."""

    wall: float
    own: float
    children: float
    starts: int

    @staticmethod
    def now() -> Sample:
        """Read the clocks now."""
        me = resource.getrusage(resource.RUSAGE_SELF)
        reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
        return Sample(
            time.monotonic(),
            me.ru_utime + me.ru_stime,
            reaped.ru_utime + reaped.ru_stime + _descendants_cpu(),
            operator_starts,
        )

    def until(self, later: Sample) -> dict[str, float]:
        """The figures between this reading and `later`."""
        return {
            "wall": later.wall - self.wall,
            "cpu": later.own - self.own,
            "children": max(0.0, later.children - self.children),
            "starts": later.starts - self.starts,
        }


_phase: pytest.StashKey[dict[str, float]] = pytest.StashKey()


def _measure(item: pytest.Item) -> Generator[None, None, None]:
    before = Sample.now()
    yield
    item.stash[_phase] = before.until(Sample.now())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """Measure the setup phase (session fixtures such as the sandbox land here)."""
    yield from _measure(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Measure the test itself."""
    yield from _measure(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    """Measure the teardown phase."""
    yield from _measure(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Put the phase's figures on its report (they travel to the xdist controller)."""
    outcome = yield
    figures = item.stash.get(_phase, None)
    if figures is not None:
        outcome.get_result().user_properties.append((_KEY, figures))
        del item.stash[_phase]


@dataclass
class Totals:
    """The figures of one test (or one file), summed over its phases."""

    wall: float = 0.0
    cpu: float = 0.0
    children: float = 0.0
    starts: int = 0
    tests: int = 0

    def add(self, figures: dict[str, float]) -> None:
        """Add one phase's figures."""
        self.wall += figures["wall"]
        self.cpu += figures["cpu"]
        self.children += figures["children"]
        self.starts += int(figures["starts"])

    def merge(self, other: Totals) -> None:
        """Add another test's totals (a file's or the run's sum)."""
        self.wall += other.wall
        self.cpu += other.cpu
        self.children += other.children
        self.starts += other.starts


class Recorder:
    """Collects the figures of every report and prints the tables at the end."""

    def __init__(self, out: Path | None) -> None:
        self.by_test: dict[str, Totals] = defaultdict(Totals)
        self.out = out

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Take a phase's figures from its report."""
        for key, figures in report.user_properties:
            if key == _KEY:
                self.by_test[report.nodeid].add(figures)
        if report.when == "teardown" and self.out is not None and report.nodeid in self.by_test:
            t = self.by_test[report.nodeid]
            line = {"id": report.nodeid, "wall": t.wall, "cpu": t.cpu, "children": t.children}
            with self.out.open("a") as f:
                f.write(json.dumps({**line, "starts": t.starts}) + "\n")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print the slowest tests, the time per file and the operator starts."""
        if self.by_test:
            for line in report_lines(self.by_test.items()):
                terminalreporter.write_line(line)


def report_lines(tests: Iterable[tuple[str, Totals]]) -> list[str]:
    """The tables: the SLOWEST tests by wall time, then each file's totals (most wall first),
    then the run's totals with the count of operator starts. Seconds throughout."""
    tests = list(tests)
    head = f"{'wall s':>8} {'cpu s':>8} {'child s':>8} {'op':>3}  "
    lines = ["", f"== {SLOWEST} slowest tests (wall; own CPU; children's CPU; operator starts) =="]
    lines.append(head + "test")
    for nodeid, t in sorted(tests, key=lambda p: -p[1].wall)[:SLOWEST]:
        lines.append(f"{t.wall:8.1f} {t.cpu:8.1f} {t.children:8.1f} {t.starts:3d}  {nodeid}")
    files: dict[str, Totals] = defaultdict(Totals)
    for nodeid, t in tests:
        f = files[nodeid.split("::", 1)[0]]
        f.merge(t)
        f.tests += 1
    lines += ["", "== time per file ==", head + f"{'tests':>5}  file"]
    for name, t in sorted(files.items(), key=lambda p: -p[1].wall):
        row = f"{t.wall:8.1f} {t.cpu:8.1f} {t.children:8.1f} {t.starts:3d}"
        lines.append(f"{row}  {t.tests:5d}  {name}")
    total = Totals()
    for _, t in tests:
        total.merge(t)
    lines += [
        "",
        f"== {len(tests)} tests: wall {total.wall:.0f} s (summed over workers), own CPU "
        f"{total.cpu:.0f} s, children's CPU {total.children:.0f} s; "
        f"operator starts: {total.starts} ==",
    ]
    return lines


def pytest_configure(config: pytest.Config) -> None:
    """Register the recorder (in the xdist controller and in a plain run alike)."""
    out = os.environ.get("GRYVIA_TEST_TIMING")
    is_worker = hasattr(config, "workerinput")
    recorder = Recorder(Path(out) if out and not is_worker else None)
    config.pluginmanager.register(recorder, "gryvia-timing-recorder")


def main(paths: list[str]) -> int:
    """Print the tables for the JSON-lines files `paths` (several runs' figures together)."""
    tests: dict[str, Totals] = defaultdict(Totals)
    for path in paths:
        for line in Path(path).read_text().splitlines():
            row = json.loads(line)
            tests[row["id"]].add(row)
    print("\n".join(report_lines(tests.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
