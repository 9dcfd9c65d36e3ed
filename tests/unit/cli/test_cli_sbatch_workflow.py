"""`gryvia sbatch convert a.sh b.sh` and `gryvia sbatch submit a.sh b.sh`: one workflow."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from gryvia_cli.kube import resources as r
from tests.unit.cli.fakes import FakeAccess
from tests.unit.cli.helpers import run
from tests.unit.sbatch.helpers import sbatch


def _pair(tmp_path: Path, dependency: str = "afterok:prep") -> list[str]:
    prep = tmp_path / "prep.sh"
    prep.write_bytes(sbatch("-J prep"))
    train = tmp_path / "train.sh"
    train.write_bytes(sbatch(f"--dependency={dependency}", "--gres=gpu:2"))
    return [str(prep), str(train)]


def test_convert_several_scripts_prints_the_configmaps_and_the_workflow(tmp_path: Path) -> None:
    scripts = _pair(tmp_path)
    result = run(["sbatch", "convert", *scripts, "--image", "img:1", "--name", "pipe"])
    assert result.exit_code == 0, result.output
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("ConfigMap", "pipe-prep-slurm-runtime"),
        ("ConfigMap", "pipe-train-slurm-runtime"),
        ("GryviaWorkflow", "pipe"),
    ]
    train = docs[2]["spec"]["steps"][1]
    assert (train["name"], train["dependsOn"], train["condition"]) == ("train", ["prep"], "afterok")
    assert "✓ workflow pipe: 2 steps" in result.stderr
    table = run(["sbatch", "convert", *scripts, "--image", "img:1", "-o", "table"])
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["STEP", "SCRIPT", "AFTER", "CONDITION", "GPUS", "IMAGE"]
    assert lines[2].split()[2:] == ["prep", "afterok", "2", "img:1"]
    as_json = json.loads(run(["sbatch", "convert", *scripts, "--image", "i", "-o", "json"]).stdout)
    assert as_json["workflow"]["metadata"]["name"] == "prep" and len(as_json["reports"]) == 2


def test_convert_refuses_an_unknown_dependency_with_exit_1_and_no_documents(
    tmp_path: Path,
) -> None:
    scripts = _pair(tmp_path, "afterok:12345")
    result = run(["sbatch", "convert", *scripts, "--image", "img:1"])
    assert result.exit_code == 1 and result.stdout == ""
    assert "--dependency=afterok:12345 names none of the scripts" in result.stderr


def test_name_needs_several_scripts(tmp_path: Path) -> None:
    result = run(["sbatch", "convert", _pair(tmp_path)[0], "--image", "i", "--name", "x"])
    assert result.exit_code != 0 and "two or more" in result.stderr


def test_submit_creates_the_configmaps_then_the_workflow_as_their_owner(tmp_path: Path) -> None:
    fake = FakeAccess()
    result = run(["sbatch", "submit", *_pair(tmp_path), "--image", "img:1", "-n", "ml"], fake)
    assert result.exit_code == 0, result.output
    assert result.stdout == "gryviaworkflow.gryvia.io/prep\n"
    assert [c for c in fake.calls if c[0] == "create"] == [
        ("create", "ConfigMap"), ("create", "ConfigMap"), ("create", "GryviaWorkflow"),
    ]  # fmt: skip
    assert ("patch", "ConfigMap") in fake.calls
    workflow = fake.get(r.WORKFLOW, "prep", "ml")
    assert workflow["spec"]["steps"][1]["dependsOn"] == ["prep"]


def test_submit_removes_the_configmaps_when_the_workflow_is_refused(tmp_path: Path) -> None:
    fake = FakeAccess()
    fake.forbidden.add("GryviaWorkflow")
    result = run(["sbatch", "submit", *_pair(tmp_path), "--image", "img:1", "-n", "ml"], fake)
    assert result.exit_code != 0
    assert fake.items(r.CONFIG_MAP, "ml") == []


def test_submit_creates_nothing_for_a_bad_import_or_one_script(tmp_path: Path) -> None:
    fake = FakeAccess()
    bad = run(["sbatch", "submit", *_pair(tmp_path, "afterok:x"), "--image", "i"], fake)
    assert bad.exit_code != 0 and "nothing was submitted" in bad.stderr
    one = run(["sbatch", "submit", _pair(tmp_path)[0], "--image", "i"], fake)
    assert one.exit_code != 0 and "gryvia submit --sbatch" in one.stderr
    assert not [c for c in fake.calls if c[0] == "create"]
