"""`gryvia tune submit|list|status|best` through CliRunner with the fake access layer
(tests/integration/operator/test_autotuner.py runs them against the real API server)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner, Result

from gryvia_cli.cli.session import Session
from gryvia_cli.kube import resources as r
from tests.unit.cli.fakes import FakeAccess

NOW = dt.datetime(2026, 12, 1, 21, 0, tzinfo=dt.UTC)


def run(args: list[str], fake: FakeAccess) -> Result:
    from gryvia_cli.main import app

    state = Session(access_factory=lambda _s: fake, clock=lambda: NOW)
    return CliRunner().invoke(app, args, obj=state)


def manifest(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAutoTuner",
        "metadata": {"name": "sweep"},
        "spec": {
            "jobTemplate": {
                "type": "training",
                "image": "i",
                "gpus": 0,
                "command": ["sh", "-c", "echo $(parameters.x)"],
            },
            "parameterSpace": [{"name": "x", "type": "uniform", "min": 1, "max": 2}],
            "objective": {"name": "score"},
            "maxTrials": 3,
            "parallelism": 2,
            **spec,
        },
    }


def stored(best: bool = True) -> dict[str, Any]:
    body = manifest()
    body["metadata"] |= {"namespace": "ml", "creationTimestamp": "2026-12-01T20:00:00Z"}
    trials = [
        {
            "index": 0,
            "name": "sweep-t0",
            "parameters": {"x": "1.2"},
            "state": "Succeeded",
            "value": 1.2,
        },
        {
            "index": 1,
            "name": "sweep-t1",
            "parameters": {"x": "1.9"},
            "state": "Succeeded",
            "value": 1.9,
        },
        {
            "index": 2,
            "name": "sweep-t2",
            "parameters": {"x": "1.5"},
            "state": "EarlyStopped",
            "value": 0.0,
            "step": 1,
            "message": "median stopping",
        },
    ]
    body["status"] = {
        "phase": "Succeeded",
        "trialsCreated": 3,
        "running": 0,
        "peakRunning": 2,
        "trials": trials if best else [],
    }
    if best:
        body["status"]["best"] = {
            "index": 1,
            "name": "sweep-t1",
            "parameters": {"x": "1.9"},
            "value": 1.9,
        }
    return body


def test_submit_creates_the_tuner(tmp_path: Path) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(yaml.safe_dump(manifest()))
    fake = FakeAccess()
    result = run(["tune", "submit", str(file)], fake)
    assert result.exit_code == 0, result.output
    assert fake.get(r.AUTOTUNER, "sweep", "ml")["spec"]["maxTrials"] == 3
    assert result.stdout.strip() == "gryviaautotuner.gryvia.io/sweep"


def test_submit_refuses_an_invalid_tuner_and_creates_nothing(tmp_path: Path) -> None:
    bad = manifest(parameterSpace=[{"name": "x", "type": "logUniform", "min": 0, "max": 2}])
    file = tmp_path / "t.yaml"
    file.write_text(yaml.safe_dump(bad))
    fake = FakeAccess()
    result = run(["tune", "submit", str(file)], fake)
    assert result.exit_code != 0
    assert "spec.parameterSpace[0].min: a logUniform range needs min > 0" in result.output
    long = manifest()
    long["metadata"]["name"] = "t" * 52  # trial jobs <tuner>-t2 (maxTrials 3) keep 54
    file.write_text(yaml.safe_dump(long))
    result = run(["tune", "submit", str(file)], fake)
    assert result.exit_code != 0 and "allows at most 51" in result.output
    assert not fake.objects


def test_list_status_and_best() -> None:
    fake = FakeAccess(stored())
    result = run(["tune", "list"], fake)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if line.startswith("sweep"))
    assert row.split()[:6] == ["sweep", "Succeeded", "3/3", "0", "sweep-t1", "1.9"]
    result = run(["tune", "status", "sweep"], fake)
    assert result.exit_code == 0, result.output
    assert "sweep-t1: 1.9 (x=1.9)" in result.stdout
    assert "EarlyStopped" in result.stdout and "x=1.5" in result.stdout
    assert "parallelism 2, peak 2" in result.stdout
    result = run(["tune", "best", "sweep", "-o", "json"], fake)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "index": 1,
        "name": "sweep-t1",
        "parameters": {"x": "1.9"},
        "value": 1.9,
    }
    result = run(["tune", "best", "sweep", "-o", "name"], fake)
    assert result.stdout.strip() == "gryviaaijob.gryvia.io/sweep-t1"


def test_best_before_any_result_fails() -> None:
    fake = FakeAccess(stored(best=False))
    result = run(["tune", "best", "sweep"], fake)
    assert result.exit_code != 0
    assert "no best trial yet: no trial reported score" in result.output
    result = run(["tune", "best", "nope"], fake)
    assert result.exit_code != 0 and 'tuner "nope" not found' in result.output


def test_submit_keeps_the_manifests_namespace(tmp_path: Path) -> None:
    body = manifest()
    body["metadata"]["namespace"] = "research"
    file = tmp_path / "t.yaml"
    file.write_text(yaml.safe_dump(body))
    fake = FakeAccess()
    result = run(["tune", "submit", str(file)], fake)
    assert result.exit_code == 0, result.output
    assert fake.get(r.AUTOTUNER, "sweep", "research")["spec"]["maxTrials"] == 3
