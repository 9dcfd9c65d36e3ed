"""Issue 18 part 3, priorities and preemption, against the sandbox with `--enable-priorities`.

- a GryviaPriority owns the PriorityClass of its name: created with its value, replaced when
  the value changes, re-created when deleted, removed with it; the table's priorities exist;
- a priority-90 job in a full quota preempts the priority-10 job holding it: the low job shows
  phase Preempted (Event), condition Preempted naming the preemptor, `status.preemptions` 1,
  its workload goes, it is requeued with its retry count (an earlier failed pod) and runs
  again once the high job ended, metered as two runs (the first sealed); the pods carry the
  table's PriorityClasses; a priority-90 job takes full nodes through the scheduler's preemption,
  and the job whose pod the scheduler preempted is marked Preempted naming it, counted once;
- `gryvia priority create|list|get|delete` against the API server.
"""

from __future__ import annotations

import base64
import os
import subprocess
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, get_job, kubectl_json, wait_phase
from tests.support.cli import run_gryvia
from tests.support.hookreceiver import ALLOWED, SECRET, Receiver, serve
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


@pytest.fixture(scope="module")
def prio_operator(operator: OperatorProcess) -> Iterator[OperatorProcess]:
    """The session's operator (priorities and job hooks on)."""
    yield operator


@pytest.fixture
def ns(sandbox: SandboxHandle, prio_operator: OperatorProcess) -> Iterator[str]:
    with sandbox.fresh_namespace("prio") as name:
        yield name


def _class(sandbox: SandboxHandle, name: str) -> dict[str, Any] | None:
    found = sandbox.kubectl_run("get", "priorityclass", name, "-o", "json", check=False)
    if found.returncode != 0:
        return None
    obj: dict[str, Any] = kubectl_json(sandbox, "get", "priorityclass", name)
    return obj


def _condition(job: dict[str, Any], kind: str) -> dict[str, Any] | None:
    conditions = (job.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == kind), None)


def test_priority_owns_its_priority_class(sandbox: SandboxHandle, ns: str) -> None:
    for table in ("gryvia-low", "gryvia-normal", "gryvia-high"):
        wait_for(lambda t=table: _class(sandbox, t), what=f"the table's PriorityClass {table}")
    name = f"urgent-{uuid.uuid4().hex[:6]}"
    prio = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaPriority",
        "metadata": {"name": name},
        "spec": {"value": 50000, "description": "deadline work"},
    }
    sandbox.apply(prio)
    try:
        made = wait_for(lambda: _class(sandbox, name), what="the owned PriorityClass")
        assert made["value"] == 50000 and made["description"] == "deadline work"
        owner = made["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("GryviaPriority", name, True)
        ready = wait_for(
            lambda: _condition(kubectl_json(sandbox, "get", "gryviapriority", name), "Ready"),
            what="Ready on the GryviaPriority",
        )
        assert ready["status"] == "True", ready

        sandbox.apply({**prio, "spec": {"value": 60000, "description": "deadline work"}})
        wait_for(
            lambda: (_class(sandbox, name) or {}).get("value") == 60000,
            what="the PriorityClass replaced with the new value",
        )
        sandbox.kubectl_run("delete", "priorityclass", name)
        again = wait_for(lambda: _class(sandbox, name), what="the deleted PriorityClass re-created")
        assert again["value"] == 60000

        job = sh_job("named", gpus=1, gpu_type="L40", script="sleep 60", priorityClassName=name)
        create(sandbox, ns, job)
        wait_phase(sandbox, ns, "named", "Running", timeout=120)
        pods = kubectl_json(sandbox, "get", "pods", "-n", ns, "-l", "gryvia.io/job=named")["items"]
        assert [(p["spec"]["priorityClassName"], p["spec"]["priority"]) for p in pods] == [
            (name, 60000)
        ]
    finally:
        sandbox.kubectl_run("delete", "gryviapriority", name, "--ignore-not-found", check=False)
    wait_for(lambda: _class(sandbox, name) is None, what="the PriorityClass collected with it")


@pytest.fixture
def full_quota(sandbox: SandboxHandle, ns: str) -> Iterator[str]:
    """A GryviaQuota of 2 GPUs on the namespace."""
    name = f"q-{ns}"
    sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaQuota",
            "metadata": {"name": name},
            "spec": {"team": ns, "namespaces": [ns], "gpuQuota": {"maxGPUs": 2}},
        }
    )
    yield name
    sandbox.kubectl_run("delete", "gryviaquota", name, "--wait=false", check=False)


