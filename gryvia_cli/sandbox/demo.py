"""The demo: a sandbox with the chart, the operator, seeded tenants and jobs in every state.

`gryvia demo up` brings it up (idempotently), adds its context `gryvia-<name>` to the user's
kubeconfig (as `gryvia sandbox up` does) and opens the console; `gryvia demo check` does the
same without the console or the kubeconfig change, prints what it set up and checks each
state, for CI. Both print how another shell reaches the demo (`reach_lines`). The operator
runs as a local process of the sandbox (its pid and log sit beside kwokctl's), so
`gryvia sandbox down` stops it with everything else. With Kueue (`demokueue`) the sandbox also
runs Kueue and the operator has `--enable-kueue`: the tenants' jobs are admitted by Kueue.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gryvia_cli.errors import GryviaError
from gryvia_cli.sandbox import binaries, cluster, demokinds, demokueue, platform, storage
from gryvia_cli.sandbox.bootstrap import run_kubectl as kubectl
from gryvia_cli.sandbox.kubeconfig import export_line
from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.names import LABEL_JOB

DEMO_NAME = "demo"
NAMESPACES = (tenant_namespace("vision"), tenant_namespace("nlp"), "research")
Progress = Callable[[str], None]


@dataclass(frozen=True)
class Check:
    """One expected state of the demo: what, where, and whether it holds."""

    what: str
    expected: str
    observed: str
    ok: bool


def examples_dir() -> Path:
    """The folder with the demo's manifests and sbatch script (`examples/demo/`)."""
    root = binaries.repo_root()
    if root is None:
        raise GryviaError("the demo needs a source checkout (examples/demo/ not found)")
    return root / "examples" / "demo"


def _documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def seed(box: cluster.Sandbox, progress: Progress, *, kueue: bool = False) -> None:
    """Apply the catalog, tenants, quotas, jobs, policies and an object of every other kind
    (`demokinds`), then import the sbatch script. With `kueue`, the jobs wait for the tenants'
    Kueue queues (raises GryviaError after 90 s)."""
    folder = examples_dir()
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in NAMESPACES
    ]
    kubectl(
        box,
        "apply",
        "-f",
        "-",
        stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": namespaces}),
    )
    kinds = demokinds.MANIFEST  # before the jobs: the inference server is the slowest to be ready
    for name in ("00-catalog.yaml", "10-tenants.yaml", kinds, "20-jobs.yaml", "30-policies.yaml"):
        if name == "20-jobs.yaml" and kueue:
            progress("waiting for the tenants' Kueue queues")
            demokueue.wait_for_queues(box)
        docs = _documents(folder / name)
        if name == demokinds.MANIFEST:  # the hook's receiver and the workspace's volume
            docs = demokinds.prepared(box, docs)
        progress(f"applying {name} ({len(docs)} objects)")
        if name != "20-jobs.yaml":  # one kubectl call, in the file's order
            kubectl(
                box,
                "apply",
                "-f",
                "-",
                stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}),
            )
            continue
        for doc in docs:  # one by one: jobs are admitted in this order
            kubectl(box, "apply", "-f", "-", stdin=json.dumps(doc))
            time.sleep(0.2)
    from gryvia_cli.sbatch import convert_file

    conversion = convert_file(
        folder / "sbatch-ranks.sh",
        image="python:3.11",
        namespace=tenant_namespace("nlp"),
        submission_id="demo",
    )
    if not conversion.ok:
        raise GryviaError("the demo's sbatch script did not convert")
    progress(f"imported sbatch-ranks.sh as {len(conversion.jobs)} job(s)")
    for doc in conversion.documents:  # the runtime ConfigMap first, then the jobs
        kubectl(box, "apply", "-f", "-", stdin=json.dumps(doc))


def _job(box: cluster.Sandbox, namespace: str, name: str) -> dict[str, Any]:
    proc = kubectl(box, "get", "gaj", "-n", namespace, name, "-o", "json", check=False)
    return json.loads(proc.stdout) if proc.returncode == 0 else {}


def clause_with(message: str, word: str, width: int = 80) -> str:
    """`message` shortened to show `word`: from the clause (after ': ' or ', ') that holds it
    when the whole would hide it past `width` characters, e.g. Kueue's long reasons."""
    at = message.lower().find(word.lower())
    if at < 0 or at + len(word) <= width:
        return message
    start = max(message.rfind(": ", 0, at), message.rfind(", ", 0, at)) + 2
    return "..." + message[max(start, 2) :]


