"""The demo with Kueue (`gryvia demo up|check --kueue`, docs/kueue.md): whether it runs, waiting
for the tenants' queues, its extra checks and the ClusterQueues' state for `demo check`.

The sandbox runs Kueue's controller manager (`cluster.up(..., with_kueue=True)`) and the
operator `--enable-kueue`, so the jobs of the `tenant-*` namespaces are admitted by Kueue
through the operator's ClusterQueues `gryvia-<tenant>` (cohort `gryvia`); the `research` jobs
keep Gryvia's own gate. Reads go through kubectl, as the rest of the demo's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from gryvia_cli.errors import GryviaError
from gryvia_cli.sandbox import cluster, kueue
from gryvia_cli.sandbox.bootstrap import run_kubectl as kubectl
from gryvia_operator.api.attribution import tenant_namespace
from gryvia_operator.api.names import LABEL_JOB

TENANTS = ("nlp", "vision")
COHORT = "gryvia"
HELD_JOB = (tenant_namespace("vision"), "resnet-sweep-b")
"""The job Kueue must hold over quota (examples/demo/10-tenants.yaml says why it cannot borrow)."""
ADMITTED_JOB = (tenant_namespace("nlp"), "llama-ddp")
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
"""The label Kueue puts on a Workload: the UID of the batch Job it admits."""
HOW = "for the demo with Kueue build it ('make kueue-bin') and run as root"


def running(box: cluster.Sandbox) -> bool:
    """True when sandbox `box` runs Kueue's controller manager (its pid file, alive)."""
    pid = box.pids().get(kueue.KUEUE)
    return pid is not None and cluster.pid_alive(pid)


def choose(requested: bool | None, box: cluster.Sandbox, say: Callable[[str], None]) -> bool:
    """Whether the demo runs with Kueue.

    `requested`: `--kueue` (True), `--no-kueue` (False) or neither (None). A running demo keeps
    its mode when nothing is requested; otherwise the default is on when `kueue.missing()` is
    empty, else off with one line to `say` naming why and how. Raises GryviaError when `--kueue`
    cannot run here, or when the running demo's mode differs from the one requested.
    """
    alive = box.workdir.exists() and all(box.alive().values())
    if alive:
        mode = running(box)
        if requested is not None and requested != mode:
            now = "with" if mode else "without"
            raise GryviaError(
                f"the demo {box.name!r} runs {now} Kueue",
                hint=f"stop it first ('gryvia demo down --name {box.name}') or leave "
                "out --kueue/--no-kueue",
            )
        return mode
    why = kueue.missing()
    if requested is True and why:
        raise GryviaError(f"--kueue: {why}", hint=HOW)
    if requested is None and why:
        say(f"Kueue off: {why}; {HOW}")
        return False
    return bool(requested is not False)


def _json(box: cluster.Sandbox, *args: str) -> dict[str, Any]:
    proc = kubectl(box, "get", *args, "-o", "json", check=False)
    return json.loads(proc.stdout) if proc.returncode == 0 and proc.stdout else {}


def wait_for_queues(box: cluster.Sandbox, timeout: float = 90.0) -> None:
    """Wait until every demo tenant's LocalQueue `gryvia` exists (the operator applies it with
    the ClusterQueue): a job created before it would go through Gryvia's own gate instead.
    Raises GryviaError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    missing = list(TENANTS)
    while missing:
        missing = [
            t
            for t in TENANTS
            if kubectl(
                box, "get", "localqueue", "-n", tenant_namespace(t), "gryvia", check=False
            ).returncode
            != 0
        ]
        if not missing:
            return
        if time.monotonic() > deadline:
            raise GryviaError(
                f"the operator made no Kueue LocalQueue for {', '.join(missing)} in {timeout:.0f}s",
                hint=f"see {box.workdir / 'logs'}",
            )
        time.sleep(1)


def _gpus(quantity: object) -> int:
    try:
        return int(str(quantity))
    except ValueError:
        return 0


def queue_rows(box: cluster.Sandbox) -> list[list[str]]:
    """The sandbox's ClusterQueues as rows (see `rows_of`)."""
    return rows_of(_json(box, "clusterqueues").get("items", []))