def test_high_priority_job_preempts_low_in_full_quota(
    sandbox: SandboxHandle, ns: str, full_quota: str, tmp_path: Path
) -> None:
    marker = tmp_path / "failed-once"
    # the first pod fails (one retry used), every later pod runs until deleted
    script = f"if [ ! -e {marker} ]; then touch {marker}; exit 1; fi; echo low running; sleep 600"
    low = sh_job("low", gpus=2, gpu_type="L40", script=script, priority=10, retryLimit=3)
    create(sandbox, ns, low)

    def runs_after_retry() -> dict[str, Any] | None:
        job = get_job(sandbox, ns, "low")
        status = job.get("status") or {}
        return job if status.get("phase") == "Running" and status.get("retries") == 1 else None

    wait_for(runs_after_retry, timeout=180, what="low Running after one failed pod")

    high = sh_job("high", gpus=2, gpu_type="L40", script="echo high; sleep 20", priority=90)
    create(sandbox, ns, high)

    def preempted() -> dict[str, Any] | None:
        job = get_job(sandbox, ns, "low")
        cond = _condition(job, "Preempted")
        return job if cond and cond["status"] == "True" else None

    job = wait_for(preempted, timeout=120, what="low preempted")
    cond = _condition(job, "Preempted")
    assert cond is not None and f"preempted by {ns}/high" in cond["message"], cond
    assert job["status"]["preemptions"] == 1

    def preempted_events() -> list[dict[str, Any]]:
        events = kubectl_json(
            sandbox, "get", "events", "-n", ns, "--field-selector", "involvedObject.name=low"
        )["items"]
        return [e for e in events if e["reason"] == "Preempted"]

    # kopf posts events after the status write: wait for it rather than read once
    shown = wait_for(preempted_events, timeout=30, what="a Preempted event on low")
    assert f"{ns}/high" in shown[0]["message"], shown

    wait_phase(sandbox, ns, "high", "Running", timeout=120)
    pods = kubectl_json(sandbox, "get", "pods", "-n", ns, "-l", "gryvia.io/job=high")["items"]
    assert {p["spec"].get("priorityClassName") for p in pods} == {"gryvia-high"}

    def requeued() -> dict[str, Any] | None:
        job = get_job(sandbox, ns, "low")
        return job if job["status"].get("phase") in ("Pending", "Queued") else None

    waiting = wait_for(requeued, timeout=120, what="low requeued while high runs")
    assert waiting["status"]["carriedRetries"] == 1 and waiting["status"]["retries"] == 1

    wait_phase(sandbox, ns, "high", "Succeeded", timeout=180)
    again = wait_phase(sandbox, ns, "low", "Running", timeout=180)
    assert again["status"]["retries"] == 1 and again["status"]["preemptions"] == 1
    batch = kubectl_json(sandbox, "get", "job", "-n", ns, "low")
    assert batch["spec"]["backoffLimit"] == 2  # retryLimit 3 less the carried retry
    pods = kubectl_json(sandbox, "get", "pods", "-n", ns, "-l", "gryvia.io/job=low")["items"]
    assert {p["spec"].get("priorityClassName") for p in pods} == {"gryvia-low"}

    uid = again["metadata"]["uid"]

    def records() -> dict[str, Any] | None:
        items = kubectl_json(sandbox, "get", "gryviausagerecords", "-n", ns)["items"]
        found = {r["metadata"]["name"]: r["spec"] for r in items}
        wanted = (f"usage-{uid}", f"usage-{uid}-1")
        return found if all(n in found for n in wanted) else None

    found = wait_for(records, timeout=120, what="a usage record per run of low")
    first, second = found[f"usage-{uid}"], found[f"usage-{uid}-1"]
    assert first["final"] is True and first["end"] <= second["start"], (first, second)
    assert second["final"] is False


