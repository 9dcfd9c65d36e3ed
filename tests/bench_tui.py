"""TUI benchmark: Gryvia's console side by side with k9s on one sandbox.

The sandbox has 500 GPU nodes and 10,000 suspended GryviaAIJobs in 20 namespaces. Gryvia's
Jobs view (`gryvia tui -A`) and k9s on `gryviaaijobs` (all namespaces) are measured the same
way, one after the other, each in a 160x48 pty whose output is fed to a terminal emulator
(tests.support.ptyscreen): the first frame that shows the whole row count after process start
(Gryvia's status line `10000 jobs`, k9s's header `gryviaaijobs(all)[10,000]`; the median of
three starts of each, taken in turns), the time from
typing a substring filter to the frame that shows the filtered count, the time from a job's
status patch to the frame that shows its new phase (p95 of the samples), and the peak RSS of
the process. Prints a table with the targets (first paint <= 1 s and <= k9s's, filter <= 250 ms,
update p95 <= 250 ms, RSS <= 200 MB). k9s is built into the binary cache on first use
(`tools/k8s/build-k9s.sh`). Run with `python -m tests.bench_tui`.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.builders import make_job
from tests.support.ptyscreen import PtyScreen

JOBS = 10_000
NODES = 500
NAMESPACES = 20
SAMPLES = 30
PAINT_RUNS = 3
"""Starts of each console whose first paint is timed, in turns (the median is reported)."""
FILTER = "job-0999"
"""A substring of 10 job names (job-09990 .. job-09999) and of nothing else on a row."""
FILTERED = 10
REPO = Path(__file__).resolve().parent.parent


def _kubectl(kubectl: list[str], *args: str, body: Any = None) -> None:
    subprocess.run(
        [*kubectl, *args],
        input=json.dumps(body) if body is not None else None,
        text=True,
        check=True,
        capture_output=True,
        timeout=900,
    )


def _populate(kubectl: list[str]) -> None:
    """CRDs, a GryviaGpuNode per node, namespaces and the suspended jobs (Lists of 500)."""
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
        make_job(f"job-{i:05d}", f"team-{i % NAMESPACES}")
        .gpus(8)
        .gpu_type("H100")
        .image("busybox")
        .suspend()
        .command("sleep", "1")
        .manifest()
        for i in range(JOBS)
    ]
    lists = [
        {"apiVersion": "v1", "kind": "List", "items": jobs[start : start + 500]}
        for start in range(0, JOBS, 500)
    ]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda body: _kubectl(kubectl, "create", "-f", "-", body=body), lists))


@dataclass
class Result:
    """One program's numbers (seconds, MB)."""

    name: str
    first_paint: float = float("nan")
    paints: list[float] = field(default_factory=list)
    filter: float = float("nan")
    delays: list[float] = field(default_factory=list)
    rss_mb: float = float("nan")
    error: str = ""

    @property
    def p95(self) -> float:
        """95th percentile of `delays` (nearest rank), NaN without samples."""
        if not self.delays:
            return float("nan")
        ordered = sorted(self.delays)
        return ordered[max(0, int(len(ordered) * 0.95 + 0.5) - 1)]


@dataclass(frozen=True)
class Program:
    """How to start one console and read its row count from the screen."""

    name: str
    argv: list[str]
    count: Callable[[int], str]
    """A regex that matches a screen row showing `n` rows in the table."""
    filtered: Callable[[int], str]
    """A regex that matches a screen row showing `n` rows left by the filter."""
    open_filter: str
    confirm_filter: str


def _gryvia(kubeconfig: Path) -> Program:
    return Program(
        "gryvia",
        [str(REPO / ".venv/bin/gryvia"), "--kubeconfig", str(kubeconfig), "tui", "-A"],
        lambda n: rf"(?<![\d,]){n} jobs\b",
        lambda n: rf"(?<![\d,]){n} of {JOBS} jobs\b",
        "/",
        "\r",
    )


