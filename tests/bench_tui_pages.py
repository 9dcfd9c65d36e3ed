"""Console benchmark of the paged first list: first rows and the whole list at each size.

A bare API server (etcd + kube-apiserver, `tests.support.controlplane`) is filled with
suspended GryviaAIJobs in 20 namespaces, one size after another (1,000 then 10,000 by
default; `make bench-large`: 100,000). At each size it prints:

- the API server's own time to serve the whole list (one GET of every job, no `limit`, the
  bytes read, no decoding; median of 3), and the same list read in pages of 500 and decoded
  (what the console's watcher does);
- `gryvia tui -A` started in a 160x48 pty (`tests.support.ptyscreen`): the time from process
  start to the first frame with the tab bar ("first frame": the console's own start-up), to
  the first frame with a job row on it ("first rows"), to the first frame whose status line
  shows the whole count (`N jobs`, no `+`/`loading…`: "full list"), whether that first frame
  with rows still said `loading…`, and the peak RSS (median of 3 starts each);
- after the list is complete, a `/` filter that matches 10 job names, checked on screen.

Targets (issue #42): first rows <= 300 ms at every size, full list <= 2x the server's time,
RSS <= 600 MB at 100,000. Run with `python -m tests.bench_tui_pages [SIZE ...]`.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.builders import make_job
from tests.support.ptyscreen import PtyScreen

SIZES = (1_000, 10_000)
LARGE = (100_000,)
NAMESPACES = 20
STARTS = 3
FILTER = "job-0099"
"""A substring of 10 job names (job-00990 .. job-00999) at every size >= 1,000."""
REPO = Path(__file__).resolve().parent.parent
ROW = r"\bjob-\d{5}\b"


@dataclass
class Numbers:
    """One size's numbers (seconds, MB)."""

    jobs: int
    server: float = float("nan")
    paged: float = float("nan")
    first_frame: float = float("nan")
    first_rows: float = float("nan")
    full: float = float("nan")
    loading_seen: bool = False
    rss_mb: float = float("nan")
    filter_ok: bool = False


def _create(kubectl: list[str], jobs: list[dict[str, object]]) -> None:
    body = json.dumps({"apiVersion": "v1", "kind": "List", "items": jobs})
    subprocess.run(
        [*kubectl, "create", "-f", "-"], input=body, text=True, check=True, capture_output=True
    )


def _fill(kubectl: list[str], start: int, stop: int) -> None:
    """Create jobs job-<start> .. job-<stop - 1>, suspended, in lists of 500."""
    jobs = [
        make_job(f"job-{i:05d}", f"team-{i % NAMESPACES}")
        .gpus(8)
        .gpu_type("H100")
        .image("busybox")
        .suspend()
        .command("sleep", "1")
        .manifest()
        for i in range(start, stop)
    ]
    chunks = [jobs[s : s + 500] for s in range(0, len(jobs), 500)]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda chunk: _create(kubectl, chunk), chunks))


def _server_times(kubeconfig: Path) -> tuple[float, float]:
    """(median seconds of a whole-list GET as bytes, of the list read in pages of 500)."""
    from gryvia_cli.kube import resources as r
    from gryvia_cli.kube.connect import connect
    from gryvia_cli.kube.paging import list_all

    access = connect(kubeconfig, None)
    whole, paged = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        access.list_bytes(r.AIJOB)
        whole.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        list_all(access, r.AIJOB)
        paged.append(time.perf_counter() - t0)
    return statistics.median(whole), statistics.median(paged)


