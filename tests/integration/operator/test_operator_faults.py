"""Operator faults found by hand (issue 14, point 6), each reproduced in the sandbox: a job's
pod deleted by hand, a spec UPDATE past the quota policy, billing time before the container
runs."""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gryvia_operator.handlers.accounting import METERING_SECONDS
from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, get_job, kubectl_json, wait_phase
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess, webhook_down
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]
ALLOWED = "A100-80G"


def _job(name: str, *, gpus: int = 8, gpu_type: str = ALLOWED, script: str, **spec: Any) -> Any:
    return sh_job(name, gpus=gpus, gpu_type=gpu_type, script=script, **spec)


@pytest.fixture
def team(sandbox: SandboxHandle, live_operator: OperatorProcess) -> Iterator[str]:
    """A tenant `f<id>` with namespace `tenant-f<id>` and an 8-GPU quota on A100-80G only."""
    name = f"f{uuid.uuid4().hex[:6]}"
    sandbox.apply(
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaTenant",
            "metadata": {"name": name},
            "spec": {"displayName": name, "deletionPolicy": "Delete"},
        },
        {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaQuota",
            "metadata": {"name": name},
            "spec": {
                "team": name,
                "namespaces": [f"tenant-{name}"],
                "gpuQuota": {"maxGPUs": 8, "allowedGPUTypes": [ALLOWED]},
            },
        },
    )
    wait_for(
        lambda: sandbox.kubectl_run("get", "ns", f"tenant-{name}", check=False).returncode == 0,
        what="tenant namespace",
    )
    yield name
    sandbox.kubectl_run("delete", "gryviaquota", name, "--wait=false", check=False)
    sandbox.kubectl_run("delete", "gryviatenant", name, "--wait=false", check=False)


def _pods(sandbox: SandboxHandle, ns: str, job: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = kubectl_json(
        sandbox, "get", "pods", "-n", ns, "-l", f"gryvia.io/job={job}"
    )["items"]
    return found


def test_a_hand_deleted_pod_fails_its_job_and_frees_the_quota(
    sandbox: SandboxHandle, team: str
) -> None:
    """retryLimit 0: deleting the pod is the job's one failure (the kubelet marks a deleted
    pod Failed before it goes), so the batch Job fails, the job ends Failed, its 8 GPUs leave
    the quota and the job queued behind it starts."""
    ns = f"tenant-{team}"
    create(sandbox, ns, _job("holder", script="sleep 600", retryLimit=0))
    wait_phase(sandbox, ns, "holder", "Running")
    create(sandbox, ns, _job("behind", script="echo behind done"))
    wait_phase(sandbox, ns, "behind", "Queued")
    pods = _pods(sandbox, ns, "holder")
    assert len(pods) == 1
    sandbox.kubectl_run("delete", "pod", "-n", ns, pods[0]["metadata"]["name"], "--wait=false")
    failed = wait_phase(sandbox, ns, "holder", "Failed", timeout=90)
    assert failed["status"]["message"].startswith("BackoffLimitExceeded: "), failed["status"]
    done = wait_phase(sandbox, ns, "behind", "Succeeded", timeout=90)
    assert any(
        c["type"] == "Admitted" and c["status"] == "True" for c in done["status"]["conditions"]
    )
    gone = _pods(sandbox, ns, "holder")
    assert all(p["status"]["phase"] == "Failed" for p in gone), [p["status"] for p in gone]


def test_a_hand_deleted_pod_with_retries_left_is_replaced_and_still_counted(
    sandbox: SandboxHandle, team: str, tmp_path: Path
) -> None:
    """retryLimit 1: the Job replaces the deleted pod, the job stays Running with the
    replacement (shown by `gryvia status`), its 8 GPUs stay counted and the job behind waits."""
    ns = f"tenant-{team}"
    create(sandbox, ns, _job("holder", script="sleep 600", retryLimit=1))
    wait_phase(sandbox, ns, "holder", "Running")
    create(sandbox, ns, _job("behind", script="echo behind done"))
    wait_phase(sandbox, ns, "behind", "Queued")
    (first,) = _pods(sandbox, ns, "holder")
    old = first["metadata"]["name"]
    sandbox.kubectl_run("delete", "pod", "-n", ns, old, "--wait=false")

    def replaced() -> dict[str, Any] | None:
        pods = [p for p in _pods(sandbox, ns, "holder") if p["metadata"]["name"] != old]
        ready = [
            p
            for p in pods
            if any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in p["status"].get("conditions") or []
            )
        ]
        return ready[0] if ready else None

    new = wait_for(replaced, timeout=90, what="the replacement pod running")["metadata"]["name"]
    job = wait_phase(sandbox, ns, "holder", "Running")
    assert job["status"]["retries"] == 1, job["status"]
    assert get_job(sandbox, ns, "behind")["status"]["phase"] == "Queued"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env |= {
        "KUBECONFIG": str(sandbox.kubeconfig),
        "GRYVIA_CONFIG_HOME": str(tmp_path / "config"),
        "NO_COLOR": "1",
    }
    shown = run_gryvia("status", "holder", "-n", ns, env=env)
    assert shown.returncode == 0, shown.stderr
    assert new in shown.stdout and "Running" in shown.stdout, shown.stdout
    quota = kubectl_json(sandbox, "get", "gryviaquota", team)["status"]["currentUsage"]
    assert quota["allocatedGPUs"] == 8 and quota["queuedJobs"] == 1, quota
    sandbox.kubectl_run("delete", "gaj", "holder", "-n", ns, "--wait=false")
    wait_phase(sandbox, ns, "behind", "Succeeded", timeout=90)


