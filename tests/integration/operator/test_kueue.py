"""The Kueue integration against a sandbox started with `--kueue` (real Kueue v0.17 controller
manager and webhooks) and the operator with `--enable-kueue`: a quota per GPU type, gang
admission (a 4-node job starts all its pods together or none), borrowing within the cohort with
preemption when the lender reclaims its quota, and priority order in a tenant's queue. The
tests share one sandbox and run in file order (each leaves the queues empty or says what it
leaves). Its own sandbox: Kueue's Job
webhook (failurePolicy Fail) must not sit in front of every other test's Jobs."""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import get_job, kubectl_json, wait_phase
from tests.support.chartaccount import install_account
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess, apply_crds
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
TENANT = "vision"
NS = f"tenant-{TENANT}"
LENDER = "nlp"
LENDER_NS = f"tenant-{LENDER}"


@pytest.fixture(scope="module")
def kueue_box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxHandle]:
    """A sandbox with Kueue (4 H100 and 2 A100-80G nodes of 8 GPUs), Gryvia's CRDs, the operator
    with the Kueue integration, tenant `vision` with H100: 16 and A100-80G: 8 and tenant `nlp`
    with H100: 16 and A100-80G: 0 (32 H100 GPUs of quota in cohort gryvia, as many as the
    nodes have; nlp lends no A100 quota)."""
    from gryvia_cli.sandbox import binaries, cluster

    home = tmp_path_factory.mktemp("kueue-sandbox-home")
    previous = os.environ.get("GRYVIA_SANDBOX_HOME")
    os.environ["GRYVIA_SANDBOX_HOME"] = str(home)
    name = f"k{os.getpid()}-{uuid.uuid4().hex[:4]}"
    proc: OperatorProcess | None = None
    try:
        box = cluster.up(name, "4xH100:8,2xA100-80G:8", with_kueue=True)
        handle = SandboxHandle(name, box.kubeconfig, binaries.path_of("kubectl"), box.audit_log)
        apply_crds(handle.kubectl, handle.kubeconfig)
        folder = tmp_path_factory.mktemp("kueue-operator")
        # As in the main session: the operator runs as the chart's ServiceAccount.
        account = install_account(
            binaries.path_of("helm"), handle.kubectl, handle.kubeconfig, folder / "account.yaml"
        )
        proc = OperatorProcess(account, folder / "operator.log", extra=("--enable-kueue",))
        proc.start()
        handle.apply(
            _quota(TENANT, 32, {"H100": 16, "A100-80G": 8}),
            _tenant(TENANT),
            _quota(LENDER, 16, {"H100": 16, "A100-80G": 0}),
            _tenant(LENDER),
        )
        for ns in (NS, LENDER_NS):
            wait_for(
                lambda ns=ns: (
                    handle.kubectl_run(
                        "get", "localqueue", "-n", ns, "gryvia", check=False
                    ).returncode
                    == 0
                ),
                timeout=60,
                what=f"the LocalQueue of {ns}",
            )
        yield handle
    finally:
        if proc is not None:
            proc.stop()
        cluster.down(name)
        if previous is None:
            os.environ.pop("GRYVIA_SANDBOX_HOME", None)
        else:
            os.environ["GRYVIA_SANDBOX_HOME"] = previous


def _quota(team: str, max_gpus: int, per_type: dict[str, int]) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaQuota",
        "metadata": {"name": team},
        "spec": {
            "team": team,
            "namespaces": [f"tenant-{team}"],
            "gpuQuota": {"maxGPUs": max_gpus, "perType": per_type},
        },
    }


def _tenant(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaTenant",
        "metadata": {"name": name},
        "spec": {"deletionPolicy": "Delete"},
    }


def _job(
    name: str,
    gpu_type: str,
    nodes: int,
    script: str = "sleep 600",
    *,
    priority: int = 50,
    namespace: str = NS,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"workloadKind": "job", "priority": priority}
    if nodes > 1:
        spec["distributed"] = {"enabled": True, "nodes": nodes, "backend": "nccl"}
    return sh_job(name, gpus=8, gpu_type=gpu_type, script=script, namespace=namespace, **spec)


def _cond(job: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in job.get("status", {}).get("conditions") or [] if c["type"] == kind), {})


def _pods(box: SandboxHandle, job: str, namespace: str = NS) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubectl_json(
        box, "get", "pods", "-n", namespace, "-l", f"gryvia.io/job={job}"
    )["items"]
    return items


def _delete(box: SandboxHandle, *names: str, namespace: str = NS) -> None:
    for name in names:
        box.kubectl_run("delete", "gryviaaijob", "-n", namespace, name, "--wait=true")


def _cli_env(box: SandboxHandle) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env.update(KUBECONFIG=str(box.kubeconfig), NO_COLOR="1")
    return env