def _console(kubeconfig: Path, env: dict[str, str], jobs: int, *, check_filter: bool) -> Numbers:
    argv = [str(REPO / ".venv/bin/gryvia"), "--kubeconfig", str(kubeconfig), "tui", "-A"]
    out = Numbers(jobs)
    term = PtyScreen(argv, env=env)
    try:
        out.first_frame = term.wait_text(r"1 Jobs", timeout=120, what="the tab bar") - term.started
        row, count = re.compile(ROW), re.compile(r"\b\d+(\+?) jobs\b")

        def shown(rows: list[str]) -> str:
            """ "loading"/"complete" once a frame has job rows and the count under them (a
            frame may come in several chunks: the rows before the status line)."""
            counts = [m for r in rows if (m := count.search(r))]
            if not counts or not any(row.search(r) for r in rows):
                return ""
            return "loading" if counts[-1].group(1) else "complete"

        at, loading = term.wait(shown, timeout=120, what="job rows and their count")
        out.first_rows = at - term.started
        out.loading_seen = loading == "loading"
        full = term.wait_text(rf"(?<![\d,+]){jobs} jobs\b", timeout=600, what=f"{jobs} jobs")
        out.full = full - term.started
        out.rss_mb = term.peak_rss_mb()
        if check_filter:
            term.send("/")
            term.wait_text(r"filter:", timeout=10, what="the filter line")
            term.send(FILTER)
            term.wait_text(rf"\b10 of {jobs} jobs\b", timeout=30, what="10 jobs filtered")
            rows = [r for r in term.screen_lines() if re.search(rf"\b{FILTER}\d\b", r)]
            out.filter_ok = len(rows) == 10
    finally:
        term.close()
    return out


def measure(kubeconfig: Path, env: dict[str, str], jobs: int) -> Numbers:
    """The numbers at `jobs` jobs (the cluster holds exactly that many)."""
    runs = [_console(kubeconfig, env, jobs, check_filter=i == 0) for i in range(STARTS)]
    out = Numbers(jobs)
    out.server, out.paged = _server_times(kubeconfig)
    out.first_frame = statistics.median(r.first_frame for r in runs)
    out.first_rows = statistics.median(r.first_rows for r in runs)
    out.full = statistics.median(r.full for r in runs)
    out.rss_mb = statistics.median(r.rss_mb for r in runs)
    out.loading_seen = any(r.loading_seen for r in runs)
    out.filter_ok = runs[0].filter_ok
    return out


def _ms(seconds: float) -> str:
    return "-" if seconds != seconds else f"{seconds * 1000:.0f} ms"


def report(n: Numbers) -> str:
    """One line per size, with the targets met or missed."""
    rows_ok = n.first_rows <= 0.3
    full_ok = n.full <= 2 * n.server
    return (
        f"{n.jobs:>7} jobs: server {_ms(n.server)} (pages of 500, decoded: {_ms(n.paged)}); "
        f"console first frame {_ms(n.first_frame)}, first rows {_ms(n.first_rows)} "
        f"[{'met' if rows_ok else 'missed'} <= 300 ms], "
        f"full list {_ms(n.full)} [{'met' if full_ok else 'missed'} <= 2x server], "
        f"rows shown while 'loading…': {n.loading_seen}, peak RSS {n.rss_mb:.0f} MB, "
        f"filter correct: {n.filter_ok}"
    )


def main(sizes: tuple[int, ...] = SIZES) -> None:
    """Bring a bare API server up, grow it to each size in turn, measure, print, stop."""
    from gryvia_cli.sandbox import binaries
    from gryvia_operator.api.crd import generate as crdgen
    from tests.support.controlplane import control_plane

    with tempfile.TemporaryDirectory(prefix="gryvia-bench-pages-") as home:
        env = {"XDG_CONFIG_HOME": f"{home}/config", "XDG_STATE_HOME": f"{home}/state"}
        with control_plane(Path(home) / "plane") as plane:
            kubectl = [str(binaries.path_of("kubectl")), "--kubeconfig", str(plane.kubeconfig)]
            crds = {"apiVersion": "v1", "kind": "List", "items": crdgen.build_crds()}
            subprocess.run(
                [*kubectl, "apply", "--server-side", "-f", "-"],
                input=json.dumps(crds),
                text=True,
                check=True,
                capture_output=True,
            )
            subprocess.run(
                [*kubectl, "wait", "--for=condition=Established", "crd", "--all"],
                check=True,
                capture_output=True,
            )
            for n in range(NAMESPACES):
                subprocess.run(
                    [*kubectl, "create", "namespace", f"team-{n}"], check=True, capture_output=True
                )
            have = 0
            for size in sorted(sizes):
                t0 = time.monotonic()
                _fill(kubectl, have, size)
                have = size
                print(f"{size} jobs in place ({time.monotonic() - t0:.0f} s)", flush=True)
                print(report(measure(plane.kubeconfig, env, size)), flush=True)


if __name__ == "__main__":
    main(tuple(int(a) for a in sys.argv[1:]) or SIZES)
