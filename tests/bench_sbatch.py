"""`gryvia sbatch` benchmarks: `check` over 1000 varied Slurm scripts (wall time of the whole
command) and `convert` of a 500-element array to YAML and JSON.

Run `python -m tests.bench_sbatch`. The scripts come from `python -m gryvia_cli.sbatch.corpus`
(deterministic per seed); the check runs as a subprocess, so interpreter start-up and imports
are included, as a user would see them. Target: < 5 s for 1000 scripts (median of 3 runs).
The array: `gryvia sbatch convert` as a subprocess, -o yaml <= 2 s, each element's manifest
<= 8 KB (the runtime lives once, in the ConfigMap).
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
    array_bench()


ARRAY_SIZE = 500
ARRAY_TARGET_S = 2.0
ELEMENT_TARGET_BYTES = 8 * 1024
ARRAY_SCRIPT = f"""#!/bin/bash
#SBATCH --job-name=sweep
#SBATCH --array=0-{ARRAY_SIZE - 1}%20
#SBATCH --gres=gpu:1
#SBATCH -c 4
#SBATCH --mem=16G
#SBATCH -t 2:00:00
python train.py --seed "$SLURM_ARRAY_TASK_ID"
"""


def array_bench() -> None:
    """Convert a 500-element array with `gryvia sbatch convert -o yaml|json`; print times/sizes."""
    import json

    env = {**os.environ, "NO_COLOR": "1"}
    with tempfile.TemporaryDirectory(prefix="gryvia-bench-array-") as tmp:
        script = Path(tmp) / "sweep.sh"
        script.write_text(ARRAY_SCRIPT)
        results: dict[str, tuple[float, int]] = {}
        data: dict[str, object] = {}
        for fmt in ("json", "yaml"):
            times, size = [], 0
            for _ in range(RUNS):
                start = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-m", "gryvia_cli", "sbatch", "convert", str(script),
                     "--image", "img", "-o", fmt],
                    check=True, capture_output=True, env=env,
                )  # fmt: skip
                times.append(time.perf_counter() - start)
                size = len(done.stdout)
                if fmt == "json":
                    data = json.loads(done.stdout)
            results[fmt] = (statistics.median(times), size)
    jobs = data["jobs"]
    assert isinstance(jobs, list)
    element = max(len(json.dumps(job, separators=(",", ":"))) for job in jobs)
    runtime = len(json.dumps(data["runtime"], separators=(",", ":")))
    yaml_s, yaml_bytes = results["yaml"]
    json_s, json_bytes = results["json"]
    ok = yaml_s <= ARRAY_TARGET_S and element <= ELEMENT_TARGET_BYTES
    print(
        f"sbatch convert of a {len(jobs)}-element array: yaml {yaml_s:.2f} s "
        f"({yaml_bytes / 1e6:.1f} MB), json {json_s:.2f} s ({json_bytes / 1e6:.1f} MB); largest "
        f"element {element / 1024:.1f} KB, runtime ConfigMap {runtime / 1024:.1f} KB once "
        f"(targets yaml <= {ARRAY_TARGET_S:.0f} s, element <= 8 KB: {'ok' if ok else 'MISSED'})"
    )


if __name__ == "__main__":
    main()
