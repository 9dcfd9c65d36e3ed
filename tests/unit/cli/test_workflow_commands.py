"""`gryvia workflow submit|list|get|logs|cancel|retry` through CliRunner with the fake access
layer (tests/integration/operator/test_workflows.py runs them against the real API server)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner, Result

from gryvia_cli.cli.session import Session
from gryvia_cli.kube import resources as r
from tests.builders import make_job, make_pod
from tests.unit.cli.fakes import FakeAccess

NOW = dt.datetime(2026, 12, 1, 21, 0, tzinfo=dt.UTC)


def run(args: list[str], fake: FakeAccess) -> Result:
    from gryvia_cli.main import app

    state = Session(access_factory=lambda _s: fake, clock=lambda: NOW)
    return CliRunner().invoke(app, args, obj=state)


def step(name: str, *deps: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "template": {"type": "training", "image": "i", "gpus": 0, "command": ["true"]},
    }
    if deps:
        out["dependsOn"] = list(deps)
    return out


def manifest(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaWorkflow",
        "metadata": {"name": "pipe"},
        "spec": {"steps": [step("prepare"), step("train", "prepare")], **spec},
    }


def failed(**extra: Any) -> dict[str, Any]:
    """A stored workflow whose run 1 failed at train."""
    body = manifest()
    body["metadata"] |= {"namespace": "ml", "creationTimestamp": "2026-12-01T20:00:00Z"}
    body["status"] = {
        "phase": "Failed",
        "lastRun": 1,
        "failedStep": "train",
        "message": "step train failed: exit 1",
        "runs": [
            {
                "number": 1,
                "phase": "Failed",
                "failedStep": "train",
                "startTime": "2026-12-01T20:00:01Z",
                "steps": [
                    {"name": "prepare", "state": "Succeeded", "job": "pipe-1-prepare"},
                    {"name": "train", "state": "Failed", "job": "pipe-1-train"},
                ],
            }
        ],
        **extra,
    }
    return body


def test_submit_creates_the_workflow_with_parameters(tmp_path: Path) -> None:
    file = tmp_path / "wf.yaml"
    file.write_text(yaml.safe_dump(manifest(parameters={"lr": "1"})))
    fake = FakeAccess()
    result = run(["workflow", "submit", str(file), "-p", "lr=0.5", "-p", "x=y"], fake)
    assert result.exit_code == 0, result.output
    stored = fake.get(r.WORKFLOW, "pipe", "ml")
    assert stored["spec"]["parameters"] == {"lr": "0.5", "x": "y"}
    assert result.stdout.strip() == "gryviaworkflow.gryvia.io/pipe"


def test_submit_refuses_an_invalid_workflow_and_creates_nothing(tmp_path: Path) -> None:
    bad = manifest()
    bad["spec"]["steps"][1]["dependsOn"] = ["nope"]
    file = tmp_path / "wf.yaml"
    file.write_text(yaml.safe_dump(bad))
    fake = FakeAccess()
    result = run(["workflow", "submit", str(file)], fake)
    assert result.exit_code != 0
    assert "spec.steps[1].dependsOn: no step named 'nope'" in result.output
    assert not fake.objects
    result = run(["workflow", "submit", str(file), "-p", "novalue"], fake)
    assert result.exit_code != 0 and "expected NAME=VALUE" in result.output
    long = manifest()
    long["metadata"]["name"] = "w" * 45
    file.write_text(yaml.safe_dump(long))
    result = run(["workflow", "submit", str(file)], fake)
    assert result.exit_code != 0 and "too long for its step jobs" in result.output


def test_list_and_get_show_the_failed_step() -> None:
    fake = FakeAccess(failed())
    result = run(["workflow", "list"], fake)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if line.startswith("pipe"))
    assert row.split()[:5] == ["pipe", "Failed", "1", "1/2", "train"]
    result = run(["workflow", "get", "pipe"], fake)
    assert result.exit_code == 0, result.output
    assert "Failed at step train" in result.stdout
    assert "train" in result.stdout and "job pipe-1-train" in result.stdout


def test_retry_writes_one_request_naming_the_run_and_step() -> None:
    fake = FakeAccess(failed())
    result = run(["workflow", "retry", "pipe"], fake)  # default: the failed step
    assert result.exit_code == 0, result.output
    value = fake.get(r.WORKFLOW, "pipe", "ml")["metadata"]["annotations"][
        "gryvia.io/workflow-retry"
    ]
    nonce, number, from_step = value.split(":")
    assert (number, from_step) == ("1", "train") and len(nonce) == 8
    result = run(["workflow", "retry", "pipe", "--from", "nope"], fake)
    assert result.exit_code == 2 and "no such step" in result.output


def test_cancel_only_a_running_run() -> None:
    fake = FakeAccess(failed())
    result = run(["workflow", "cancel", "pipe"], fake)
    assert result.exit_code == 2 and "nothing to cancel" in result.output
    running = failed()
    running["status"]["runs"][0]["phase"] = "Running"
    fake = FakeAccess(running)
    assert run(["workflow", "cancel", "pipe"], fake).exit_code == 0
    meta = fake.get(r.WORKFLOW, "pipe", "ml")["metadata"]
    assert meta["annotations"]["gryvia.io/workflow-cancel"].endswith(":1")


def test_logs_show_a_steps_job_log() -> None:
    fake = FakeAccess(failed(), make_job("pipe-1-train").phase("Failed").obj())
    pod = make_pod("pipe-1-train-x").job("pipe-1-train").obj()
    pod["status"] = {"phase": "Failed"}
    fake.add(pod)
    fake.logs["pipe-1-train-x"] = ["loss went nan"]
    result = run(["workflow", "logs", "pipe", "--step", "train"], fake)
    assert result.exit_code == 0, result.output
    assert "loss went nan" in result.stdout
    result = run(["workflow", "logs", "pipe", "-f"], fake)
    assert result.exit_code == 2 and "--step" in result.output


def test_submit_keeps_the_manifests_namespace_and_refuses_a_conflicting_n(tmp_path: Path) -> None:
    body = manifest()
    body["metadata"]["namespace"] = "research"
    file = tmp_path / "wf.yaml"
    file.write_text(yaml.safe_dump(body))
    fake = FakeAccess()
    result = run(["workflow", "submit", str(file), "-n", "vision"], fake)
    assert result.exit_code == 2, result.output
    assert "pipe is for namespace research, not vision" in result.output and not fake.objects
    result = run(["workflow", "submit", str(file)], fake)
    assert result.exit_code == 0, result.output
    assert fake.get(r.WORKFLOW, "pipe", "research")["metadata"]["namespace"] == "research"


def test_submit_refuses_a_name_too_long_for_a_statefulset_steps_children(tmp_path: Path) -> None:
    body = manifest()
    body["spec"]["steps"][1]["template"]["workloadKind"] = "statefulset"
    body["metadata"]["name"] = "w" * 33  # w...-9999-train: 44 > the 43 of a StatefulSet job
    file = tmp_path / "w.yaml"
    file.write_text(yaml.safe_dump(body))
    fake = FakeAccess()
    result = run(["workflow", "submit", str(file)], fake)
    assert result.exit_code != 0 and "allows at most 32" in result.output
    assert not fake.objects