def _h100_usage(box: SandboxHandle, tenant: str) -> dict[str, int]:
    """The gryvia-h100 GPU usage of the tenant's ClusterQueue status: total and borrowed."""
    cq = kubectl_json(box, "get", "clusterqueue", f"gryvia-{tenant}")
    for flavor in cq.get("status", {}).get("flavorsUsage") or []:
        if flavor["name"] == "gryvia-h100":
            for res in flavor["resources"]:
                if res["name"] == "nvidia.com/gpu":
                    return {"total": int(res["total"]), "borrowed": int(res.get("borrowed", 0))}
    return {"total": 0, "borrowed": 0}


def test_cluster_queue_has_a_flavor_per_gpu_type(kueue_box: SandboxHandle) -> None:
    cq = kubectl_json(kueue_box, "get", "clusterqueue", f"gryvia-{TENANT}")
    flavors = cq["spec"]["resourceGroups"][0]["flavors"]
    nominal = {f["name"]: str(f["resources"][0]["nominalQuota"]) for f in flavors}
    assert nominal == {"gryvia-a100-80g": "8", "gryvia-h100": "16", "gryvia-default": "0"}
    assert cq["spec"]["cohortName"] == "gryvia"


def test_per_type_quota_holds_the_a100_job_while_an_h100_job_runs(
    kueue_box: SandboxHandle,
) -> None:
    kueue_box.apply(_job("a100-16", "A100-80G", 2), _job("h100-16", "H100", 2))
    running = wait_phase(kueue_box, NS, "h100-16", "Running", timeout=120)
    assert "gryvia-h100" in _cond(running, "KueueAdmitted")["message"]

    def held() -> dict[str, Any] | None:
        job = get_job(kueue_box, NS, "a100-16")
        message = job.get("status", {}).get("message", "")
        return job if "gryvia-a100-80g" in message else None

    job = wait_for(held, timeout=60, what="a100-16 held by Kueue naming its flavor")
    assert job["status"]["phase"] == "Queued"
    assert job["status"]["message"].startswith("Queued by Kueue: ")
    assert "8" in job["status"]["message"]  # the flavor's limit
    assert _cond(job, "KueueAdmitted")["status"] == "False"
    assert job["status"]["pending"]["kind"] == "Kueue"
    assert _pods(kueue_box, "a100-16") == []
    for name in ("a100-16", "h100-16"):
        kueue_box.kubectl_run("delete", "gryviaaijob", "-n", NS, name, "--wait=true")


def test_a_job_naming_the_family_runs_on_a_variant_of_it(kueue_box: SandboxHandle) -> None:
    # issue 39: `gpuType: a100` is admitted to the A100-80G flavor (no other: the flavors
    # carry gryvia.io/gpu-family) and its pod lands on an A100-80G node
    kueue_box.apply(_job("family", "a100", 1, "sleep 600"))
    running = wait_phase(kueue_box, NS, "family", "Running", timeout=120)
    assert "gryvia-a100-80g" in _cond(running, "KueueAdmitted")["message"]
    (pod,) = _pods(kueue_box, "family")
    node = kubectl_json(kueue_box, "get", "node", pod["spec"]["nodeName"])
    labels = node["metadata"]["labels"]
    assert (labels["gryvia.io/gpu"], labels["gryvia.io/gpu-family"]) == ("A100-80G", "A100")
    assert pod["spec"]["nodeSelector"]["gryvia.io/gpu-family"] == "A100"
    _delete(kueue_box, "family")


def test_gang_admission_starts_all_pods_together(kueue_box: SandboxHandle) -> None:
    kueue_box.apply(_job("holder", "H100", 1))
    wait_phase(kueue_box, NS, "holder", "Running", timeout=120)
    kueue_box.apply(_job("gang", "H100", 4))
    wait_for(
        lambda: (
            get_job(kueue_box, NS, "gang")
            .get("status", {})
            .get("message", "")
            .startswith("Queued by Kueue")
        ),
        timeout=60,
        what="gang queued by Kueue",
    )
    # 3 H100 nodes are free, yet no pod runs (the gang needs vision's 16 and nlp's 16)
    assert _pods(kueue_box, "gang") == []
    kueue_box.kubectl_run("delete", "gryviaaijob", "-n", NS, "holder", "--wait=true")

    def all_running() -> list[dict[str, Any]] | None:
        pods = _pods(kueue_box, "gang")
        started = [p for p in pods if p.get("status", {}).get("phase") == "Running"]
        return started if len(started) == 4 else None

    pods = wait_for(all_running, timeout=120, what="all 4 gang pods Running")
    starts = [dt.datetime.fromisoformat(p["status"]["startTime"]) for p in pods]
    assert (max(starts) - min(starts)).total_seconds() <= 10
    wait_phase(kueue_box, NS, "gang", "Running", timeout=60)
    _delete(kueue_box, "gang")


