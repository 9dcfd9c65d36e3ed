"""GryviaIdlePolicy against the sandbox and the session operator (docs/idle-policies.md),
issue 36 acceptance.

Four running jobs on GPUs: three sleep (a training job, an evaluation job, and an exempt
training job), one spins (`nice`d: always runnable, so its GPU reads busy, yet it leaves the
CPUs to the other tests). The operator's sampler measures them; the sleeping ones also get a
first idle sample taken 55 s before (written through the status subresource, as the sampler
writes it), so the window ends about 5 s after the policies are created instead of 60 s.
Two policies with a 60 s window and a 20 s grace, one suspending training jobs, one
cancelling evaluation jobs, warn each idle job once and then act, and leave the other two
alone; each warning and action is a job condition naming the policy and the measured
activity, and one signed POST to a GryviaJobHook's receiver. The operator is SIGKILLed
between the warnings and the actions: nothing is warned twice and no action is lost.
`gryvia idle-policy list` shows the policies.
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
from tests.support.hookreceiver import ALLOWED, Receiver, hook_status, serve, signed_hook
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]


GRACE = 20
"""Seconds from a warning to the action: room for the SIGKILL and restart in between."""
BACKDATE = 55
"""How long before now the planted first idle sample was taken (the window is 60 s)."""
IDLE_EVENTS = ["IdleWarning", "IdleJobSuspended", "IdleJobCancelled"]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    box = Receiver()
    server = serve(box, ALLOWED)
    yield box
    server.shutdown()
    server.server_close()


@pytest.fixture
def ns(sandbox: SandboxHandle, live_operator: OperatorProcess) -> Iterator[str]:
    with sandbox.fresh_namespace("idle") as name:
        yield name


def _sample(sandbox: SandboxHandle, ns: str, job: str, activity: float) -> None:
    """A sample taken BACKDATE (55) s ago: the policy's idle period starts at the first idle
    sample it sees, so the 60 s window ends about 5 s after the policy is created."""
    taken = datetime.now(UTC) - timedelta(seconds=BACKDATE)
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


def _policy(name: str, action: str, job_type: str) -> dict[str, Any]:
    spec = {"windowSeconds": 60, "graceSeconds": GRACE, "action": action, "jobTypes": [job_type]}
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaIdlePolicy",
        "metadata": {"name": name},
        "spec": spec,
    }


def _hook_status(sandbox: SandboxHandle, ns: str) -> dict[str, Any]:
    return hook_status(sandbox, ns, "idle")


def _conditions(job: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in (job.get("status") or {}).get("conditions") or []}


def _record(job: dict[str, Any]) -> dict[str, Any] | None:
    text = (job["metadata"].get("annotations") or {}).get(ANNOTATION_IDLE)
    return None if text is None else dict(json.loads(text))


def test_idle_jobs_are_warned_once_then_suspended_or_cancelled_through_a_sigkill(
    sandbox: SandboxHandle,
    ns: str,
    tmp_path: Path,
    receiver: Receiver,
    live_operator: OperatorProcess,
) -> None:
    jobs = [sh_job(n, gpus=1, script="sleep 600") for n in ("idle", "exempt")]
    jobs.append(sh_job("lazy", gpus=1, script="sleep 600", type="evaluation"))
    jobs.append(sh_job("busy", gpus=1, script="nice -n 19 sh -c 'while :; do :; done'"))
    jobs[1]["metadata"]["annotations"] = {ANNOTATION_IDLE_EXEMPT: "true"}
    create(sandbox, ns, *signed_hook("idle", receiver.url, IDLE_EVENTS), *jobs)
    for name in ("idle", "exempt", "lazy", "busy"):
        wait_phase(sandbox, ns, name, "Running", timeout=120)

    def sampled_busy() -> float | None:
        metrics = get_job(sandbox, ns, "busy").get("status", {}).get("metrics") or {}
        return metrics.get("lastActivityPercent") if metrics.get("samples", 0) >= 1 else None

    assert wait_for(sampled_busy, timeout=60, what="the sampler's reading of busy") >= 80
    wait_for(
        lambda: any(
            c["type"] == "Ready" and c["reason"] == "Valid"
            for c in _hook_status(sandbox, ns).get("conditions") or []
        ),
        timeout=30,
        what="the hook Ready",
    )
    # just before the policies, so their first pass sees them before the sampler's next ones
    backdated = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=BACKDATE)
    for name in ("idle", "exempt", "lazy"):
        _sample(sandbox, ns, name, 1.5)
    create(
        sandbox,
        ns,
        _policy("idle-gpus", "suspend", "training"),
        _policy("idle-eval", "cancel", "evaluation"),
    )

    def seen() -> dict[str, Any] | None:
        status = kubectl_json(sandbox, "get", "gryviaidlepolicy", "-n", ns, "idle-gpus").get(
            "status"
        )
        return status if status and status.get("coveredJobs") == 2 else None

    status = wait_for(seen, timeout=60, what="the policy covering idle and busy")
    assert [j["job"] for j in status["jobs"]] == ["idle"], status

    def warned() -> list[dict[str, Any]] | None:
        found = [get_job(sandbox, ns, name) for name in ("idle", "lazy")]
        if not all("IdleGPUs" in _conditions(j) for j in found):
            return None
        if not all(_reasons(sandbox, ns, name) for name in ("idle", "lazy")):
            return None  # the Events go out after the conditions
        return found

    at_warning = wait_for(warned, timeout=90, what="both idle jobs warned")
    assert all(_record(j) and "action" not in (_record(j) or {}) for j in at_warning), at_warning
    killed = datetime.now(UTC).replace(microsecond=0)
    live_operator.kill()  # between the warnings and the actions (GRACE s later)
    live_operator.start()

    def acted(name: str) -> dict[str, Any] | None:
        job = get_job(sandbox, ns, name)
        return job if "IdleAction" in _conditions(job) else None

    idle = wait_for(lambda: acted("idle"), timeout=90, what="the idle job suspended")
    lazy = wait_for(lambda: acted("lazy"), timeout=90, what="the lazy job cancelled")
    assert idle["spec"].get("suspend") is True
    assert (lazy["metadata"].get("annotations") or {}).get("gryvia.io/cancel") == "true"
    wait_phase(sandbox, ns, "lazy", "Cancelled", timeout=60)
    for job, policy, action, reason in (
        (idle, "idle-gpus", "suspend", "IdleJobSuspended"),
        (lazy, "idle-eval", "cancel", "IdleJobCancelled"),
    ):
        record = _record(job) or {}
        assert record["policy"] == policy and record["action"] == action, record
        assert record["activityPercent"] <= 5  # ours (1.5) or the sampler's (0.0)
        warned_at = datetime.fromisoformat(record["warnedAt"])
        acted_at = datetime.fromisoformat(record["actedAt"])
        assert (warned_at - backdated).total_seconds() >= 60, record  # the window
        assert GRACE <= (acted_at - warned_at).total_seconds() <= GRACE + 30, record
        assert warned_at <= killed <= acted_at, (record, killed)  # acted on by the restarted one
        conditions = _conditions(job)
        warning, action_taken = conditions["IdleGPUs"], conditions["IdleAction"]
        assert (warning["status"], warning["reason"]) == ("True", "IdleWarning"), warning
        assert (action_taken["status"], action_taken["reason"]) == ("True", reason)
        assert warning["lastTransitionTime"] == record["warnedAt"]
        assert action_taken["lastTransitionTime"] == record["actedAt"]
        for cond in (warning, action_taken):
            text = cond["message"]
            assert f"idle policy {policy}" in text and "60 s window" in text, text
            assert "GPU activity at most" in text and "%" in text, text

    def all_events() -> dict[str, list[str]] | None:
        found = {name: _reasons(sandbox, ns, name) for name in ("idle", "lazy")}
        return found if all(len(r) >= 2 for r in found.values()) else None

    reasons = wait_for(all_events, timeout=30, what="the warning and action events")
    assert reasons == {  # one warning each: the restart did not repeat it
        "idle": ["IdleGPUs", "IdleJobSuspended"],
        "lazy": ["IdleGPUs", "IdleJobCancelled"],
    }, reasons
    for name in ("exempt", "busy"):
        other = get_job(sandbox, ns, name)
        assert ANNOTATION_IDLE not in (other["metadata"].get("annotations") or {})
        assert not other["spec"].get("suspend") and _reasons(sandbox, ns, name) == []
        assert not {"IdleGPUs", "IdleAction"} & set(_conditions(other)), other

    def delivered() -> dict[str, dict[str, Any]] | None:
        found = {p["delivery"]: p for p in receiver.accepted()}  # each signature checked
        return found if len(found) >= 4 else None  # a repeat carries the same delivery id

    first = wait_for(delivered, timeout=60, what="four hook deliveries")
    assert sorted((p["name"], p["event"]) for p in first.values()) == [
        ("idle", "IdleJobSuspended"),
        ("idle", "IdleWarning"),
        ("lazy", "IdleJobCancelled"),
        ("lazy", "IdleWarning"),
    ], first
    by_condition = {"IdleWarning": "IdleGPUs"}
    for p in first.values():
        job = idle if p["name"] == "idle" else lazy
        cond = _conditions(job)[by_condition.get(p["event"], "IdleAction")]
        assert p["time"] == cond["lastTransitionTime"], p
        # the condition's message (its activity may have been rewritten with the action's)
        assert p["message"].split("%")[1] == cond["message"].split("%")[1], (p, cond)
    assert _hook_status(sandbox, ns).get("failures") in (None, 0)

    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env |= {"KUBECONFIG": str(sandbox.kubeconfig), "GRYVIA_CONFIG_HOME": str(tmp_path)}
    shown = run_gryvia("idle-policy", "list", "-n", ns, env=env | {"NO_COLOR": "1"})
    assert shown.returncode == 0, shown.stderr
    rows = {line.split()[0]: line.split() for line in shown.stdout.splitlines() if line.strip()}
    assert rows["idle-gpus"][1:5] == ["suspend", "5%", "60s", f"{GRACE}s"], shown.stdout
    assert rows["idle-eval"][1:5] == ["cancel", "5%", "60s", f"{GRACE}s"], shown.stdout