def rows_of(cluster_queues: list[dict[str, Any]]) -> list[list[str]]:
    """ClusterQueue objects (kueue.x-k8s.io/v1beta2) as rows, by name: name, cohort, admitted
    and pending workloads, and per flavor with GPUs (nominal or reserved) the GPUs reserved
    over the nominal quota (`gryvia-a100-80g 8/8`, from `status.flavorsReservation`)."""
    rows = []
    for item in sorted(cluster_queues, key=lambda c: c["metadata"]["name"]):
        spec, status = item.get("spec") or {}, item.get("status") or {}
        nominal = {
            f["name"]: _gpus(r.get("nominalQuota", 0))
            for group in spec.get("resourceGroups") or []
            for f in group.get("flavors") or []
            for r in f.get("resources") or []
            if r.get("name") == "nvidia.com/gpu"
        }
        used = {
            f["name"]: _gpus(r.get("total", 0))
            for f in status.get("flavorsReservation") or []
            for r in f.get("resources") or []
            if r.get("name") == "nvidia.com/gpu"
        }
        gpus = ", ".join(
            f"{name} {used.get(name, 0)}/{n}"
            for name, n in nominal.items()
            if n or used.get(name, 0)
        )
        rows.append(
            [
                item["metadata"]["name"],
                spec.get("cohortName", "-"),
                str(status.get("admittedWorkloads", 0)),
                str(status.get("pendingWorkloads", 0)),
                gpus or "-",
            ]
        )
    return rows


def _workload(box: cluster.Sandbox, namespace: str, job: str) -> dict[str, Any]:
    """The Workload of GryviaAIJob `namespace/job` (through its batch Job's UID), or {}."""
    batches = _json(box, "jobs", "-n", namespace, "-l", f"{LABEL_JOB}={job}").get("items", [])
    if not batches:
        return {}
    uid = batches[0]["metadata"]["uid"]
    found = _json(box, "workloads", "-n", namespace, "-l", f"{JOB_UID_LABEL}={uid}")
    return max(
        found.get("items", []),
        key=lambda w: w["metadata"].get("creationTimestamp", ""),
        default={},
    )


def _condition(workload: dict[str, Any], kind: str) -> dict[str, Any]:
    for cond in (workload.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return {}


def checks(box: cluster.Sandbox, check: Callable[[str, str, str, bool], Any]) -> list[Any]:
    """The demo's Kueue checks, made with `check(what, expected, observed, ok)`: the tenants'
    ClusterQueues in cohort gryvia, the DDP job admitted by Kueue, and the over-quota job's
    Workload pending on quota (not admitted by borrowing)."""
    queues = {
        c["metadata"]["name"]: (c.get("spec") or {}).get("cohortName", "")
        for c in _json(box, "clusterqueues").get("items", [])
    }
    want = [f"gryvia-{t}" for t in TENANTS]
    out = [
        check(
            "Kueue ClusterQueues",
            f"{', '.join(want)} in cohort {COHORT}",
            ", ".join(f"{n} ({c or '-'})" for n, c in sorted(queues.items())) or "-",
            all(queues.get(n) == COHORT for n in want),
        )
    ]
    ns, name = ADMITTED_JOB
    admitted = _condition(_workload(box, ns, name), "Admitted")
    out.append(
        check(
            f"Kueue admits {ns}/{name}",
            "Workload Admitted",
            str(admitted.get("message") or admitted.get("reason") or "no Workload yet")[:90],
            admitted.get("status") == "True",
        )
    )
    ns, name = HELD_JOB
    workload = _workload(box, ns, name)
    reserved = _condition(workload, "QuotaReserved")
    message = str(reserved.get("message", ""))
    pending = bool(workload) and reserved.get("status") != "True"
    start = max(message.lower().find("insufficient"), 0)  # the quota part of Kueue's reason
    out.append(
        check(
            f"Kueue holds {ns}/{name}",
            "Workload pending (quota)",
            (message[start:] or ("admitted" if workload else "no Workload yet"))[:90],
            pending and "quota" in message.lower(),
        )
    )
    return out