def test_borrowed_quota_is_reclaimed_by_preemption(kueue_box: SandboxHandle) -> None:
    # nlp idle: vision runs 24 H100 GPUs on a nominal 16, borrowing 8 of nlp's
    kueue_box.apply(_job("borrower", "H100", 3))
    running = wait_phase(kueue_box, NS, "borrower", "Running", timeout=120)
    # the ClusterQueue's status follows the admission shortly after
    wait_for(
        lambda: _h100_usage(kueue_box, TENANT) == {"total": 24, "borrowed": 8},
        timeout=30,
        what="gryvia-vision's status: 24 H100 GPUs used, 8 borrowed",
    )
    assert running["status"]["kueue"] == {
        "queueName": "gryvia",
        "clusterQueue": f"gryvia-{TENANT}",
        "flavor": "gryvia-h100",
        "borrowedGPUs": 8,
    }
    # gryvia quota's fair-share view: vision borrows 8, nlp lends them
    shown = run_gryvia("quota", "--fair-share", "-o", "json", env=_cli_env(kueue_box))
    assert shown.returncode == 0, shown.stderr
    rows = {(i["team"], i["gpuType"]): i for i in json.loads(shown.stdout)["items"]}
    vision, nlp = rows[(TENANT, "H100")], rows[(LENDER, "H100")]
    assert (vision["nominal"], vision["used"], vision["borrowed"]) == (16, 24, 8)
    assert (nlp["nominal"], nlp["used"], nlp["lent"]) == (16, 0, 8)
    # nlp wants its 16 back: only 8 are free, so Kueue preempts the borrower
    kueue_box.apply(_job("claim", "H100", 2, priority=90, namespace=LENDER_NS))
    wait_phase(kueue_box, LENDER_NS, "claim", "Running", timeout=120)

    def preempted() -> dict[str, Any] | None:
        job = get_job(kueue_box, NS, "borrower")
        return job if _cond(job, "Preempted").get("status") == "True" else None

    job = wait_for(preempted, timeout=60, what="borrower Preempted")
    cond = _cond(job, "Preempted")
    assert cond["reason"] == "InCohortReclamation"
    # who: the GryviaAIJob and ClusterQueue that reclaimed; why: Kueue's reason
    assert f"{LENDER_NS}/claim" in cond["message"]
    assert "gryvia-nlp" in cond["message"]
    assert "reclamation within the cohort" in cond["message"]
    assert job["status"]["phase"] == "Queued"
    assert job["status"]["message"].startswith("Preempted by Kueue")
    assert int(job["status"].get("preemptions", 0)) == 1
    # requeued: vision cannot borrow while nlp uses its quota, so the borrower stays off
    wait_for(
        lambda: _pods(kueue_box, "borrower") == [],
        timeout=60,
        what="the borrower's pods gone",
    )
    wait_for(
        lambda: _h100_usage(kueue_box, TENANT)["borrowed"] == 0,
        timeout=30,
        what="gryvia-vision borrowing nothing",
    )
    _delete(kueue_box, "borrower")


def test_higher_priority_is_admitted_first(kueue_box: SandboxHandle) -> None:
    # nlp's claim (16 H100, priority 90) still runs; vision's holder takes vision's 16
    kueue_box.apply(_job("holder", "H100", 2, priority=90))
    wait_phase(kueue_box, NS, "holder", "Running", timeout=120)
    kueue_box.apply(_job("low", "H100", 2, priority=20))
    wait_for(
        lambda: get_job(kueue_box, NS, "low").get("status", {}).get("phase") == "Queued",
        timeout=60,
        what="low queued",
    )
    kueue_box.apply(_job("high", "H100", 2, priority=60))
    wait_phase(kueue_box, NS, "high", "Queued", timeout=60)
    # gryvia queue numbers the LocalQueue as Kueue takes it: higher priority first
    shown = run_gryvia("queue", "-n", NS, "-o", "json", env=_cli_env(kueue_box))
    assert shown.returncode == 0, shown.stderr
    places = {i["name"]: i["position"] for i in json.loads(shown.stdout)["items"]}
    assert (places["high"], places["low"]) == (1, 2)
    _delete(kueue_box, "holder")  # room for one of the two
    wait_phase(kueue_box, NS, "high", "Running", timeout=120)
    low = get_job(kueue_box, NS, "low")
    assert low["status"]["phase"] == "Queued"
    assert _pods(kueue_box, "low") == []
    _delete(kueue_box, "high", "low")
    _delete(kueue_box, "claim", namespace=LENDER_NS)
