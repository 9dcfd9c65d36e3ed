"""GryviaIdlePolicy against the sandbox and the session operator (docs/idle-policies.md).

Three running jobs on GPUs: two sleep (one of them exempt), one spins (`nice`d: always runnable,
so its GPU reads busy, yet it leaves the CPUs to the other tests). The operator's sampler
measures them; the two sleeping ones also get a first idle sample taken 50 s before (written
through the status subresource, as the sampler writes it), so the window ends about 10 s after
the policy is created instead of 60 s. A policy with a 60 s window and a 10 s grace warns the
idle job once and then suspends it, and leaves the other two alone; `gryvia idle-policy list`
shows the policy.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gryvia_operator.api.dcgm import FIELD_ENGINE_ACTIVE
from gryvia_operator.api.idlepolicy import ANNOTATION_IDLE, ANNOTATION_IDLE_EXEMPT
from tests.builders import sh_job
from tests.conftest import SandboxHandle
from tests.integration.operator.conftest import create, get_job, kubectl_json, wait_phase
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


@pytest.fixture
def ns(sandbox: SandboxHandle, live_operator: OperatorProcess) -> Iterator[str]:
    with sandbox.fresh_namespace("idle") as name:
        yield name


def _sample(sandbox: SandboxHandle, ns: str, job: str, activity: float) -> None:
    """A sample taken 50 s ago: the policy's idle period starts at the first idle sample it
    sees, so the 60 s window ends about 10 s after the policy is created."""
    taken = datetime.now(UTC) - timedelta(seconds=50)
    now = taken.strftime("%Y-%m-%dT%H:%M:%SZ")
    metrics = {
        "field": FIELD_ENGINE_ACTIVE,
        "samples": 4,
        "lastSampleTime": now,
        "lastActivityPercent": activity,
        "meanActivityPercent": activity,
    }
    sandbox.kubectl_run(
        "patch",
        "gryviaaijob",
        job,
        "-n",
        ns,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": {"metrics": metrics}}),
    )


def _reasons(sandbox: SandboxHandle, ns: str, job: str) -> list[str]:
    events = kubectl_json(
        sandbox, "get", "events", "-n", ns, "--field-selector", f"involvedObject.name={job}"
    )["items"]
    return sorted(e["reason"] for e in events if e["reason"].startswith("Idle"))


def test_an_idle_job_is_warned_once_then_suspended_and_the_others_are_left_alone(
    sandbox: SandboxHandle, ns: str, tmp_path: Path
) -> None:
    jobs = [sh_job(n, gpus=1, script="sleep 600") for n in ("idle", "exempt")]
    jobs.append(sh_job("busy", gpus=1, script="nice -n 19 sh -c 'while :; do :; done'"))
    jobs[1]["metadata"]["annotations"] = {ANNOTATION_IDLE_EXEMPT: "true"}
    create(sandbox, ns, *jobs)
    for name in ("idle", "exempt", "busy"):
        wait_phase(sandbox, ns, name, "Running", timeout=120)

    def sampled_busy() -> float | None:
        metrics = get_job(sandbox, ns, "busy").get("status", {}).get("metrics") or {}
        return metrics.get("lastActivityPercent") if metrics.get("samples", 0) >= 1 else None

    assert wait_for(sampled_busy, timeout=60, what="the sampler's reading of busy") >= 80
    # just before the policy, so its first pass sees them before the sampler's next ones
    for name in ("idle", "exempt"):
        _sample(sandbox, ns, name, 1.5)
    policy = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaIdlePolicy",
        "metadata": {"name": "idle-gpus"},
        "spec": {"windowSeconds": 60, "graceSeconds": 10, "action": "suspend"},
    }
    create(sandbox, ns, policy)

    def seen() -> dict[str, Any] | None:
        status = kubectl_json(sandbox, "get", "gryviaidlepolicy", "-n", ns, "idle-gpus").get(
            "status"
        )
        return status if status and status.get("coveredJobs") == 2 else None

    status = wait_for(seen, timeout=60, what="the policy covering idle and busy")
    assert [j["job"] for j in status["jobs"]] == ["idle"], status

    def suspended() -> dict[str, Any] | None:
        job = get_job(sandbox, ns, "idle")
        return job if job["spec"].get("suspend") else None

    job = wait_for(suspended, timeout=150, what="the idle job suspended")
    record = json.loads(job["metadata"]["annotations"][ANNOTATION_IDLE])
    assert record["policy"] == "idle-gpus" and record["action"] == "suspend", record
    assert record["activityPercent"] <= 5  # ours (1.5) or the sampler's (0.0)
    warned = datetime.fromisoformat(record["warnedAt"])
    acted = datetime.fromisoformat(record["actedAt"])
    assert (acted - warned).total_seconds() >= 10, record

    def both_events() -> list[str] | None:
        found = _reasons(sandbox, ns, "idle")
        return found if len(found) >= 2 else None

    reasons = wait_for(both_events, timeout=30, what="the warning and suspension events")
    assert reasons == ["IdleGPUs", "IdleJobSuspended"], reasons
    for name in ("exempt", "busy"):
        other = get_job(sandbox, ns, name)
        assert ANNOTATION_IDLE not in (other["metadata"].get("annotations") or {})
        assert not other["spec"].get("suspend") and _reasons(sandbox, ns, name) == []

    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env |= {"KUBECONFIG": str(sandbox.kubeconfig), "GRYVIA_CONFIG_HOME": str(tmp_path)}
    shown = run_gryvia("idle-policy", "list", "-n", ns, env=env | {"NO_COLOR": "1"})
    assert shown.returncode == 0, shown.stderr
    row = next(line.split() for line in shown.stdout.splitlines() if line.startswith("idle-gpus"))
    assert row[1:5] == ["suspend", "5%", "60s", "10s"], shown.stdout
