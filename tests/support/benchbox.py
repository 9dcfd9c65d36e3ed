"""A fresh sandbox with the CRDs and the operator, for the benchmarks that measure the operator
(`bench_tenancy`, `bench_budget`, `bench_pending`): set up, yielded, torn down."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def kubectl_run(kubectl: list[str], *args: str, body: Any = None) -> str:
    """stdout of `kubectl ARGS` (body as JSON on stdin); RuntimeError with its stderr."""
    done = subprocess.run(
        [*kubectl, *args],
        input=None if body is None else json.dumps(body),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


@dataclass
class BenchBox:
    """The running sandbox: its kubeconfig, a kubectl command line, the operator's process and
    metrics port, and the scratch folder (the operator log is `workdir/operator.log`)."""

    kubeconfig: Path
    kubectl: list[str]
    operator: subprocess.Popen[bytes]
    metrics_port: int
    workdir: Path
    name: str = ""
    """The sandbox's name (`gryvia_cli.sandbox.cluster.Sandbox(name)` while the box runs)."""


@contextmanager
def operator_sandbox(
    label: str,
    nodes: str,
    namespaces: Iterable[str],
    *,
    with_kueue: bool = False,
    flags: tuple[str, ...] = (),
) -> Iterator[BenchBox]:
    """A sandbox `<label><pid>` of `nodes` under a temporary GRYVIA_SANDBOX_HOME, with the CRDs
    established, `namespaces` created and the operator started (`with_kueue`: the sandbox
    runs Kueue, `sandbox up --kueue`, and the operator has `--enable-kueue`; `flags`: more
    operator flags). On an error the
    operator log's tail goes to stderr; the operator is killed and the sandbox removed in
    every case."""
    from gryvia_cli.sandbox import binaries, cluster
    from gryvia_operator.api.crd import generate as crdgen
    from tests.bench_operator import start_operator

    with tempfile.TemporaryDirectory(prefix=f"gryvia-bench-{label}-") as tmp:
        workdir = Path(tmp)
        old_home = os.environ.get("GRYVIA_SANDBOX_HOME")
        os.environ["GRYVIA_SANDBOX_HOME"] = str(workdir / "home")
        name = f"{label}{os.getpid() % 10000}"
        proc: subprocess.Popen[bytes] | None = None
        bench: BenchBox | None = None
        try:
            print(f"starting sandbox {name} ({nodes}) ...", file=sys.stderr)
            box = cluster.up(name, nodes, with_kueue=with_kueue)
            kubectl = [str(binaries.path_of("kubectl")), "--kubeconfig", str(box.kubeconfig)]
            crds = {"apiVersion": "v1", "kind": "List", "items": list(crdgen.build_crds())}
            kubectl_run(kubectl, "apply", "--server-side", "-f", "-", body=crds)
            kubectl_run(
                kubectl, "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"
            )
            for ns in namespaces:
                kubectl_run(kubectl, "create", "namespace", ns)
            extra = (("--enable-kueue",) if with_kueue else ()) + flags
            proc, metrics_port, _ = start_operator(box.kubeconfig, workdir, extra)
            bench = BenchBox(box.kubeconfig, kubectl, proc, metrics_port, workdir, name)
            yield bench
            proc = bench.operator  # a bench that restarted the operator: the one running now
        except BaseException:
            log = workdir / "operator.log"
            if log.exists():
                tail = log.read_text(errors="replace").splitlines()[-30:]
                print("operator log (tail):", *tail, sep="\n  ", file=sys.stderr)
            raise
        finally:
            if bench is not None and bench.operator is not proc:
                bench.operator.kill()  # restarted, then the bench failed
                bench.operator.wait()
            if proc is not None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
            cluster.down(name)
            if old_home is None:
                os.environ.pop("GRYVIA_SANDBOX_HOME", None)
            else:
                os.environ["GRYVIA_SANDBOX_HOME"] = old_home
