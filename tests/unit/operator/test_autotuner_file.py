"""Tuner metrics from a file (`objective.file`): the trial's command is wrapped so the file's
GRYVIA_METRIC lines reach the log, where the operator reads them as printed ones."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from gryvia_operator.api.autotuner import GryviaAutoTuner
from gryvia_operator.reconcile.autotuner import (
    metrics_file_command,
    parse_metrics,
    reconcile_tuner,
)
from tests.support.wait import wait_for
from tests.unit.operator.test_autotuner import T0, tuner


def test_a_file_objective_wraps_the_command_and_sets_the_env() -> None:
    t = tuner(objective={"name": "acc", "file": "/data/metrics.txt"})
    body = reconcile_tuner(t, [], {}, T0).create[0]
    command = body["spec"]["command"]
    assert command[:2] == ["/bin/sh", "-c"]
    assert command[3:6] == ["gryvia-metrics", "/data/metrics.txt", "sh"]
    assert command[7].startswith("train --lr ") and command[7].endswith("# sweep-t0")
    env = {e["name"]: e["value"] for e in body["spec"]["env"]}
    assert env["GRYVIA_METRICS_FILE"] == "/data/metrics.txt"


def test_the_file_path_takes_the_trial_placeholders() -> None:
    t = tuner(objective={"name": "acc", "file": "/data/$(tuner.name)/$(trial.index).txt"})
    body = reconcile_tuner(t, [], {}, T0).create[1]
    assert body["spec"]["command"][4] == "/data/sweep/1.txt"
    env = {e["name"]: e["value"] for e in body["spec"]["env"]}
    assert env["GRYVIA_METRICS_FILE"] == "/data/sweep/1.txt"


def test_without_a_file_the_command_is_the_template_s() -> None:
    body = reconcile_tuner(tuner(), [], {}, T0).create[0]
    assert body["spec"]["command"][0] == "sh"
    assert "GRYVIA_METRICS_FILE" not in {e["name"] for e in body["spec"]["env"]}


def _template_without_command() -> dict[str, Any]:
    return {"type": "training", "image": "img", "gpus": 0}


@pytest.mark.parametrize(
    ("objective", "template", "fix"),
    [
        ({"name": "acc", "file": "m.txt"}, _template_without_command(), "jobTemplate.command"),
        ({"name": "acc", "file": "a\nb"}, None, "objective.file"),
        ({"name": "acc", "file": ""}, None, "objective.file"),
        ({"name": "acc", "file": "$(trial.nme).txt"}, None, "unknown placeholder $(trial.nme)"),
    ],
)
def test_a_bad_file_objective_is_refused(
    objective: dict[str, Any], template: dict[str, Any] | None, fix: str
) -> None:
    spec: dict[str, Any] = {"objective": objective}
    if template is not None:
        spec["jobTemplate"] = template
    with pytest.raises(ValidationError) as raised:
        tuner(**spec)
    assert fix in str(raised.value)


def _run(tmp_path: Path, script: str) -> subprocess.CompletedProcess[str]:
    command = metrics_file_command("metrics.txt", ["sh", "-c", script])
    return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=30)


def test_the_wrapper_copies_every_line_and_keeps_the_exit_status(tmp_path: Path) -> None:
    script = (
        'for i in 1 2 3; do echo "GRYVIA_METRIC acc=0.$i step=$i" >> metrics.txt; done; '
        "echo GRYVIA_METRIC acc=0.75 >> metrics.txt; echo trained; exit 3"
    )
    done = _run(tmp_path, script)
    assert done.returncode == 3
    assert "trained" in done.stdout
    found = parse_metrics(done.stdout, "acc")
    assert found.reports == ((1, 0.1), (2, 0.2), (3, 0.3)) and found.last == 0.75


def test_the_wrapper_without_a_file_reports_nothing(tmp_path: Path) -> None:
    done = _run(tmp_path, "echo no metrics")
    assert done.returncode == 0 and parse_metrics(done.stdout, "acc").last is None


def test_the_wrapper_passes_sigterm_on_and_still_copies_the_file(tmp_path: Path) -> None:
    command = metrics_file_command(
        "metrics.txt",
        ["sh", "-c", "echo 'GRYVIA_METRIC acc=0.5 step=1' >> metrics.txt; exec sleep 60"],
    )
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    wait_for(lambda: (tmp_path / "metrics.txt").exists(), timeout=20, what="metrics.txt")
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 128 + signal.SIGTERM
    assert parse_metrics(out, "acc").reports == ((1, 0.5),)


def test_the_file_field_is_in_the_model() -> None:
    t = tuner(objective={"name": "loss", "goal": "minimize", "file": "out/m.txt"})
    assert isinstance(t, GryviaAutoTuner) and t.spec.objective.file == "out/m.txt"