def _k9s(kubeconfig: Path, k9s: Path) -> Program:
    argv = [str(k9s), "--kubeconfig", str(kubeconfig), "-A", "-c", "gryviaaijobs"]
    return Program(
        "k9s",
        [*argv, "--readonly", "--splashless", "--logoless"],
        lambda n: rf"gryviaaijobs\(all\)\[{n:,}\]",  # k9s writes counts with thousands commas
        lambda n: rf"gryviaaijobs\(all\)\[{n:,}\]",
        "/",
        "\r",
    )


def _patcher(kubeconfig: Path) -> Callable[[str, str, str], None]:
    from kubernetes import client, config

    api = client.CustomObjectsApi(config.new_client_from_config(config_file=str(kubeconfig)))

    def patch(namespace: str, name: str, phase: str) -> None:
        api.patch_namespaced_custom_object_status(
            "gryvia.io", "v1alpha1", namespace, "gryviaaijobs", name, {"status": {"phase": phase}}
        )

    return patch


def _first_paint(program: Program, env: dict[str, str]) -> float:
    """Seconds from starting `program` to the first frame showing every row, in a pty that
    is closed again."""
    term = PtyScreen(program.argv, env=env)
    try:
        return term.wait_text(program.count(JOBS), timeout=120, what=f"{JOBS} rows") - term.started
    finally:
        term.close()


def _first_paints(programs: list[Program], env: dict[str, str]) -> list[list[float]]:
    """PAINT_RUNS first paints of each program, taken in turns (A, B, A, B, ...) so both
    meet the cluster alike: just after the jobs are created the API server and the
    controllers are still busy with them."""
    paints: list[list[float]] = [[] for _ in programs]
    for _ in range(PAINT_RUNS):
        for index, program in enumerate(programs):
            try:
                paints[index].append(_first_paint(program, env))
            except AssertionError as exc:
                print(f"   {program.name}: {exc}", flush=True)
    return paints