def test_priority_cli_create_list_get_delete(
    sandbox: SandboxHandle, prio_operator: OperatorProcess, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env.update(
        KUBECONFIG=str(sandbox.kubeconfig),
        GRYVIA_CONFIG_HOME=str(tmp_path / "cfg"),
        NO_COLOR="1",
        COLUMNS="200",
    )
    name = f"cli-{uuid.uuid4().hex[:6]}"

    def gryvia(*args: str) -> subprocess.CompletedProcess[str]:
        return run_gryvia(*args, env=env)

    made = gryvia("priority", "create", name, "--value", "42000", "--description", "from cli")
    assert made.returncode == 0, made.stderr
    assert f"gryviapriority.gryvia.io/{name}" in made.stdout
    wait_for(lambda: (_class(sandbox, name) or {}).get("value") == 42000, what="its class")

    def listed() -> str | None:
        out = gryvia("priority", "list", "-o", "wide").stdout
        row = next((line for line in out.splitlines() if line.startswith(name + " ")), "")
        return out if "yes" in row.split() else None

    table = wait_for(listed, what="the priority listed Ready")
    lines = table.splitlines()
    assert lines[0].split()[:4] == ["NAME", "VALUE", "PREEMPTION", "READY"]
    names = [line.split()[0] for line in lines[1:] if line and not line.startswith("Total")]
    assert names.index(name) < names.index("gryvia-high")  # 42000 > 10000: listed first
    row = next(line for line in lines if line.startswith(name + " ")).split()
    assert row[1:5] == ["42000", "PreemptLowerPriority", "yes", "-"]
    high = next(line for line in lines if line.startswith("gryvia-high ")).split()
    assert high[4] == "70-100"

    shown = gryvia("priority", "get", name)
    assert shown.returncode == 0 and "PriorityClass:" in shown.stdout, shown.stderr
    assert "from cli" in shown.stdout
    bad = gryvia("priority", "create", "system-x", "--value", "1")
    assert bad.returncode == 2 and '"system-" is reserved' in bad.stderr
    gone = gryvia("priority", "delete", name, "--yes")
    assert gone.returncode == 0, gone.stderr
    missing = gryvia("priority", "get", name)
    assert missing.returncode != 0 and "gryvia priority list" in missing.stderr
    wait_for(lambda: _class(sandbox, name) is None, what="its class collected")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    box = Receiver()
    server = serve(box, ALLOWED)
    yield box
    server.shutdown()
    server.server_close()


def test_high_priority_job_takes_full_nodes_through_scheduler_preemption(
    sandbox: SandboxHandle, ns: str, receiver: Receiver
) -> None:
    """No quota: both H100 nodes full of priority-10 jobs; a priority-90 job is placed anyway
    and the kube-scheduler preempts one low pod for it (its Job replaces the pod, which waits:
    a disruption, not a retry). The victim's job gets condition Preempted naming `urgent`,
    `status.preemptions` 1 and a Preempted Event; its retry count is unchanged; a job hook
    receives one Preempted delivery for it and no second Running (the run goes on)."""
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "hook-key"},
        "data": {"secret": base64.b64encode(SECRET).decode()},
    }
    create(sandbox, ns, secret)
    hook = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaJobHook",
        "metadata": {"name": "fills"},
        "spec": {
            "events": ["Running", "Preempted"],
            "selector": {"matchLabels": {"fill": "yes"}},
            "webhook": {"url": receiver.url, "secretRef": {"name": "hook-key"}},
            "retry": {"attempts": 5, "backoffSeconds": 1},
        },
    }
    create(sandbox, ns, hook)
    wait_for(
        lambda: any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in kubectl_json(sandbox, "get", "gryviajobhook", "-n", ns, "fills")
            .get("status", {})
            .get("conditions", [])
        ),
        what="the hook Ready",
    )
    made = kubectl_json(sandbox, "get", "gryviajobhook", "-n", ns, "fills")["metadata"]
    created = datetime.fromisoformat(made["creationTimestamp"].replace("Z", "+00:00"))
    # a transition in the hook's creation second is never sent (no backfill): start after it
    wait_for(lambda: datetime.now(UTC) >= created + timedelta(seconds=1), what="the next second")
    for name in ("fill-a", "fill-b"):
        job = sh_job(name, gpus=8, gpu_type="H100", script="sleep 600", priority=10)
        job["metadata"]["labels"] = {"fill": "yes"}
        create(sandbox, ns, job)
    for name in ("fill-a", "fill-b"):
        wait_phase(sandbox, ns, name, "Running", timeout=180)
    create(sandbox, ns, sh_job("urgent", gpus=8, gpu_type="H100", script="sleep 600", priority=90))
    wait_phase(sandbox, ns, "urgent", "Running", timeout=180)
    pods = kubectl_json(sandbox, "get", "pods", "-n", ns, "-l", "gryvia.io/job=urgent")["items"]
    assert [p["spec"]["priority"] for p in pods] == [10000]

    def one_low_waits() -> list[str] | None:
        items = kubectl_json(sandbox, "get", "pods", "-n", ns)["items"]
        waiting = [
            p["metadata"]["labels"]["gryvia.io/job"]
            for p in items
            if p["metadata"]["labels"].get("gryvia.io/job", "").startswith("fill-")
            and p["status"].get("phase") == "Pending"
            and not p["metadata"].get("deletionTimestamp")
        ]
        return waiting or None

    waiting = wait_for(one_low_waits, timeout=120, what="a preempted low pod waiting again")
    assert len(waiting) == 1
    victim, other = waiting[0], ({"fill-a", "fill-b"} - set(waiting)).pop()

    def marked() -> dict[str, Any] | None:
        job = get_job(sandbox, ns, victim)
        cond = _condition(job, "Preempted")
        return job if cond and cond["status"] == "True" else None

    job = wait_for(marked, timeout=90, what=f"{victim} marked Preempted by the scheduler")
    cond = _condition(job, "Preempted")
    assert cond is not None and cond["reason"] == "PreemptedByScheduler", cond
    assert cond["message"].startswith(f"preempted by {ns}/urgent "), cond
    assert job["status"]["preemptions"] == 1 and job["status"]["schedulerPreemptions"] == 1
    assert job["status"]["phase"] in ("Running", "Scheduling", "Pending"), job["status"]

    def victim_events() -> list[dict[str, Any]]:
        events = kubectl_json(
            sandbox, "get", "events", "-n", ns, "--field-selector", f"involvedObject.name={victim}"
        )["items"]
        return [e for e in events if e["reason"] == "Preempted"]

    shown = wait_for(victim_events, timeout=30, what=f"a Preempted event on {victim}")
    assert f"{ns}/urgent" in shown[0]["message"], shown
    assert _condition(get_job(sandbox, ns, other), "Preempted") is None
    for name in ("fill-a", "fill-b"):
        assert get_job(sandbox, ns, name)["status"].get("retries", 0) == 0  # not a failure

    expected = [("fill-a", "Running", 0), ("fill-b", "Running", 0), (victim, "Preempted", 1)]

    def delivered() -> list[tuple[str, str, int]] | None:
        found = [(p["name"], p["event"], p["preemptions"]) for p in receiver.accepted()]
        return found if all(e in found for e in expected) else None

    sent = wait_for(delivered, timeout=90, what="the Running and Preempted hook deliveries")
    # later passes (the replacement pod's and the job's events) count the one preemption once
    assert get_job(sandbox, ns, victim)["status"]["preemptions"] == 1
    assert sorted(sent) == sorted(expected), sent  # once each, and no Running of a new run
