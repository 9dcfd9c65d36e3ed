"""Issue 21 part 2 against the sandbox, operator running with `--enable-autotuners`.

A tuner of 6 random trials, parallelism 2, maximizing `score`, submitted with
`gryvia tune submit`. Each trial is a `sh -c` command: it reports `score=1` at step 1, then
its parameter `x` (uniform 1..2) as its final value; trial 4 instead reports `score=0` at
step 1 and would sleep five minutes. With median early stopping (2 completed trials needed),
trial 4 is stopped (EarlyStopped, its job Cancelled) and the other five succeed. No more than
two trial jobs ever overlap (creation to completion), the status and `gryvia tune best` name
the trial with the largest reported x, and `gryvia tune status` lists every trial.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SandboxHandle
from tests.support.cli import run_gryvia
from tests.support.operator import OperatorProcess
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.sandbox]

SCRIPT = """
if [ "$(trial.index)" = 4 ]; then echo "GRYVIA_METRIC score=0 step=1"; sleep 300; fi
echo "GRYVIA_METRIC score=1 step=1"
sleep 1
echo "GRYVIA_METRIC score=$(parameters.x)"
"""


@pytest.fixture(scope="module")
def tuner_operator(sandbox: SandboxHandle, operator: OperatorProcess) -> Iterator[OperatorProcess]:
    """The session's operator (it runs with --enable-autotuners)."""
    yield operator


@pytest.fixture
def space(sandbox: SandboxHandle, tuner_operator: OperatorProcess) -> Iterator[str]:
    with sandbox.fresh_namespace("tune") as name:
        yield name