def _measure(
    program: Program, kubeconfig: Path, env: dict[str, str], paints: list[float]
) -> Result:
    """Start `program` in a pty and take its filter, update and RSS numbers (first paint is
    the median of `paints`, see `_first_paints`); a failure is kept in `error`."""
    out = Result(program.name, paints=sorted(paints))
    if paints:
        out.first_paint = statistics.median(paints)
    patch = _patcher(kubeconfig)
    term: PtyScreen | None = None
    try:
        term = PtyScreen(program.argv, env=env)
        term.wait_text(program.count(JOBS), timeout=120, what=f"{JOBS} rows")
        time.sleep(1.0)  # let the first load settle before typing
        term.send(program.open_filter)
        time.sleep(0.5)
        start = term.send(FILTER)
        at = term.wait_text(program.filtered(FILTERED), timeout=30, what="the filtered count")
        out.filter = at - start
        term.send(program.confirm_filter)
        time.sleep(0.5)
        for i in range(SAMPLES):
            index = JOBS - FILTERED + i % FILTERED
            name, namespace = f"job-{index:05d}", f"team-{index % NAMESPACES}"
            phase = ("Running", "Queued")[(i // FILTERED) % 2]
            row = re.compile(rf"\b{name}\b.*\b{phase}\b")
            start = time.perf_counter()
            patch(namespace, name, phase)
            at, _ = term.wait(
                lambda rows, rx=row: any(rx.search(r) for r in rows),  # type: ignore[misc]
                timeout=30,
                what=f"{name} shown {phase}",
            )
            out.delays.append(at - start)
            time.sleep(0.05)
        out.rss_mb = term.peak_rss_mb()
    except AssertionError as exc:
        out.error = str(exc).splitlines()[0]
        print(f"   {program.name}: {exc}", flush=True)
    finally:
        if term is not None:
            term.close()
    return out


def _reset_phases(kubeconfig: Path) -> None:
    """Clear the phases the previous program's samples set, so both start alike."""
    patch = _patcher(kubeconfig)
    for index in range(JOBS - FILTERED, JOBS):
        patch(f"team-{index % NAMESPACES}", f"job-{index:05d}", "Pending")


def _k9s_binary() -> Path:
    """k9s from the binary cache, built there on first use (several minutes)."""
    script = REPO / "tools/k8s/build-k9s.sh"
    subprocess.run([str(script)], check=True)
    out = subprocess.run([str(script), "--print-path"], text=True, check=True, capture_output=True)
    return Path(out.stdout.strip())


def _ms(seconds: float) -> str:
    return "-" if seconds != seconds else f"{seconds * 1000:.0f} ms"


def table(gryvia: Result, k9s: Result) -> list[str]:
    """The side-by-side table: one row per measure, Gryvia, k9s, target, met/missed."""

    def verdict(ok: bool | None) -> str:
        return "n/a" if ok is None else ("met" if ok else "MISSED")

    def known(*values: float) -> bool:
        return all(v == v for v in values)

    paint_ok = (
        gryvia.first_paint <= 1.0
        and (not known(k9s.first_paint) or gryvia.first_paint <= k9s.first_paint)
        if known(gryvia.first_paint)
        else None
    )
    rows = [
        ("measure", "gryvia", "k9s", "target", "gryvia"),
        (
            f"first paint, {JOBS} rows",
            _ms(gryvia.first_paint),
            _ms(k9s.first_paint),
            "<= 1 s and <= k9s",
            verdict(paint_ok),
        ),
        (
            f"filter '{FILTER}' -> repaint",
            _ms(gryvia.filter),
            _ms(k9s.filter),
            "<= 250 ms",
            verdict(gryvia.filter <= 0.25 if known(gryvia.filter) else None),
        ),
        (
            f"phase patch -> screen p95 ({SAMPLES})",
            _ms(gryvia.p95),
            _ms(k9s.p95),
            "<= 250 ms",
            verdict(gryvia.p95 <= 0.25 if known(gryvia.p95) else None),
        ),
        (
            "peak RSS",
            "-" if not known(gryvia.rss_mb) else f"{gryvia.rss_mb:.0f} MB",
            "-" if not known(k9s.rss_mb) else f"{k9s.rss_mb:.0f} MB",
            "<= 200 MB",
            verdict(gryvia.rss_mb <= 200 if known(gryvia.rss_mb) else None),
        ),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]


def main() -> None:
    """Build k9s if needed, bring the sandbox up, fill it, measure both, print, tear down."""
    from gryvia_cli.sandbox import binaries, cluster

    k9s_bin = _k9s_binary()
    with tempfile.TemporaryDirectory(prefix="gryvia-bench-tui-") as home:
        os.environ["GRYVIA_SANDBOX_HOME"] = home
        env = {"XDG_CONFIG_HOME": f"{home}/config", "XDG_STATE_HOME": f"{home}/state"}
        env |= {"K9S_CONFIG_DIR": f"{home}/k9s", "XDG_DATA_HOME": f"{home}/data"}
        name = f"btui-{uuid.uuid4().hex[:4]}"
        t0 = time.monotonic()
        box = cluster.up(name, f"{NODES}xH100:8")
        try:
            print(f"sandbox with {NODES} nodes up in {time.monotonic() - t0:.1f} s", flush=True)
            kubectl = [str(binaries.path_of("kubectl")), "--kubeconfig", str(box.kubeconfig)]
            t0 = time.monotonic()
            _populate(kubectl)
            print(
                f"{JOBS} jobs in {NAMESPACES} namespaces and {NODES} GryviaGpuNodes created in "
                f"{time.monotonic() - t0:.1f} s",
                flush=True,
            )
            programs = [_gryvia(box.kubeconfig), _k9s(box.kubeconfig, k9s_bin)]
            paints = _first_paints(programs, env)
            gryvia = _measure(programs[0], box.kubeconfig, env, paints[0])
            _reset_phases(box.kubeconfig)
            k9s = _measure(programs[1], box.kubeconfig, env, paints[1])
            for line in table(gryvia, k9s):
                print(line)
            for res in (gryvia, k9s):
                if res.paints:
                    print(f"{res.name} first paint: {', '.join(_ms(p) for p in res.paints)}")
                if res.delays:
                    d = sorted(res.delays)
                    print(
                        f"{res.name} phase patch -> screen: min {_ms(d[0])}, "
                        f"median {_ms(d[len(d) // 2])}, max {_ms(d[-1])}"
                    )
        finally:
            cluster.down(name)


if __name__ == "__main__":
    main()
