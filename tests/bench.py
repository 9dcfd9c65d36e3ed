"""`make bench`: every benchmark of the project, each printing its numbers."""

from __future__ import annotations

import importlib
import sys

SUITES = [
    "tests.bench_sandbox",
    "tests.bench_operator",
    "tests.bench_restart",
    "tests.bench_scale",
    "tests.bench_jobrecords",
    "tests.bench_staging",
    "tests.bench_handover",
    "tests.bench_realnode",
    "tests.bench_cli",
    "tests.bench_nodes",
    "tests.bench_nodes_tui",
    "tests.bench_tui",
    "tests.bench_tui_pages",
    "tests.bench_quit",
    "tests.bench_sbatch",
    "tests.bench_tenancy",
    "tests.bench_budget",
    "tests.bench_pending",
    "tests.bench_kueue",
    "tests.bench_idle",
    "tests.bench_gpumetrics",
]


def main() -> None:
    """Run each suite's main() in turn; a failing suite is reported and the rest still run."""
    failed = []
    for name in SUITES:
        print(f"== {name}", flush=True)
        try:
            importlib.import_module(name).main()
        except Exception as exc:
            failed.append(name)
            print(f"   failed: {exc!r}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
