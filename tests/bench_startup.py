"""The CLI's fixed cost, cut by cut (issue 42 point 3), for `tests.bench_cli`.

`savings` times `gryvia list jobs -A` as shipped beside the same command with one start-up
cut undone, all in one run and interleaved (A B C ... A B C ...), so that each saving is a
difference of medians taken under the same load:

- the Typer app instead of the start-up fast path (`cli.fastpath`): `gryvia_cli.main.app`
  run directly;
- urllib3 instead of `http.client` for reads (`kube.lighthttp`): the light client's `fetch`
  removed, so `KubeAccess` sends through its urllib3 `call_api`;
- both undone: the CLI as it started before the cuts;
- a JSON copy of the kubeconfig: what reading the YAML one (PyYAML's import) costs;
- `python -c pass`: the interpreter alone, the floor of any Python CLI.

`first_rows` reads a command's output as it comes: the time of its first table row beside
its total, which shows a table printed page by page (gryvia's is; kubectl 1.36 printed its
first row to a pipe only at the end of its list in our runs).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from tests.bench_cli import RUNS, _time_pipe

LIST = ("list", "jobs", "-A")
TYPER = "from gryvia_cli.main import app; app(prog_name='gryvia')"
URLLIB3 = (
    "from gryvia_cli.kube import transport; del transport.StaticApiClient.fetch; "
    "from gryvia_cli.main import main; main()"
)
BOTH = (
    "from gryvia_cli.kube import transport; del transport.StaticApiClient.fetch; "
    "from gryvia_cli.main import app; app(prog_name='gryvia')"
)


def savings(kube: Sequence[str], env: dict[str, str], kubeconfig: Path) -> list[str]:
    """Median wall/CPU ms of each variant (see the module docstring) and its difference to
    the shipped command; lines to print."""
    py = sys.executable
    as_json = kubeconfig.with_suffix(".json")
    import yaml

    as_json.write_text(json.dumps(yaml.safe_load(kubeconfig.read_text())))
    variants: dict[str, tuple[list[str], dict[str, str]]] = {
        "gryvia list jobs -A (shipped)": ([py, "-m", "gryvia_cli", *LIST], env),
        "  Typer app, no fast path": ([py, "-c", TYPER, *LIST], env),
        "  urllib3, not http.client": ([py, "-c", URLLIB3, *LIST], env),
        "  both (before the cuts)": ([py, "-c", BOTH, *LIST], env),
        "  JSON kubeconfig (no PyYAML)": (
            [py, "-m", "gryvia_cli", *LIST],
            {**env, "KUBECONFIG": str(as_json)},
        ),
        "  python -c pass (interpreter)": ([py, "-c", "pass"], env),
        "kubectl get gaj -A": ([*kube, "get", "gaj", "-A"], env),
    }
    samples: dict[str, list[tuple[float, float]]] = {label: [] for label in variants}
    for argv, vars_ in variants.values():
        _time_pipe(argv, vars_)  # warm-up
    for _ in range(RUNS + 4):
        for label, (argv, vars_) in variants.items():
            samples[label].append(_time_pipe(argv, vars_))
    wall = {k: statistics.median(s[0] for s in v) for k, v in samples.items()}
    cpu = {k: statistics.median(s[1] for s in v) for k, v in samples.items()}
    shipped = "gryvia list jobs -A (shipped)"
    kubectl = wall["kubectl get gaj -A"]
    lines = [f"start-up cuts at 200 jobs (median of {RUNS + 4} interleaved runs):"]
    for label in variants:
        saving = ""
        if label.startswith("  ") and "interpreter" not in label and "JSON" not in label:
            saving = (
                f"  cut saves {(wall[label] - wall[shipped]) * 1000:+.0f} ms wall, "
                f"{(cpu[label] - cpu[shipped]) * 1000:+.0f} ms CPU"
            )
        elif "JSON" in label:
            saving = (
                f"  PyYAML costs {(wall[shipped] - wall[label]) * 1000:+.0f} ms wall, "
                f"{(cpu[shipped] - cpu[label]) * 1000:+.0f} ms CPU (kept: YAML kubeconfig)"
            )
        lines.append(
            f"  {label:<34} {wall[label] * 1000:5.0f}/{cpu[label] * 1000:4.0f} ms wall/cpu  "
            f"{wall[label] / kubectl:4.2f}x kubectl{saving}"
        )
    return lines


def first_rows(argv: Sequence[str], env: dict[str, str], runs: int = 3) -> tuple[float, float]:
    """Median seconds until the first table row (the second line) is read, and until the
    command ends, over `runs` runs with stdout on a pipe."""
    firsts, totals = [], []
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout is not None
        proc.stdout.readline()
        proc.stdout.readline()
        firsts.append(time.perf_counter() - started)
        for _line in proc.stdout:
            pass
        proc.wait()
        totals.append(time.perf_counter() - started)
    return statistics.median(firsts), statistics.median(totals)


def streaming(gryvia: Sequence[str], kube: Sequence[str], env: dict[str, str]) -> list[str]:
    """Lines: when each tool prints its first row of `list jobs -A` / `get gaj -A`."""
    mine = first_rows([*gryvia, *LIST], env)
    theirs = first_rows([*kube, "get", "gaj", "-A"], env)
    return [
        f"  first row / whole table: gryvia {mine[0] * 1000:.0f}/{mine[1] * 1000:.0f} ms, "
        f"kubectl {theirs[0] * 1000:.0f}/{theirs[1] * 1000:.0f} ms"
    ]
