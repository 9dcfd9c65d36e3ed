"""`gryvia sbatch check` benchmark: 1000 varied Slurm scripts, wall time of the whole command.

Run `python -m tests.bench_sbatch`. The scripts come from `python -m gryvia_cli.sbatch.corpus`
(deterministic per seed); the check runs as a subprocess, so interpreter start-up and imports
are included, as a user would see them. Target: < 5 s for 1000 scripts (median of 3 runs).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPTS = 1000
RUNS = 3
TARGET_S = 5.0
ROWS = {
    "converts cleanly": "clean",
    "converts with warnings": "with warnings",
    "refused": "refused",
}


def _counts(table: str) -> dict[str, int]:
    """The RESULT table's counts, read from the text `gryvia sbatch check` printed."""
    counts: dict[str, int] = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in re.split(r"[│|┃]| {2,}", line) if cell.strip()]
        if len(cells) == 2 and cells[0] in ROWS and cells[1].isdigit():
            counts[ROWS[cells[0]]] = int(cells[1])
    return counts


def main() -> None:
    """Generate the corpus, time `gryvia sbatch check` on it and print the numbers."""
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    with tempfile.TemporaryDirectory(prefix="gryvia-bench-sbatch-") as tmp:
        folder = Path(tmp) / "scripts"
        subprocess.run(
            [sys.executable, "-m", "gryvia_cli.sbatch.corpus", str(folder), str(SCRIPTS)],
            check=True,
            capture_output=True,
            env=env,
        )
        written = sum(1 for path in folder.iterdir() if path.is_file())
        times, output = [], ""
        for _ in range(RUNS):
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "gryvia_cli", "sbatch", "check", str(folder)],
                check=True,
                capture_output=True,
                text=True,
                env=env,
            )
            times.append(time.perf_counter() - start)
            output = done.stdout
    median = statistics.median(times)
    counts = _counts(output)
    verdict = "ok" if median < TARGET_S else "MISSED"
    print(
        f"sbatch check of {written} scripts: median {median:.2f} s over {RUNS} runs "
        f"(runs {', '.join(f'{t:.2f}' for t in times)} s; target < {TARGET_S:.0f} s: {verdict})"
    )
    total = sum(counts.values())
    print(
        f"  summary: {counts.get('clean', 0)} clean, {counts.get('with warnings', 0)} with "
        f"warnings, {counts.get('refused', 0)} refused ({total} of {written} counted)"
    )


if __name__ == "__main__":
    main()
