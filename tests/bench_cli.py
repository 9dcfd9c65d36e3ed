"""CLI wall-time benchmark against a sandbox with 500 GPU nodes and 1000 GryviaAIJobs.

Run: `.venv/bin/python -m tests.bench_cli` (prints a table; about two minutes). It starts its
own sandbox under a temporary GRYVIA_SANDBOX_HOME and removes it afterwards. Numbers are the
median wall time of several runs of each command as a subprocess (interpreter start included),
output read through a pipe like a script would; `list jobs -o json` is also timed on a
pseudo-terminal, where gryvia indents the JSON.

Targets (issue 6): `gryvia --help` <= 150 ms; `gryvia list jobs -o json` <= 1.5 x
`kubectl get gaj -o json`; `gryvia capacity` with 500 nodes <= 1 s.
"""

from __future__ import annotations

import json
import os
import pty
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

NODES = "250xH100:8,250xA100-80G:8"
JOBS = 1000
RUNS = 7


def _job(index: int) -> dict[str, object]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAIJob",
        "metadata": {"name": f"bench-{index:04d}", "namespace": "default"},
        "spec": {
            "type": "training",
            "gpus": 8,
            "gpuType": "H100" if index % 2 else "A100-80G",
            "image": "busybox",
            "command": ["sleep", "1"],
            "suspend": True,
        },
    }


def _time_pipe(argv: Sequence[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {proc.stderr.decode()[-500:]}")
    return elapsed


def _time_tty(argv: Sequence[str], env: dict[str, str]) -> float:
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
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, stdout=slave, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    os.close(slave)
    reader.join(timeout=5)
    os.close(master)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {proc.stderr.decode()[-500:]}")
    return elapsed


def median(argv: Sequence[str], env: dict[str, str], runs: int = RUNS, tty: bool = False) -> float:
    """Median seconds of `runs` runs after one warm-up run."""
    timer = _time_tty if tty else _time_pipe
    timer(argv, env)
    return statistics.median(timer(argv, env) for _ in range(runs))


def prepare(kubectl: Path, kubeconfig: Path) -> None:
    """Install the CRDs and create the jobs with one `kubectl create` of a List."""
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

    kc(
        "apply",
        "-f",
        "-",
        stdin=json.dumps({"kind": "List", "apiVersion": "v1", "items": crdgen.build_crds()}),
    )
    kc("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
    items = [_job(i) for i in range(JOBS)]
    kc("create", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def main() -> None:
    """Start the sandbox, time the commands, print the table, remove the sandbox."""
    home = Path(tempfile.mkdtemp(prefix="gryvia-bench-cli-"))
    os.environ["GRYVIA_SANDBOX_HOME"] = str(home / "sandbox")
    from gryvia_cli.sandbox import binaries, cluster

    name = f"bench-{uuid.uuid4().hex[:6]}"
    print(f"starting sandbox {name} with {NODES} ...", file=sys.stderr)
    started = time.monotonic()
    box = cluster.up(name, NODES, progress=lambda m: print(f"  {m}", file=sys.stderr))
    print(f"  up in {time.monotonic() - started:.0f}s; creating {JOBS} jobs", file=sys.stderr)
    try:
        kubectl = binaries.path_of("kubectl")
        prepare(kubectl, box.kubeconfig)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
        env.update(
            KUBECONFIG=str(box.kubeconfig),
            GRYVIA_CONFIG_HOME=str(home / "config"),
            NO_COLOR="1",
        )
        gryvia = [sys.executable, "-m", "gryvia_cli"]
        kube = [str(kubectl), "--kubeconfig", str(box.kubeconfig)]
        results = {
            "help": median([*gryvia, "--help"], env),
            "list": median([*gryvia, "list", "jobs", "-o", "json", "-n", "default"], env),
            "list_tty": median(
                [*gryvia, "list", "jobs", "-o", "json", "-n", "default"], env, tty=True
            ),
            "kubectl": median([*kube, "get", "gaj", "-o", "json", "-n", "default"], env),
            "kubectl_tty": median(
                [*kube, "get", "gaj", "-o", "json", "-n", "default"], env, tty=True
            ),
            "capacity": median([*gryvia, "capacity"], env, runs=5),
            "capacity_json": median([*gryvia, "capacity", "-o", "json"], env, runs=5),
        }
        report(results)
    finally:
        cluster.down(name)


def report(r: dict[str, float]) -> None:
    """Print the numbers against their targets."""
    ratio = r["list"] / r["kubectl"]
    ratio_tty = r["list_tty"] / r["kubectl_tty"]
    rows = [
        ("gryvia --help", f"{r['help'] * 1000:.0f} ms", "<= 150 ms", r["help"] <= 0.150),
        ("gryvia list jobs -o json (1000 jobs, piped)", f"{r['list'] * 1000:.0f} ms", "", None),
        ("kubectl get gaj -o json (piped)", f"{r['kubectl'] * 1000:.0f} ms", "", None),
        ("  ratio gryvia / kubectl (piped)", f"{ratio:.2f}", "<= 1.5", ratio <= 1.5),
        (
            "gryvia list jobs -o json (terminal, indented)",
            f"{r['list_tty'] * 1000:.0f} ms",
            "",
            None,
        ),
        ("kubectl get gaj -o json (terminal)", f"{r['kubectl_tty'] * 1000:.0f} ms", "", None),
        ("  ratio gryvia / kubectl (terminal)", f"{ratio_tty:.2f}", "<= 1.5", ratio_tty <= 1.5),
        (
            "gryvia capacity (500 nodes, 1000 jobs)",
            f"{r['capacity'] * 1000:.0f} ms",
            "<= 1000 ms",
            r["capacity"] <= 1.0,
        ),
        ("gryvia capacity -o json", f"{r['capacity_json'] * 1000:.0f} ms", "", None),
    ]
    width = max(len(row[0]) for row in rows)
    print(f"{'measure'.ljust(width)}  {'median':>9}  {'target':>10}  result")
    for label, value, target, ok in rows:
        verdict = "" if ok is None else ("ok" if ok else "MISSED")
        print(f"{label.ljust(width)}  {value:>9}  {target:>10}  {verdict}")
    print(f"(median of {RUNS} runs, 5 for capacity; load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
