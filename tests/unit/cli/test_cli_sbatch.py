"""`gryvia sbatch convert|check` render through the one output module: the global `-o` (and
GRYVIA_OUTPUT) choose json, yaml, name or table like for every other command."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.unit.cli.helpers import run
from tests.unit.sbatch.helpers import sbatch


def _script(tmp_path: Path, name: str = "train.sh", *directives: str) -> Path:
    path = tmp_path / name
    path.write_bytes(sbatch(*(directives or ("-J train", "-N 2", "--gres=gpu:4"))))
    return path


def test_convert_follows_the_global_output_format(tmp_path: Path) -> None:
    script = str(_script(tmp_path))
    as_json = run(["-o", "json", "sbatch", "convert", script, "--image", "img:1"])
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.stdout)
    assert [job["metadata"]["name"] for job in data["jobs"]] == ["train"]
    assert data["report"]["jobName"] == "train"
    names = run(["-o", "name", "sbatch", "convert", script, "--image", "img:1"])
    assert names.exit_code == 0
    assert names.stdout == "configmap/train-slurm-runtime\ngryviaaijob.gryvia.io/train\n"
    table = run(["sbatch", "convert", script, "--image", "img:1"], GRYVIA_OUTPUT="table")
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["NAME", "TYPE", "GPUS", "IMAGE"]
    assert lines[1].split()[:2] == ["train", "training"] and lines[1].endswith("img:1")
    assert "2 x 4 any (8 GPUs)" in lines[1]
    default = run(["sbatch", "convert", script, "--image", "img:1"])
    docs = [doc for doc in yaml.safe_load_all(default.stdout) if doc]
    assert [doc["metadata"]["name"] for doc in docs] == ["train-slurm-runtime", "train"]
    assert "✓" in default.stderr and "✓" not in default.stdout


def test_convert_local_output_wins_over_the_global_one(tmp_path: Path) -> None:
    script = str(_script(tmp_path))
    result = run(["-o", "name", "sbatch", "convert", script, "--image", "i", "-o", "yaml"])
    assert result.exit_code == 0
    kinds = [doc["kind"] for doc in yaml.safe_load_all(result.stdout) if doc]
    assert kinds == ["ConfigMap", "GryviaAIJob"]


def test_refused_script_prints_no_jobs_in_any_format(tmp_path: Path) -> None:
    script = str(_script(tmp_path, "bad.sh", "--mem=1G", "--mem-per-cpu=1G"))
    for fmt in ("yaml", "name", "table"):
        result = run(["-o", fmt, "sbatch", "convert", script, "--image", "i"])
        assert result.exit_code == 1 and result.stdout == "", fmt
        assert "mutually exclusive" in result.stderr


def test_check_follows_the_global_output_format(tmp_path: Path) -> None:
    _script(tmp_path, "clean.sh", "-N 1")
    _script(tmp_path, "warn.sh", "--mail-type=END")
    _script(tmp_path, "bad.sh", "--mem=1G", "--mem-per-cpu=1G")
    (tmp_path / "notes.txt").write_bytes(b"echo no shebang\n")
    folder = str(tmp_path)
    summary = yaml.safe_load(run(["-o", "yaml", "sbatch", "check", folder]).stdout)
    assert (summary["total"], summary["clean"], summary["warnings"], summary["refused"]) == (
        3, 1, 1, 1,
    )  # fmt: skip
    as_json = json.loads(run(["sbatch", "check", folder], GRYVIA_OUTPUT="json").stdout)
    assert as_json == summary
    names = run(["-o", "name", "sbatch", "check", folder]).stdout.splitlines()
    assert names == [str(tmp_path / n) for n in ("bad.sh", "clean.sh", "warn.sh")]
    table = run(["sbatch", "check", folder]).stdout
    rows = {line.rsplit(None, 1)[0]: line.rsplit(None, 1)[1] for line in table.splitlines()[1:5]}
    assert rows == {"RESULT": "SCRIPTS", "converts cleanly": "1",
                    "converts with warnings": "1", "refused": "1"}  # fmt: skip
    assert "warn.sh" not in table
    wide = run(["-o", "wide", "sbatch", "check", folder]).stdout
    assert "warn.sh" in wide and "--mail-type" in wide
    assert run(["sbatch", "check", folder, "--details"]).stdout == wide