def expectations(box: cluster.Sandbox, *, kueue: bool = False) -> list[Check]:
    """Return the demo's checks as they stand now (with `kueue`, Kueue's three as well).

    The job checks hold in both modes: with Kueue the over-quota job is held by Kueue (its
    message is Kueue's, naming the quota) instead of Gryvia's own gate."""

    def phase(ns: str, name: str, want: str, contains: str = "") -> Check:
        status = _job(box, ns, name).get("status") or {}
        got = status.get("phase", "-")
        msg = status.get("message", "")
        ok = got == want and contains.lower() in msg.lower()
        observed = f"{got}: {clause_with(msg, contains)}" if msg and contains else got
        return Check(
            f"job {ns}/{name}", want + (f" ({contains})" if contains else ""), observed[:90], ok
        )

    checks = [
        phase(tenant_namespace("nlp"), "llama-ddp", "Running"),
        phase(tenant_namespace("vision"), "resnet-sweep-a", "Running"),
        phase(tenant_namespace("vision"), "resnet-sweep-b", "Queued", "quota"),
        phase("research", "legacy-v100-eval", "Pending", "V100"),
        phase("research", "mmlu-eval", "Succeeded"),
        phase("research", "lora-finetune", "Failed", "BackoffLimitExceeded"),
        phase(tenant_namespace("nlp"), "slurm-ranks", "Running"),
    ]
    nodes = kubectl(box, "get", "gryviagpunodes", "-o", "name", check=False).stdout.split()
    checks.append(
        Check("GPU nodes registered", "6 GryviaGpuNodes", str(len(nodes)), len(nodes) == 6)
    )
    budgets = json.loads(
        kubectl(box, "get", "gryviabudgets", "-o", "json", check=False).stdout or "{}"
    ).get("items", [])
    states = sorted(
        f"{b['metadata']['name']}={(b.get('status') or {}).get('state', '-')}" for b in budgets
    )
    checks.append(
        Check(
            "budgets reconciled",
            "2 GryviaBudgets with a state",
            ", ".join(states)[:90] or "-",
            len(budgets) == 2 and all("=-" not in s for s in states),
        )
    )
    where = ("-n", tenant_namespace("nlp"), "idle-gpus", "-o", "json")
    found = kubectl(box, "get", "gryviaidlepolicy", *where, check=False).stdout
    policy = json.loads(found or "{}").get("status") or {}
    covered = policy.get("coveredJobs")
    checks.append(
        Check(
            "idle policy reconciled",
            "Active, covering the nlp training jobs",
            f"{policy.get('phase', '-')}, {covered} covered",
            policy.get("phase") == "Active" and (covered or 0) >= 1,
        )
    )
    logs = kubectl(
        box,
        "logs",
        "-n",
        tenant_namespace("nlp"),
        "-l",
        f"{LABEL_JOB}=llama-ddp",
        "--tail",
        "5",
        check=False,
    ).stdout
    checks.append(
        Check(
            "llama-ddp logs",
            "loss lines from both ranks",
            (logs.strip().splitlines() or ["-"])[-1][:90],
            "loss" in logs,
        )
    )
    checks.extend(demokinds.checks(box, Check, "research"))
    if kueue:
        checks.extend(demokueue.checks(box, Check))
    return checks


def up(
    *,
    progress: Progress,
    name: str = DEMO_NAME,
    nodes: str = "2xH100:8,2xA100-80G:8,2xL40:4,1xcpu",
    kueue: bool = False,
) -> cluster.Sandbox:
    """Bring the demo sandbox `name` up (reusing it when it runs) and return it; with `kueue`
    the sandbox runs Kueue and the operator `--enable-kueue` (see `demokueue.choose`).

    Raises GryviaError (SandboxError) when the name is invalid or a part does not start.
    """
    cluster.check_name(name)
    box = cluster.Sandbox(name)
    if not (box.workdir.exists() and all(box.alive().values())):
        cluster.up(name, nodes, progress=progress, with_kueue=kueue)
    if not storage.missing():  # the backend fast-nfs binds with it (make storage-bin)
        storage.start(box, progress)
    platform.install(box, progress, kueue=kueue)
    seed(box, progress, kueue=kueue)
    return box


def wait_for_checks(
    box: cluster.Sandbox, timeout: float = 180.0, *, kueue: bool = False
) -> list[Check]:
    """Poll the checks until all pass or `timeout` seconds pass; return the last result."""
    deadline = time.monotonic() + timeout
    while True:
        checks = expectations(box, kueue=kueue)
        if all(c.ok for c in checks) or time.monotonic() > deadline:
            return checks
        time.sleep(2)


def reach_lines(
    context: str, kubeconfig: Path, merged_into: Path | None, current: bool
) -> list[str]:
    """How another shell reaches the demo, as lines for stderr.

    `kubeconfig` is the demo's own single-context file; `merged_into` the user's kubeconfig
    the context `context` was merged into (None when it was not), `current` whether it is
    that file's current context. The last line is always the exact `export KUBECONFIG=...`.
    """
    lines = []
    if merged_into is not None:
        how = "its current context" if current else f"use --context {context}"
        lines.append(f"context {context} is in {merged_into} ({how}): gryvia queue -A")
        lines.append("or point a shell at the demo alone:")
    else:
        lines.append("point a shell at the demo:")
    lines.append(f"  {export_line(kubeconfig)}")
    return lines


def environment_for(box: cluster.Sandbox) -> dict[str, str]:
    """Environment that points gryvia and kubectl at the demo."""
    return os.environ | {"KUBECONFIG": str(box.kubeconfig)}
