"""Issue 17's admission gate against the sandbox, operator running with `--admission-gate`.

- a job whose estimate alone exceeds the remaining budget is Rejected before any child
  exists, naming the budget, its spend and its limit; a job within it runs;
- the catalog made unreadable for real: a GryviaGpuSku stored while the CRD's schema was
  loose (as an object written under another version of the CRD), which the operator cannot
  parse once the schema is back. `--no-admission-fail-open` holds jobs Queued with the
  reason and releases them once the catalog reads again; `--admission-fail-open` admits
  them with condition AdmissionUnchecked and a Warning event.

Each test (re)starts the operator after the budget and the catalog are in place: kopf lists
every index before any handler runs, so the gate sees them at the job's first decision.
The budget's spend is written into its status the way the budget controller writes it.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, get_job, kubectl_json, wait_phase
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
SKU_CRD = "gryviagpuskus.gryvia.io"
SPEC_PATH = "/spec/versions/0/schema/openAPIV3Schema/properties/spec"
FAIL_CLOSED = ("--admission-gate", "--no-admission-fail-open")
FAIL_OPEN = ("--admission-gate", "--admission-fail-open")
CHILD_KINDS = "jobs.batch,statefulsets,services,persistentvolumeclaims"


@pytest.fixture(scope="module")
def gate_operator(operator: OperatorProcess) -> OperatorProcess:
    """The session's operator; each test's `operator` marker sets the gate's flags."""
    operator.ensure_running()
    return operator


@pytest.fixture
def ns(sandbox: SandboxHandle, gate_operator: OperatorProcess) -> Iterator[str]:
    """A fresh namespace (the default catalog's `l40` SKU prices L40 at 2.50 USD/GPU-hour)."""
    wait_for(
        lambda: sandbox.kubectl_run("get", "gryviagpusku", "l40", check=False).returncode == 0,
        what="the default catalog's l40 SKU",
    )
    with sandbox.fresh_namespace("gate") as name:
        yield name


@pytest.fixture
def budget(sandbox: SandboxHandle, ns: str) -> Iterator[str]:
    """A GryviaBudget of 10 USD a month on the namespace, enforced with block, 0 USD spent
    (written into its status through the API, as the budget controller does)."""
    name = f"cap-{ns}"
    sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaBudget",
            "metadata": {"name": name},
            "spec": {
                "scope": {"type": "namespace", "name": ns},
                "period": {"type": "monthly"},
                "limits": {"costUSD": 10},
                "enforcement": {"enabled": True, "action": "block"},
            },
        }
    )
    status = {"status": {"usage": {"costUSD": 0, "gpuHours": 0}}}
    sandbox.kubectl_run(
        "patch",
        "gryviabudget",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps(status),
    )
    yield name
    sandbox.kubectl_run("delete", "gryviabudget", name, "--wait=false", check=False)


@pytest.fixture
def broken_sku(sandbox: SandboxHandle) -> Iterator[str]:
    """A GryviaGpuSku for L40 whose `hourlyRate` is a string: created while the CRD's spec
    schema preserves anything, then the schema is put back, so the API server keeps serving
    an object the operator cannot parse. Deleted (and the schema restored) afterwards."""
    name = f"zz-broken-{uuid.uuid4().hex[:6]}"
    crd = kubectl_json(sandbox, "get", "crd", SKU_CRD)
    strict = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    loose = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}

    def set_schema(value: dict[str, Any]) -> None:
        patch = [{"op": "replace", "path": SPEC_PATH, "value": value}]
        sandbox.kubectl_run("patch", "crd", SKU_CRD, "--type=json", "-p", json.dumps(patch))

    sku = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaGpuSku",
        "metadata": {"name": name},
        "spec": {"gpuType": "L40", "hourlyRate": "ask sales"},
    }
    set_schema(loose)
    try:
        # the API server takes the new schema asynchronously: retry until it accepts
        wait_for(
            lambda: sandbox.apply(sku, verb="create", check=False).returncode == 0,
            timeout=60,
            what="the loose schema to accept the unparseable SKU",
        )
    finally:
        set_schema(strict)
    wait_for(
        lambda: (
            sandbox.apply(
                {**sku, "metadata": {"name": name + "-x"}},
                verb="create",
                check=False,
                extra=("--dry-run=server",),
            ).returncode
            != 0
        ),
        timeout=60,
        what="the strict schema to be back",
    )
    yield name
    sandbox.kubectl_run("delete", "gryviagpusku", name, "--ignore-not-found", check=False)


def _children(sandbox: SandboxHandle, ns: str, job: str) -> list[str]:
    items = kubectl_json(sandbox, "get", CHILD_KINDS, "-n", ns)["items"]
    return [
        f"{i['kind']}/{i['metadata']['name']}"
        for i in items
        if i["metadata"]["name"].startswith(job)
    ]


def _condition(job: dict[str, Any], kind: str) -> dict[str, Any] | None:
    found = [c for c in (job.get("status") or {}).get("conditions") or [] if c["type"] == kind]
    return found[0] if found else None