def gryvia(sandbox: SandboxHandle, tmp: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRYVIA_")}
    env |= {
        "KUBECONFIG": str(sandbox.kubeconfig),
        "GRYVIA_CONFIG_HOME": str(tmp / "config"),
        "NO_COLOR": "1",
    }
    done = run_gryvia(*args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _time(value: str) -> datetime:
    """A timestamp to the second (creationTimestamp has no fraction)."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).replace(microsecond=0)


def test_random_tuner_keeps_parallelism_finds_the_max_and_stops_a_poor_trial(
    sandbox: SandboxHandle, space: str, tmp_path: Path
) -> None:
    name = f"sweep-{uuid.uuid4().hex[:5]}"
    manifest = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAutoTuner",
        "metadata": {"name": name},
        "spec": {
            "jobTemplate": {
                "type": "training",
                "image": "none",
                "gpus": 0,
                "command": ["sh", "-c", SCRIPT],
            },
            "parameterSpace": [{"name": "x", "type": "uniform", "min": 1, "max": 2}],
            "searchAlgorithm": {"type": "random", "seed": 7},
            "objective": {"name": "score", "goal": "maximize"},
            "maxTrials": 6,
            "parallelism": 2,
            "earlyStopping": {"algorithm": "median", "minTrials": 2, "startStep": 1},
        },
    }
    file = tmp_path / "tuner.yaml"
    file.write_text(yaml.safe_dump(manifest))
    gryvia(sandbox, tmp_path, "tune", "submit", str(file), "-n", space)

    def finished() -> dict[str, Any] | None:
        found = sandbox.kubectl_json("get", "gryviaautotuner", "-n", space, name)
        st = dict(found.get("status") or {})
        return st if st.get("phase") in ("Succeeded", "Failed", "Invalid") else None

    st = wait_for(finished, timeout=240, what=f"tuner {name} finished")
    assert st["phase"] == "Succeeded", st
    trials = {t["index"]: t for t in st["trials"]}
    assert sorted(trials) == list(range(6))
    assert trials[4]["state"] == "EarlyStopped", trials[4]
    assert "median" in trials[4]["message"]
    assert trials[4]["value"] == 0
    assert {t["state"] for i, t in trials.items() if i != 4} == {"Succeeded"}

    jobs = sandbox.kubectl_json("get", "gryviaaijobs", "-n", space, "-l", f"gryvia.io/tuner={name}")
    by_name = {j["metadata"]["name"]: j for j in jobs["items"]}
    assert sorted(by_name) == sorted(f"{name}-t{i}" for i in range(6))
    assert by_name[f"{name}-t4"]["status"]["phase"] == "Cancelled"
    assert by_name[f"{name}-t4"]["metadata"]["labels"]["gryvia.io/tuner-trial"] == "4"

    # Never more than 2 trials at once: each job counts from creation to completion.
    spans = [
        (_time(j["metadata"]["creationTimestamp"]), _time(j["status"]["completionTime"]))
        for j in by_name.values()
    ]
    for start, _ in spans:
        overlapping = sum(1 for s, e in spans if s <= start < e)
        assert overlapping <= 2, spans
    assert st["peakRunning"] == 2

    # The best is the true maximum of the reported final values (x of each trial).
    reported = {i: float(t["parameters"]["x"]) for i, t in trials.items() if i != 4}
    assert {i: trials[i]["value"] for i in reported} == reported
    top = max(reported, key=lambda i: reported[i])
    assert st["best"]["index"] == top
    assert st["best"]["name"] == f"{name}-t{top}"
    assert st["best"]["value"] == reported[top]
    assert st["best"]["parameters"] == trials[top]["parameters"]

    best = json.loads(gryvia(sandbox, tmp_path, "tune", "best", name, "-n", space, "-o", "json"))
    assert best["name"] == f"{name}-t{top}" and best["value"] == reported[top]
    shown = gryvia(sandbox, tmp_path, "tune", "status", name, "-n", space)
    assert f"{name}-t{top}" in shown and "EarlyStopped" in shown
    assert f"x={trials[top]['parameters']['x']}" in shown


def test_a_tuner_reads_its_objective_from_a_metrics_file(
    sandbox: SandboxHandle, space: str, tmp_path: Path
) -> None:
    """`objective.file`: trials write their GRYVIA_METRIC lines to a file and print nothing;
    the status holds each trial's steps and final value from the file."""
    name = f"file-{uuid.uuid4().hex[:5]}"
    metrics = str(tmp_path / "$(tuner.name)-$(trial.index).txt")
    script = (
        'echo "GRYVIA_METRIC loss=9 step=1" >> "$GRYVIA_METRICS_FILE"; '
        'echo "GRYVIA_METRIC loss=$(parameters.x)" >> "$GRYVIA_METRICS_FILE"; echo done'
    )
    manifest = {
        "apiVersion": "gryvia.io/v1alpha1",
        "kind": "GryviaAutoTuner",
        "metadata": {"name": name},
        "spec": {
            "jobTemplate": {
                "type": "training",
                "image": "none",
                "gpus": 0,
                "command": ["sh", "-c", script],
            },
            "parameterSpace": [{"name": "x", "type": "choice", "values": ["3", "2"]}],
            "searchAlgorithm": {"type": "grid"},
            "objective": {"name": "loss", "goal": "minimize", "file": metrics},
            "maxTrials": 2,
            "parallelism": 2,
        },
    }
    file = tmp_path / "tuner.yaml"
    file.write_text(yaml.safe_dump(manifest))
    gryvia(sandbox, tmp_path, "tune", "submit", str(file), "-n", space)

    def finished() -> dict[str, Any] | None:
        found = sandbox.kubectl_json("get", "gryviaautotuner", "-n", space, name)
        st = dict(found.get("status") or {})
        return st if st.get("phase") in ("Succeeded", "Failed", "Invalid") else None

    st = wait_for(finished, timeout=120, what=f"tuner {name} finished")
    assert st["phase"] == "Succeeded", st
    trials = {t["index"]: t for t in st["trials"]}
    assert {i: (t["state"], t["value"], t["step"]) for i, t in trials.items()} == {
        0: ("Succeeded", 3, 1),
        1: ("Succeeded", 2, 1),
    }
    assert st["best"]["index"] == 1 and st["best"]["value"] == 2