def _patch(sandbox: SandboxHandle, ns: str, name: str, spec: dict[str, Any]) -> Any:
    body = json.dumps({"spec": spec})
    return sandbox.kubectl_run(
        "patch", "gaj", name, "-n", ns, "--type=merge", "-p", body, check=False
    )


def test_spec_updates_are_judged_by_the_policy_and_by_cel_without_the_webhook(
    sandbox: SandboxHandle, team: str, live_operator: OperatorProcess
) -> None:
    ns = f"tenant-{team}"
    policy = (
        'admission webhook "vgryviaaijob.gryvia.io" denied the request: not allowed by quota '
        f'policy: GPU type "T4" is not allowed for this namespace (allowed: {ALLOWED})'
    )
    denied = create(sandbox, ns, _job("t4", gpus=1, gpu_type="T4", script="true"), check=False)
    assert denied.returncode != 0 and policy in denied.stderr, denied.stderr
    create(sandbox, ns, _job("valid", gpus=1, script="true", suspend=True))
    with webhook_down(sandbox, live_operator):
        wait_for(
            lambda: (
                create(
                    sandbox, ns, _job("t4", gpus=1, gpu_type="T4", script="true"), check=False
                ).returncode
                == 0
            ),
            timeout=30,
            what="the T4 job created while the webhook is unregistered",
        )
        rejected = wait_phase(sandbox, ns, "t4", "Rejected")
        assert rejected["status"]["message"].startswith('GPU type "T4" is not allowed for team')
        for name, spec in (("valid", {"gpuType": "T4"}), ("valid", {"gpus": 8})):
            refused = _patch(sandbox, ns, name, spec)
            assert refused.returncode != 0, refused.stdout
            assert "cannot change once the job exists" in refused.stderr, refused.stderr
    attempts = iter(range(1, 100))

    def patch_refused() -> str | None:
        out = _patch(sandbox, ns, "t4", {"priority": next(attempts)})
        return out.stderr if out.returncode != 0 else None

    refused = wait_for(patch_refused, timeout=30, what="the webhook to judge the T4 update")
    assert policy in refused, refused
    assert get_job(sandbox, ns, "valid")["spec"]["gpuType"] == ALLOWED


def _ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


INIT_SECONDS = 30
RUN_SECONDS = 12


def _init_policy(name: str, ns: str) -> list[dict[str, Any]]:
    """A MutatingAdmissionPolicy (and binding) giving every new pod in `ns` an init container
    that sleeps INIT_SECONDS: a pod bound, then waiting before its container runs."""
    init = (  # added in two steps: a list of typed objects as one JSONPatch value fails
        '[JSONPatch{op: "add", path: "/spec/initContainers", value: []}, '
        'JSONPatch{op: "add", path: "/spec/initContainers/-", value: Object.spec.initContainers{'
        f'name: "wait", image: "none", command: ["sh", "-c", "sleep {INIT_SECONDS}"]}}}}]'
    )
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {
                "matchConstraints": {
                    "resourceRules": [
                        {
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE"],
                            "resources": ["pods"],
                        }
                    ]
                },
                "failurePolicy": "Fail",
                "reinvocationPolicy": "Never",
                "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": init}}],
            },
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {
                "policyName": name,
                "matchResources": {
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}
                },
            },
        },
    ]


def test_billing_starts_when_the_container_runs_not_when_the_pod_waits(
    sandbox: SandboxHandle, team: str
) -> None:
    ns = f"tenant-{team}"
    name = f"init-{team}"
    sandbox.apply(*_init_policy(name, ns))
    try:
        probe = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "probe", "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "none"}]},
        }

        def mutated() -> bool:
            out = sandbox.kubectl_run(
                "create",
                "--dry-run=server",
                "-o",
                "json",
                "-f",
                "-",
                input=json.dumps(probe),
                check=False,
            )
            return out.returncode == 0 and bool(
                json.loads(out.stdout)["spec"].get("initContainers")
            )

        wait_for(mutated, timeout=30, what="the init-container policy to apply")
        create(sandbox, ns, _job("slow", gpus=1, script=f"sleep {RUN_SECONDS}"))
        job = wait_phase(sandbox, ns, "slow", "Succeeded", timeout=120)
    finally:
        for kind in ("mutatingadmissionpolicybinding", "mutatingadmissionpolicy"):
            sandbox.kubectl_run("delete", kind, name, "--ignore-not-found", check=False)
    (pod,) = _pods(sandbox, ns, "slow")
    ended = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    ran = (_ts(ended["finishedAt"]) - _ts(ended["startedAt"])).total_seconds()
    assert ran >= RUN_SECONDS - 1, ended
    uid = job["metadata"]["uid"]

    def sealed() -> dict[str, Any] | None:
        out = sandbox.kubectl_run(
            "get", "gryviausagerecord", "-n", ns, f"usage-{uid}", "-o", "json", check=False
        )
        record = json.loads(out.stdout) if out.returncode == 0 else None
        return record if record and record["spec"].get("final") else None

    record = wait_for(sealed, timeout=60, what="the sealed usage record")
    billed = record["spec"]["gpuHours"] * 3600 / record["spec"]["gpus"]
    assert abs(billed - ran) <= METERING_SECONDS, (billed, ran, record["spec"])
    assert _ts(record["spec"]["start"]) == _ts(ended["startedAt"]), record["spec"]
    job_start = _ts(job["status"]["startTime"])
    assert (_ts(ended["startedAt"]) - job_start).total_seconds() >= INIT_SECONDS - 2