def _events(sandbox: SandboxHandle, ns: str, job: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubectl_json(sandbox, "get", "events", "-n", ns)["items"]
    return [e for e in items if e["involvedObject"]["name"] == job]


@pytest.mark.operator(*FAIL_CLOSED)
def test_estimate_over_the_remaining_budget_is_refused_before_any_child(
    sandbox: SandboxHandle, gate_operator: OperatorProcess, ns: str, budget: str
) -> None:
    # 4 GPUs x 2 h x 2.50 USD = 20 USD > the 10 USD left; 1 GPU x 1 h = 2.50 USD fits
    create(
        sandbox,
        ns,
        sh_job("big", gpus=4, gpu_type="L40", timeout="2h"),
        sh_job("small", gpus=1, gpu_type="L40", timeout="1h"),
    )
    big = wait_phase(sandbox, ns, "big", "Rejected")
    message = big["status"]["message"]
    assert f"budget {budget}" in message, message
    assert "0.00 of 10.00 USD spent" in message and "20.00" in message, message
    rejected = _condition(big, "Rejected")
    assert rejected is not None and rejected["reason"] == "BudgetExceeded"
    wait_phase(sandbox, ns, "small", "Scheduling", "Running", "Succeeded")
    assert _children(sandbox, ns, "big") == []
    assert get_job(sandbox, ns, "big")["status"]["phase"] == "Rejected"  # sticky


@pytest.mark.operator(*FAIL_CLOSED, starts_after=("broken_sku",))  # the catalog is read at start
def test_unreadable_catalog_fail_closed_holds_then_releases(
    sandbox: SandboxHandle,
    gate_operator: OperatorProcess,
    ns: str,
    budget: str,
    broken_sku: str,
) -> None:
    create(sandbox, ns, sh_job("held", gpus=1, gpu_type="L40", timeout="1h"))
    held = wait_phase(sandbox, ns, "held", "Queued")
    message = held["status"]["message"]
    assert "GPU catalog cannot be read" in message and broken_sku in message, message
    admitted = _condition(held, "Admitted")
    assert admitted is not None and admitted["status"] == "False"
    assert admitted["reason"] == "AdmissionUnchecked"
    assert _children(sandbox, ns, "held") == []
    # the catalog reads again: the SKU event re-decides the held job, which fits the budget
    sandbox.kubectl_run("delete", "gryviagpusku", broken_sku)
    released = wait_phase(sandbox, ns, "held", "Scheduling", "Running", "Succeeded")
    assert _condition(released, "AdmissionUnchecked") is None


@pytest.mark.operator(*FAIL_OPEN, starts_after=("broken_sku",))  # the catalog is read at start
def test_unreadable_catalog_fail_open_admits_with_condition_and_warning(
    sandbox: SandboxHandle,
    gate_operator: OperatorProcess,
    ns: str,
    budget: str,
    broken_sku: str,
) -> None:
    create(sandbox, ns, sh_job("open", gpus=1, gpu_type="L40", timeout="1h"))
    job = wait_phase(sandbox, ns, "open", "Scheduling", "Running", "Succeeded")
    cond = _condition(job, "AdmissionUnchecked")
    assert cond is not None and cond["status"] == "True", job["status"]
    assert "GPU catalog cannot be read" in cond["message"] and broken_sku in cond["message"]
    warning = wait_for(
        lambda: [
            e
            for e in _events(sandbox, ns, "open")
            if e["reason"] == "AdmissionUnchecked" and e["type"] == "Warning"
        ],
        timeout=60,
        what="a Warning event AdmissionUnchecked on the job",
    )
    assert broken_sku in warning[0]["message"]


@pytest.mark.operator(*FAIL_CLOSED)
def test_quota_hard_limit_counts_metered_spend(
    sandbox: SandboxHandle, gate_operator: OperatorProcess, ns: str
) -> None:
    """A GryviaQuota with `budget.hardLimit`: 8 USD metered this month (a sealed usage record
    in the namespace) + a 2.50 USD estimate passes its 10 USD; the quota alone would admit."""
    team = f"q-{ns}"
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    start, end = now - dt.timedelta(minutes=2), now - dt.timedelta(minutes=1)
    sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaQuota",
            "metadata": {"name": team},
            "spec": {
                "team": team,
                "namespaces": [ns],
                "gpuQuota": {"maxGPUs": 8},
                "budget": {"monthlyBudget": 10, "hardLimit": True},
            },
        }
    )
    record = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaUsageRecord",
        "metadata": {"name": "usage-earlier"},
        "spec": {
            "tenant": team,
            "job": "earlier",
            "jobUID": "0000-earlier",
            "sku": "l40",
            "gpuType": "L40",
            "gpus": 4,
            "rate": 2.5,
            "start": start.isoformat().replace("+00:00", "Z"),
            "end": end.isoformat().replace("+00:00", "Z"),
            "gpuHours": 3.2,
            "cost": 8.0,
            "final": True,
        },
    }
    try:
        create(sandbox, ns, record)
        create(sandbox, ns, sh_job("over", gpus=1, gpu_type="L40", timeout="1h"))
        job = wait_phase(sandbox, ns, "over", "Rejected")
        message = job["status"]["message"]
        assert f"quota {team} (team {team}): 8.00 of 10.00 USD spent" in message, message
        assert _children(sandbox, ns, "over") == []
    finally:
        sandbox.kubectl_run("delete", "gryviaquota", team, "--wait=false", check=False)
